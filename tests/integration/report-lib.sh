# report-lib.sh - sourced by the report tests: headless Chromium (Debian's
# chromium, installed through scripts/deps.sh) rendering a report page.
#   render FILE OUT [BUDGET_MS]  DOM after the scripts ran in OUT.dom,
#                                console and browser log in OUT.log; fails
#                                the test on a JavaScript error
#   shoot FILE PNG [HEIGHT]      a screenshot of the page
#   probe FILE OUT [BUDGET_MS]   what the page drew, as tests/data/
#                                report-probe.js reads it in the browser
#                                from a copy of the page, in OUT.json
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

probe() {
	python3 - "$1" "$REPO/tests/data/report-probe.js" "$2.html" <<'P' ||
import sys
page = open(sys.argv[1]).read()
js = open(sys.argv[2]).read()
k = page.rindex("</body>")
open(sys.argv[3], "w").write(page[:k] + "<script>\n" + js + "</script>\n" +
    page[k:])
P
	    fail "no copy of $1 to probe"
	render "$2.html" "$2" "${3:-5000}"
	python3 - "$2.dom" >"$2.json" <<'P' || fail "no probe result in $2.dom"
import html, json, re, sys
m = re.findall(r'<pre id="probe">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
d = json.loads(html.unescape(m[-1]))
if d.get("error"):
    sys.exit("probe: " + d["error"])
print(json.dumps(d))
P
}
