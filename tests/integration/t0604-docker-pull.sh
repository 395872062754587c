#!/bin/sh
# Docker backend: images missing locally are pulled through
# POST /images/create from a private registry on loopback; pull policies
# never, missing and always; a pull error carries the registry's reason.
. "$(dirname "$0")/docker-lib.sh"
T=$tmp/task
cleanup_extra='"$top/tests/harness/docker-registry-down" "$tmp/reg"'
if ! "$top/tests/harness/docker-registry-up" "$tmp/reg" "$tmp/pm" \
    >"$tmp/reg.env" 2>"$tmp/reg.log"; then
	echo "registry could not start:"; cat "$tmp/reg.log"; exit 1
fi
. "$tmp/reg.env"
img=$REGISTRY_IMAGE

err=$("$DA" --task-dir "$T" --image "$img" --pull never run -- true 2>&1)
check "never: not pulled" "$err" "error: docker: image '$img' is not \
present and docker.pull is 'never' (use 'missing' or 'always' to pull it)"

out=$("$DA" --task-dir "$T" --image "$img" run -c 'echo from registry')
check "missing: pulled, then run" "$out" \
	"state=SUCCEEDED exit=0 signal=0 reason="
check "pulled image ran" "$(cat "$T/stdout")" "from registry"
check "image now local" "$(api GET "/v1.41/images/$img/json" -o /dev/null \
	-w '%{http_code}')" "200"

out=$("$DA" --image "$img" --pull always prepare)
check "always: prepare pulls" "$out" "prepared"

bad=127.0.0.1:$REGISTRY_PORT/absent:9
err=$("$DA" --task-dir "$T" --image "$bad" run -- true 2>&1)
case "$err" in
"error: docker: pulling image '$bad': "*"manifest unknown"*)
	echo "ok: pull error names the image and the registry's reason" ;;
*)	echo "FAIL: pull error: $err"; fail=1 ;;
esac
exit $fail
