#!/bin/sh
# Docker backend: a named volume of a plugin driver is host access unless
# the site policy lists the driver as safe.  A real volume plugin
# (tests/harness/volume-plugin.py, the Docker volume plugin protocol on a
# unix socket that podman reads through its containers.conf table
# [engine.volume_plugins]) backs its volumes with host directories; a
# volume created with it through POST /volumes/create is refused with the
# driver and options in the reason, and allowed by a site rule naming the
# driver.  A local volume with nfs options is refused too.
vp=$(mktemp -d /tmp/vigil-t0605.XXXXXX)
cleanup_extra='[ -f "$vp/vp.sock.pid" ] && kill "$(cat "$vp/vp.sock.pid")" 2>/dev/null; rm -rf "$vp"'
python3 "$(dirname "$0")/../harness/volume-plugin.py" "$vp/vp.sock" \
	"$vp/data" 2>"$vp/plugin.log" &
i=0
while [ ! -S "$vp/vp.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PODMAN_VOLUME_PLUGINS="vigiltest=$vp/vp.sock"
export PODMAN_VOLUME_PLUGINS
. "$(dirname "$0")/docker-lib.sh"
T=$tmp/task
hint="; allow with a policy rule of category host-access"
[ -S "$vp/vp.sock" ] || { echo "FAIL: the volume plugin did not start"; exit 1; }

out=$(api POST /v1.41/volumes/create -H 'Content-Type: application/json' \
	-d '{"Name":"pv","Driver":"vigiltest","DriverOpts":{"tier":"fast"}}' |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["Driver"])')
check "engine made the volume with the plugin" "$out" "vigiltest"
check "the plugin made its host directory" "$(ls "$vp/data")" "pv"

out=$("$DA" --task-dir "$T" --volume pv:/data run -c 'echo x >/data/f')
check "plugin volume refused" "$out" "state=DENIED exit=-1 signal=0 \
reason=host access refused: docker.volumes 'pv:/data': named volume 'pv' \
(driver 'vigiltest', options tier=fast) uses a driver the site policy does \
not list in safe_volume_drivers$hint"
out=$("$DA" --task-dir "$T" --mount type=volume,source=pv,target=/data \
	run -c 'echo x >/data/f')
check "plugin volume refused in docker.mounts" "$out" "state=DENIED exit=-1 \
signal=0 reason=host access refused: docker.mounts volume 'pv' at '/data': \
named volume 'pv' (driver 'vigiltest', options tier=fast) uses a driver the \
site policy does not list in safe_volume_drivers$hint"
out=$("$DA" --task-dir "$T" --mount type=volume,source=nv,target=/data,volume-driver=vigiltest \
	run -c 'echo x >/data/f')
check "a new volume of the plugin refused" "$out" "state=DENIED exit=-1 \
signal=0 reason=host access refused: docker.mounts volume 'nv' at '/data': \
volume (driver 'vigiltest', options none) uses a driver the site policy does \
not list in safe_volume_drivers$hint"
check "nothing written on refusal" "$(ls "$vp/data/pv")" ""

cat >"$tmp/other.yaml" <<'P'
version: 1
safe_volume_drivers:
  - driver: othervol
    reason: not the one in use
P
out=$("$DA" --task-dir "$T" --site-policy "$tmp/other.yaml" --volume pv:/data \
	run -- true)
case "$out" in
"state=DENIED "*"driver 'vigiltest'"*) echo "ok: another safe driver does not help" ;;
*) echo "FAIL: another safe driver: $out"; fail=1 ;;
esac

cat >"$tmp/site.yaml" <<'P'
version: 1
safe_volume_drivers:
  - driver: vigiltest
    reason: the site's plugin, volumes on node-local disk
P
out=$("$DA" --task-dir "$T" --site-policy "$tmp/site.yaml" --volume pv:/data \
	run -c 'echo through >/data/f')
check "allowed when the site lists the driver" "$out" \
	"state=SUCCEEDED exit=0 signal=0 reason="
check "the plugin's volume is a host directory" "$(cat "$vp/data/pv/f")" \
	"through"

printf 'safe_volume_drivers:\n  - driver: local\n    reason: r\n' \
	>"$tmp/bad.yaml"
out=$("$DA" --task-dir "$T" --site-policy "$tmp/bad.yaml" --volume pv:/data \
	run -- true 2>&1)
check "a bad site policy fails the attempt" "$out" "error: docker: site \
policy $tmp/bad.yaml:2:5: volume driver 'local' cannot be listed: its \
volumes are judged by their options (bind, nfs, a device)"
out=$("$DA" --task-dir "$T" --site-policy "$tmp/missing.yaml" \
	--volume pv:/data run -- true 2>&1)
case "$out" in
"error: docker: site policy: "*"missing.yaml"*) echo "ok: a missing named site policy fails" ;;
*) echo "FAIL: missing site policy: $out"; fail=1 ;;
esac

# A local volume with network file system options.
api POST /v1.41/volumes/create -H 'Content-Type: application/json' \
	-d '{"Name":"nf","Driver":"local","DriverOpts":{"type":"nfs","o":"addr=127.0.0.1","device":":/export"}}' \
	>/dev/null
out=$("$DA" --task-dir "$T" --site-policy "$tmp/site.yaml" --volume nf:/n \
	run -- true)
check "local nfs volume refused" "$out" "state=DENIED exit=-1 signal=0 \
reason=host access refused: docker.volumes 'nf:/n': named volume 'nf' \
(driver 'local', options device=:/export o=addr=127.0.0.1 type=nfs) mounts \
':/export' as file system type 'nfs'$hint"

# With the plugin gone the engine cannot tell what the volume is: refused.
kill "$(cat "$vp/vp.sock.pid")"
sleep 0.3
out=$("$DA" --task-dir "$T" --site-policy "$tmp/other.yaml" --volume pv:/data \
	run -- true)
case "$out" in
"state=DENIED exit=-1 signal=0 reason=host access refused: docker.volumes 'pv:/data': named volume 'pv' "*)
	echo "ok: plugin volume refused with the plugin gone" ;;
*) echo "FAIL: plugin gone: $out"; fail=1 ;;
esac
check "no container was created" "$(vigil_containers)" ""
exit $fail
