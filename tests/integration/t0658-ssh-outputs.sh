#!/bin/sh
# ssh: outputs come back over SFTP from the remote attempt directory
# (the task's directory there) before it is removed: globs with their
# relative paths, a matched directory whole, the wrapper's own files and
# symbolic links left behind; then listed by vigil status --json.
. "$(dirname "$0")/ssh-lib.sh"

manifest "$tmp/o.yaml" 'command: |' \
    '  echo r >r.csv; mkdir -p plots/deep; echo p >plots/deep/p.txt' \
    '  echo n >notme.bin; ln -s /etc/hostname link.csv' \
    'outputs:' '  paths: ["*.csv", "plots", "status"]'
vrun "$tmp/o.yaml"
check "run" "$rc" 0
d=$(task_dir)
check "collected" "$(cd "$d/outputs" && find . -type f | sort |
    tr '\n' ' ')" "./plots/deep/p.txt ./r.csv "
check "content" "$(cat "$d/outputs/plots/deep/p.txt")" p
check "listed by status" "$("$VIGIL" status --json last | python3 -c '
import json, sys
o = json.load(sys.stdin)["tasks"][0]["outputs"]
print(" ".join(sorted(f["path"] for f in o["files"])))')" \
    "plots/deep/p.txt r.csv"
check "remote dir removed" "$(ls -A "$tmp/remote")" ""
exit $fail
