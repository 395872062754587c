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
# Debian's Node.js and npm when the machine has none (a machine with
# another Node.js keeps it).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	"$top/scripts/deps.sh" nodejs npm >/dev/null 2>&1 || true
fi
command -v node >/dev/null || skip "node is not installed"
command -v npm >/dev/null || skip "npm is not installed"
# The SDKs' HTTP client (undici) needs the global File of Node.js 20+;
# Debian 12's Node.js is 18.
[ "$(node -p 'typeof File' 2>/dev/null)" = function ] ||
    skip "node $(node --version) has no global File, which the SDKs' undici needs (Node.js 20 or later)"

# installed NAME VERSION: true when SDK holds that version.
installed() {
	[ "$(node -p "require('$SDK/node_modules/$1/package.json').version" \
	    2>/dev/null)" = "$2" ]
}
if ! installed @daytonaio/sdk $DAYTONA_SDK ||
    ! installed @vercel/sandbox $VERCEL_SDK; then
	# Into a fresh directory moved into place whole, so that an
	# interrupted install is never taken for a cached one.
	mkdir -p "$(dirname "$SDK")"
	new=$(mktemp -d "$SDK.new.XXXXXX")
	echo '{"private": true}' >"$new/package.json"
	if ! npm install --prefix "$new" --no-audit --no-fund \
	    --ignore-scripts --loglevel=error \
	    "@daytonaio/sdk@$DAYTONA_SDK" "@vercel/sandbox@$VERCEL_SDK" \
	    >"$W/npm.log" 2>&1; then
		rm -rf "$new"
		# npm's first error lines say why (its last names its log).
		why=$(grep -m 3 \
		    '^npm ERR! \(code\|errno\|request\|network\|[0-9]\{3\}\)' \
		    "$W/npm.log" | sed 's/^npm ERR! //' | tr '\n' ' ')
		[ -n "$why" ] || why=$(tail -n 1 "$W/npm.log")
		skip "npm install of @daytonaio/sdk@$DAYTONA_SDK and" \
		    "@vercel/sandbox@$VERCEL_SDK failed: $why"
	fi
	rm -rf "$SDK"
	mv "$new" "$SDK"
fi
installed @daytonaio/sdk $DAYTONA_SDK || fail "the daytona SDK install \
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
