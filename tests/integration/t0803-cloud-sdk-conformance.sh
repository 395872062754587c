#!/bin/sh
# The cloud fakes against the providers' own TypeScript SDKs from the npm
# registry: @daytonaio/sdk against tests/harness/fake-daytona.py and
# @vercel/sandbox against tests/harness/fake-vercel.py, each running its
# create / list / exec / logs / delete calls (tests/harness/sdk/*.mjs), so
# the fakes are shown to speak the providers' protocols and not only
# vigil's idea of them.  The SDKs are installed with npm, pinned, into
# build/sdk-npm (VIGIL_SDK_CACHE), outside the tracked tree; a second run
# reuses that install.  Modal's SDKs are not in the npm registry (the npm
# package "modal" is an unrelated widget), so fake-modal.py is checked
# against the published proto only (t0802).
set -u
PROVIDER=daytona
. "$(dirname "$0")/cloud-lib.sh"
DAYTONA_SDK=0.218.0
VERCEL_SDK=3.5.0
SDK=${VIGIL_SDK_CACHE:-$top/build/sdk-npm}

skip() { echo "skipped: $*"; exit 77; }
. "$top/tests/integration/sdk-lib.sh"
sdk_need_node
sdk_install "$SDK" "@daytonaio/sdk@$DAYTONA_SDK" "@vercel/sandbox@$VERCEL_SDK"
sdk_installed "$SDK" @daytonaio/sdk $DAYTONA_SDK || fail "the daytona SDK install \
in $SDK does not hold $DAYTONA_SDK"

# sdk NAME ARGS...: runs tests/harness/sdk/NAME.mjs; fails with its
# output and the requests the fake saw.
sdk() {
	name=$1
	shift
	if ! timeout 120 node "$top/tests/harness/sdk/$name.mjs" "$SDK" "$@" \
	    >"$W/$name.out" 2>&1; then
		fail "$name SDK against the fake:
$(cat "$W/$name.out")
requests:
$(cat "$FD/requests")"
	fi
	cat "$W/$name.out"
}

# cloud-lib.sh's start_fake: a fresh fake of $PROVIDER with fake_args,
# FD its dir, EP its API URL.
start_fake
sdk daytona "$EP" "$TOKEN"
expect_eq "daytona steps" 13 "$(grep -c '^ok ' "$W/daytona.out")"
# The SDK really went through the toolbox of the sandbox it made.
grep -q '^GET /toolbox/.*/command/.*/logs 200$' "$FD/requests" ||
    fail "daytona: no logs request: $(cat "$FD/requests")"
# A wrong key is refused the way the SDK reports it.
if timeout 60 node "$top/tests/harness/sdk/daytona.mjs" "$SDK" \
    "$EP" wrong >"$W/bad.out" 2>&1; then
	fail "daytona SDK accepted a wrong key"
fi
grep -qi 'invalid credentials\|401\|unauthorized' "$W/bad.out" ||
    fail "daytona: wrong key: $(cat "$W/bad.out")"

PROVIDER=vercel
fake_args() { echo --token "$TOKEN" --team team_sdk --project prj_sdk; }
start_fake
sdk vercel "${EP%/api}" "$TOKEN" team_sdk prj_sdk
expect_eq "vercel steps" 11 "$(grep -c '^ok ' "$W/vercel.out")"
grep -q '^POST /api/v3/sandboxes?teamId=team_sdk 200$' "$FD/requests" ||
    fail "vercel: no create request: $(cat "$FD/requests")"
if timeout 60 node "$top/tests/harness/sdk/vercel.mjs" "$SDK" \
    "${EP%/api}" wrong team_sdk prj_sdk >"$W/bad.out" 2>&1; then
	fail "vercel SDK accepted a wrong token"
fi
grep -qi 'forbidden\|not authorized\|403' "$W/bad.out" ||
    fail "vercel: wrong token: $(cat "$W/bad.out")"
stop_fake
pass
