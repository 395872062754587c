#!/bin/sh
# Docker backend, GPUs, against the real podman API (no GPU here): what
# podman's Docker-compatible endpoint does with the GPU requests an
# Engine API client can send, recorded as observed (docs/gpus.md):
# HostConfig.DeviceRequests, in the DeviceIDs and in the Count form, is
# accepted (201, start 204), dropped (inspect shows none) and the
# container gets no device; CDI names in HostConfig.Devices are refused
# (at start without PathInContainer, at create with it).  Then vigil: a
# run of one-GPU tasks through the docker backend sends its own
# DeviceRequests, which the host-access judge lets through (the tasks
# run, VIGIL_GPUS names the GPU the scheduler gave each), while another
# device request beside it (docker.devices) is refused before any
# container exists.
. "$(dirname "$0")/docker-lib.sh"
IMG=localhost/vigil-test
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# code BODY-FILE METHOD PATH [curl args]: the HTTP status, body in FILE.
code() {
	f=$1
	shift
	m=$1 p=$2
	shift 2
	curl -s -o "$f" -w '%{http_code}' --unix-socket "$tmp/pm/podman.sock" \
	    -X "$m" "$@" "http://d$p"
}
create() {
	code "$tmp/body" POST "/v1.41/containers/create?name=$1" \
	    -H 'Content-Type: application/json' -d "$2"
}
cmd='"Cmd":["sh","-c","ls /dev | grep -c nvidia; echo ${CUDA_VISIBLE_DEVICES-unset}"]'

# DeviceIDs form, as vigil sends it for assigned GPUs.
check "ids create" "$(create gids '{"Image":"'$IMG'",'"$cmd"',"HostConfig":{"DeviceRequests":[{"Driver":"nvidia","Count":0,"DeviceIDs":["1","3"],"Capabilities":[["gpu"]],"Options":{}}]}}')" 201
check "ids start" "$(code "$tmp/body" POST /v1.41/containers/gids/start)" 204
check "ids wait" "$(code "$tmp/body" POST /v1.41/containers/gids/wait)" 200
check "ids exit (grep found no nvidia node)" "$(json 'd["StatusCode"]' <"$tmp/body")" 0
api GET "/v1.41/containers/gids/logs?stdout=1" --output "$tmp/log"
check "ids: no device, no variable" "$(tr -cd '[:print:]\n' <"$tmp/log" |
    tr '\n' ' ')" "0 unset "
api GET /v1.41/containers/gids/json >"$tmp/insp"
check "ids dropped from the container" \
    "$(json 'd["HostConfig"].get("DeviceRequests")' <"$tmp/insp")" None

# Count form (no assignment).
check "count create" "$(create gcnt '{"Image":"'$IMG'","Cmd":["true"],"HostConfig":{"DeviceRequests":[{"Driver":"nvidia","Count":2,"DeviceIDs":[],"Capabilities":[["gpu"]],"Options":{}}]}}')" 201
check "count start" "$(code "$tmp/body" POST /v1.41/containers/gcnt/start)" 204

# CDI names: no CDI spec here, so podman cannot resolve them.
check "cdi create" "$(create gcdi '{"Image":"'$IMG'","Cmd":["true"],"HostConfig":{"Devices":[{"PathOnHost":"nvidia.com/gpu=0","PathInContainer":"","CgroupPermissions":"rwm"}]}}')" 201
check "cdi start refused" "$(code "$tmp/body" POST /v1.41/containers/gcdi/start)" 500
check "cdi start message" "$(json 'd["message"]' <"$tmp/body")" \
    "setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=0::rwm"
check "cdi with a container path" "$(create gcdi2 '{"Image":"'$IMG'","Cmd":["true"],"HostConfig":{"Devices":[{"PathOnHost":"nvidia.com/gpu=all","PathInContainer":"nvidia.com/gpu=all","CgroupPermissions":"rwm"}]}}')" 500
check "cdi create message" "$(json 'd["message"]' <"$tmp/body")" \
    "container create: stat nvidia.com/gpu=all: no such file or directory"
for c in gids gcnt gcdi; do
	api DELETE "/v1.41/containers/$c?force=1" >/dev/null
done

# vigil: its own GPU request passes the judge; each task sees its GPU.
cat >"$tmp/g.yaml" <<Y
version: 1
name: docker-gpus
backend: docker
image: $IMG
matrix:
  i: [0, 1, 2]
resources:
  gpus: 1
command: ["sh", "-c", "echo \$VIGIL_GPUS \${CUDA_VISIBLE_DEVICES-unset}"]
Y
CUDA_VISIBLE_DEVICES=0,1 "$VIGIL" run -q "$tmp/g.yaml" >"$tmp/out" 2>&1
check "gpu run exit" "$?" 0
id=$("$VIGIL" status --json | json 'd["runs"][0]["id"]')
dir=$("$VIGIL" status "$id" --json | json 'd["dir"]')
check "each task saw one assigned GPU, no CUDA_VISIBLE_DEVICES" \
    "$(cat "$dir"/tasks/*/stdout | sort | uniq -c | awk '{print $2, $3}' |
    sort -u | tr '\n' ' ')" "0 unset 1 unset "
check "gpus recorded per attempt" "$("$VIGIL" status "$id" --json |
    json '",".join(sorted(set(t["gpus"] for t in d["tasks"])))')" "0,1"

# Another device request beside it is host access: refused, nothing run.
cat >>"$tmp/g.yaml" <<'Y'
docker:
  devices: ["/dev/null:/dev/gpu-too"]
Y
CUDA_VISIBLE_DEVICES=0,1 "$VIGIL" run -q "$tmp/g.yaml" >"$tmp/out" 2>&1
check "device beside gpus exit (denied)" "$?" 3
id=$("$VIGIL" status --json | json 'd["runs"][0]["id"]')
"$VIGIL" status "$id" --json >"$tmp/st"
check "device beside gpus denied" "$(json '" ".join(sorted(set(t["state"] for t in d["tasks"])))' <"$tmp/st")" DENIED
grep -q "docker.devices '/dev/null' passes a host device" "$tmp/st" ||
    { echo "FAIL: reason: $(cat "$tmp/st")"; fail=1; }
grep -q "DeviceRequests" "$tmp/st" &&
    { echo "FAIL: vigil's own GPU request judged: $(cat "$tmp/st")"; fail=1; }
check "no container was created" "$(vigil_containers "vigil.run=$id")" ""
exit $fail
