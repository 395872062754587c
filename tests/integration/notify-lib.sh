# notify-lib.sh - sourced by the notification tests after engine-lib.sh:
# real webhook receivers on loopback (tests/integration/notify-recv.py)
# stopped at exit, and a manifest writer with a notify section.
RECV=$(dirname "$0")/notify-recv.py
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$W"' EXIT INT TERM

# Starts a receiver in mode $2 [$3 seconds] named $1; sets PORT_$1.
recv() {
	mkdir -p "$W/r-$1"
	python3 "$RECV" "$W/p-$1" "$W/r-$1" "$2" ${3:-} & pids="$pids $!"
	i=0
	while [ ! -s "$W/p-$1" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
	[ -s "$W/p-$1" ] || fail "receiver $1 did not start"
	eval "PORT_$1=\$(cat "$W/p-$1")"
}
# How many posts receiver $1 got.
posts() { ls "$W/r-$1" | wc -l; }
# Manifest $1 with command $2 and the notify section on stdin.
manifest() {
	{ printf 'version: 1\nname: %s\ncommand: %s\nnotify:\n' "$1" "$2"
	  sed 's/^/  /'; } >"$W/$1.yaml"
}
