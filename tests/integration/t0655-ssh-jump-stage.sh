#!/bin/sh
# ssh: a run through a jump host (ssh.proxy_jump: the same private sshd
# acts as the jump host, so each connection is two logins: the jump, then
# the target through its direct-tcpip channel), and staging of files and
# directories in (stage_in) and out (stage_out) over SFTP.
. "$(dirname "$0")/ssh-lib.sh"

logins() {
	grep -c 'Accepted publickey' "$SSHD_DIR/sshd.log"
}

manifest "$tmp/direct.yaml" 'command: echo direct'
before=$(logins)
vrun "$tmp/direct.yaml"
check "direct: task" "$(task_line)" "SUCCEEDED exit=0 signal=None reason="
check "direct: one login" "$(( $(logins) - before ))" 1

manifest "$tmp/jump.yaml" 'command: echo "via jump"; exit 6'
sed -i "s/^ssh:/ssh:\n  proxy_jump: $SSHD_USER@127.0.0.1:$SSHD_PORT/" \
	"$tmp/jump.yaml"
before=$(logins)
vrun "$tmp/jump.yaml"
check "jump: task" "$(task_line)" "FAILED exit=6 signal=None reason=exit code 6"
check "jump: output" "$(cat "$(task_dir)/stdout")" "via jump"
check "jump: two logins (jump host, then target)" "$(( $(logins) - before ))" 2

manifest "$tmp/badjump.yaml" 'command: true'
sed -i "s/^ssh:/ssh:\n  proxy_jump: $SSHD_USER@127.0.0.1:1\n  connect_timeout: 1/" \
	"$tmp/badjump.yaml"
vrun "$tmp/badjump.yaml"
check "jump host down" "$(task_line)" "BACKEND_ERROR exit=None signal=None \
reason=ssh: connecting to jump host 127.0.0.1:1: Connection refused (gave up \
reconnecting)"

# Staging: a file and a tree in, a file and a tree out.
printf 'in file\n' >"$tmp/in.txt"
mkdir -p "$tmp/indir/sub"
printf 'a\n' >"$tmp/indir/a"
printf 'b\n' >"$tmp/indir/sub/b"
manifest "$tmp/stage.yaml" \
	'command: cat in.txt indir/a indir/sub/b; mkdir -p outdir/deep; echo x >outdir/deep/x; echo r >result.txt'
sed -i "s#^ssh:#ssh:\n  stage_in: [$tmp/in.txt, $tmp/indir]\n  stage_out: [result.txt, outdir]#" \
	"$tmp/stage.yaml"
vrun "$tmp/stage.yaml"
check "stage: task" "$(task_line)" "SUCCEEDED exit=0 signal=None reason="
d=$(task_dir)
check "stage_in arrived" "$(cat "$d/stdout")" "in file
a
b"
check "stage_out: file" "$(cat "$d/result.txt")" "r"
check "stage_out: tree" "$(cat "$d/outdir/deep/x")" "x"
check "stage: remote dir removed" "$(ls -A "$tmp/remote")" ""

sed -i 's#stage_out: \[result.txt, outdir\]#stage_out: [absent.txt]#' \
	"$tmp/stage.yaml"
vrun "$tmp/stage.yaml"
run_id=$("$VIGIL" status --json last | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
check "stage_out missing: task fails" "$(task_line)" "FAILED exit=0 \
signal=None reason=ssh.stage_out: '$tmp/remote/$run_id/0/1/absent.txt': no \
such file"
check "stage_out missing: remote dir kept" "$(ls "$tmp/remote/$run_id/0/1" |
	tr '\n' ' ')" "env err in.txt indir out outdir pid result.txt run.sh status tpid usage "
exit $fail
