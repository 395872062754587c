#!/bin/sh
# Docker backend: host access is refused before any container exists,
# with the reason: host binds, a named volume that the engine binds to a
# host directory (found through GET /volumes/NAME), the engine socket,
# privileged mode, host namespaces, devices, added capabilities.  A policy
# rule of category host-access, or auto-approve, lets it through.
. "$(dirname "$0")/docker-lib.sh"
T=$tmp/task
mkdir -p "$tmp/hostdir"
hint="; allow with a policy rule of category host-access"

out=$("$DA" --task-dir "$T" --volume /etc:/x:ro run -- cat /x/hostname)
check "host bind refused" "$out" "state=DENIED exit=-1 signal=0 \
reason=host access refused: docker.volumes '/etc:/x:ro' binds host path \
'/etc'$hint"

out=$("$DA" --task-dir "$T" --volume ./rel:/x --volume /var/run/docker.sock:/s \
	run -- true)
check "two findings" "$out" "state=DENIED exit=-1 signal=0 \
reason=host access refused: docker.volumes './rel:/x' binds host path \
'./rel' (and more)$hint"

# The REFERENCE recipe: a local volume bound to a host directory.
api POST /v1.41/volumes/create -H 'Content-Type: application/json' \
	-d '{"Name":"hv","Driver":"local","DriverOpts":{"type":"none","o":"bind","device":"'"$tmp/hostdir"'"}}' \
	>/dev/null
out=$("$DA" --task-dir "$T" --volume hv:/data run -c 'echo x >/data/f')
check "named volume bound to host dir refused" "$out" "state=DENIED exit=-1 \
signal=0 reason=host access refused: docker.volumes 'hv:/data': named \
volume 'hv' (driver 'local', options device=$tmp/hostdir o=bind type=none) \
binds host directory '$tmp/hostdir'$hint"
check "nothing written on refusal" "$(ls "$tmp/hostdir")" ""

out=$("$DA" --task-dir "$T" --volume plain:/data run -c \
	'echo in-volume >/data/f && cat /data/f')
check "plain named volume allowed" "$out" \
	"state=SUCCEEDED exit=0 signal=0 reason="

# With a host-access rule the same volume works and does reach the host,
# which is why the check matters.
out=$("$DA" --task-dir "$T" --allow-host-access --volume hv:/data run -c \
	'echo through >/data/f')
check "allowed by a host-access rule" "$out" \
	"state=SUCCEEDED exit=0 signal=0 reason="
check "named volume wrote on the host" "$(cat "$tmp/hostdir/f")" "through"

out=$("$DA" --task-dir "$T" --policy auto-approve --volume "$tmp/hostdir:/h:ro" \
	run -- cat /h/f)
check "auto-approve lets a host bind through" "$out" \
	"state=SUCCEEDED exit=0 signal=0 reason="
check "host bind read" "$(cat "$T/stdout")" "through"

for opt in "--privileged" "--network host" "--pid-mode host" \
    "--ipc-mode host" "--device /dev/fuse" "--cap-add SYS_ADMIN"; do
	# shellcheck disable=SC2086
	out=$("$DA" --task-dir "$T" $opt run -- true)
	case "$out" in
	"state=DENIED exit=-1 signal=0 reason=host access refused: docker."*"$hint")
		echo "ok: $opt refused" ;;
	*)	echo "FAIL: $opt: $out"; fail=1 ;;
	esac
done
out=$("$DA" --task-dir "$T" --policy auto-deny --cap-add NET_RAW run -- true)
check "cap-add reason" "$out" "state=DENIED exit=-1 signal=0 reason=host \
access refused: docker.cap_add 'NET_RAW' adds a capability$hint"

check "no container was created" "$(vigil_containers)" ""
exit $fail
