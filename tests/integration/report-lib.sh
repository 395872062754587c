# report-lib.sh - sourced by the report tests: headless Chromium (Debian's
# chromium, installed through scripts/deps.sh) rendering a report page.
#   render FILE OUT [BUDGET_MS]  DOM after the scripts ran in OUT.dom,
#                                console and browser log in OUT.log; fails
#                                the test on a JavaScript error
#   shoot FILE PNG [HEIGHT]      a screenshot of the page
# A fresh profile per call, and every background service off: the machine
# has no network and Chromium must not try to reach one.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
"$REPO/scripts/deps.sh" chromium >/dev/null 2>&1 ||
    { echo "skipped: chromium could not be installed"; exit 77; }
CHROMIUM=$(command -v chromium) ||
    { echo "skipped: no chromium after scripts/deps.sh"; exit 77; }
ARTEFACTS=${ARTEFACTS:-$REPO/build/test-artefacts}
mkdir -p "$ARTEFACTS"

chromium_run() {
	prof=$(mktemp -d "$W/chrome-XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
	    --disable-background-networking --disable-component-update \
	    --disable-sync --no-first-run --disable-default-apps \
	    --user-data-dir="$prof" "$@"
	rc=$?
	rm -rf "$prof"
	return $rc
}

render() {
	chromium_run --enable-logging=stderr --v=0 \
	    --virtual-time-budget="${3:-5000}" --dump-dom "file://$1" \
	    >"$2.dom" 2>"$2.log" || fail "chromium failed on $1: $(tail -5 "$2.log")"
	# Console messages of the page: errors and uncaught exceptions.
	if grep -E 'CONSOLE\(|Uncaught' "$2.log" | grep -v 'Failed to connect to the bus' |
	    grep -Eqi 'error|uncaught'; then
		fail "JavaScript errors in $1: $(grep -E 'CONSOLE|Uncaught' "$2.log" | head -5)"
	fi
	grep -q 'data-rendered="ok"' "$2.dom" ||
	    fail "the page did not finish drawing: $(grep -o 'report script error[^<]*' "$2.dom" | head -3)"
}

shoot() {
	chromium_run --virtual-time-budget=5000 --hide-scrollbars \
	    --window-size=1400,"${3:-1800}" --screenshot="$2" "file://$1" \
	    >/dev/null 2>&1 || fail "screenshot of $1 failed"
	[ -s "$2" ] || fail "no screenshot in $2"
}
