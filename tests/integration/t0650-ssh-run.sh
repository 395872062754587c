#!/bin/sh
# ssh backend against a real sshd on loopback: exit codes, stdout and
# stderr kept apart, hostile env values and argv passed verbatim, the
# remote working dir, matrix tasks, the remote dir removed afterwards,
# validation and doctor.
. "$(dirname "$0")/ssh-lib.sh"

manifest "$tmp/ok.yaml" \
	'command: printf "o1\n"; printf "e1\n" >&2; printf "o2\n"; printf "e2\n" >&2'
vrun "$tmp/ok.yaml"
check "success: vigil exit status" "$rc" 0
check "success: task" "$(task_line)" "SUCCEEDED exit=0 signal=None reason="
check "stdout" "$(cat "$(task_dir)/stdout")" "o1
o2"
check "stderr" "$(cat "$(task_dir)/stderr")" "e1
e2"

manifest "$tmp/fail.yaml" 'command: echo bye; exit 4'
vrun "$tmp/fail.yaml"
check "exit 4: vigil exit status" "$rc" 1
check "exit 4: task" "$(task_line)" "FAILED exit=4 signal=None reason=exit code 4"
check "exit 4: stdout" "$(cat "$(task_dir)/stdout")" "bye"

# Values no shell may interpret: quotes, $(), backticks, newlines, ;.
manifest "$tmp/env.yaml" \
	'env:' \
	"  HOSTILE: \"it's \$(touch $tmp/pwned) \`id\` ; a\\nb \\\"q\\\" \\\\ \$HOME\"" \
	'  EMPTY: ""' \
	'command: ["/bin/sh", "-c", "printf \"%s|\" \"$HOSTILE\" \"$EMPTY\" \"$VIGIL_TASK_INDEX\" \"$VIGIL_ATTEMPT\"; pwd; echo \"$VIGIL_TASK_DIR\"; ls -l env | cut -c1-10", "ignored; rm -rf /"]'
vrun "$tmp/env.yaml"
check "env: task" "$(task_line)" "SUCCEEDED exit=0 signal=None reason="
run_id=$("$VIGIL" status --json last | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
rdir=$tmp/remote/$run_id/0/1
check "env: values verbatim, cwd is the remote attempt dir" \
	"$(cat "$(task_dir)/stdout")" "it's \$(touch $tmp/pwned) \`id\` ; a
b \"q\" \\ \$HOME||0|1|$rdir
$rdir
-rw-------"
check "env: nothing ran from a value" "$(ls "$tmp/pwned" 2>&1)" \
	"ls: cannot access '$tmp/pwned': No such file or directory"
check "remote dir removed" "$(ls -A "$tmp/remote")" ""

manifest "$tmp/argv.yaml" 'command: ["/bin/echo", "a  b", "$HOME", ";", "it'"'"'s"]' \
	'workdir: /tmp'
vrun "$tmp/argv.yaml"
check "argv: verbatim" "$(cat "$(task_dir)/stdout")" 'a  b $HOME ; it'"'"'s'

manifest "$tmp/wd.yaml" 'command: pwd' 'workdir: /usr/share'
vrun "$tmp/wd.yaml"
check "workdir" "$(cat "$(task_dir)/stdout")" "/usr/share"

manifest "$tmp/matrix.yaml" 'command: echo "n=${{ matrix.n }}"; exit ${{ matrix.n }}' \
	'matrix:' '  n: [0, 2, 5]'
vrun -j 3 "$tmp/matrix.yaml"
check "matrix: three tasks" "$(task_line 0); $(task_line 1); $(task_line 2)" \
	"SUCCEEDED exit=0 signal=None reason=; FAILED exit=2 signal=None reason=exit code 2; FAILED exit=5 signal=None reason=exit code 5"
check "matrix: outputs" "$(cat "$(task_dir 0)/stdout" "$(task_dir 1)/stdout" \
	"$(task_dir 2)/stdout")" "n=0
n=2
n=5"

# Remote trouble: a port nobody listens on.
manifest "$tmp/down.yaml" 'command: true'
sed -i "s/port: $SSHD_PORT/port: 1/" "$tmp/down.yaml"
sed -i 's/^ssh:/ssh:\n  connect_timeout: 1/' "$tmp/down.yaml"
# Judged before anything is recorded: this host cannot run it (exit 6).
vrun "$tmp/down.yaml"
check "unreachable host: exit" "$rc" 6
check "unreachable host: said" "$(sed -n 2p "$tmp/run.err")" \
    "  ssh: host '127.0.0.1' port 1 is unreachable from here (Connection refused; checked for 3 s)"

# Authentication: a key the server does not know.
ssh-keygen -q -t ed25519 -N '' -f "$tmp/other_key"
manifest "$tmp/auth.yaml" 'command: true'
sed -i "s#identity: .*#identity: $tmp/other_key#" "$tmp/auth.yaml"
vrun "$tmp/auth.yaml"
check "key refused" "$(task_line)" "BACKEND_ERROR exit=None signal=None \
reason=ssh: $SSHD_USER@127.0.0.1 refused every key offered (identity \
'$tmp/other_key', no ssh-agent)"

# Validation.
cat >"$tmp/bad.yaml" <<YAML
version: 1
name: bad
backend: ssh
command: true
ssh:
  proxy_jump: "a@b:x"
  identity: $tmp/none
  known_hosts: $tmp/no_known_hosts
  stage_in: [$tmp/absent]
YAML
out=$("$VIGIL" validate "$tmp/bad.yaml" 2>&1)
check "validate" "$out" "$tmp/bad.yaml:6:3: error: ssh.host: required by backend 'ssh' (the remote host name or address)
    6 |   proxy_jump: \"a@b:x\"
      |   ^
$tmp/bad.yaml:6:3: error: ssh.proxy_jump: 'a@b:x': port must be 1..65535
    6 |   proxy_jump: \"a@b:x\"
      |   ^
$tmp/bad.yaml:7:3: error: ssh.identity: '$tmp/none': No such file or directory
    7 |   identity: $tmp/none
      |   ^
$tmp/bad.yaml:8:3: error: ssh.known_hosts: '$tmp/no_known_hosts': No such file or directory (with ssh.host_key: strict every host key would be refused)
    8 |   known_hosts: $tmp/no_known_hosts
      |   ^
$tmp/bad.yaml:9:14: error: ssh.stage_in: '$tmp/absent': No such file or directory
    9 |   stage_in: [$tmp/absent]
      |              ^"

out=$("$VIGIL" doctor 2>&1 | grep '^ssh:')
check "doctor" "$out" "ssh: ok (libssh $(pkg-config --modversion libssh); ssh-agent not set (SSH_AUTH_SOCK unset: key files only))"
exit $fail
