#!/bin/sh
# Retries in place, pack-exec's side, outside Slurm (VIGIL_SLURM_STEPS=
# exec): this script plays the login-node driver by writing the claims
# (tasks/INDEX/claim.N).  Task 0 fails at its first attempt; claimed
# "pack", its second attempt runs in the same pack-exec and succeeds,
# attempt 1's record kept as result.json.1.  Task 1 fails and is claimed
# "new" (the driver takes it to a new pack): it does not run again.
# Task 2 fails and nobody claims: after VIGIL_PACK_RETRY_WAIT pack-exec
# claims "new" itself.  Task 3 succeeds: "new" at once.  Task 4 fails and
# is cancelled while it waits: "new" at once, no second attempt.  Task 5
# fails with a link planted at its claim: refused, not followed, no
# second attempt.
set -u
. "$(dirname "$0")/engine-lib.sh"

cat >"$W/pr.yaml" <<'Y'
version: 1
name: pr
matrix:
  i: [0, 1, 2, 3, 4, 5]
command: |
  echo "attempt $VIGIL_ATTEMPT"
  case ${{ matrix.i }} in
  0) [ "$VIGIL_ATTEMPT" = 2 ] || exit 5 ;;
  3) ;;
  *) exit 6 ;;
  esac
retry:
  max: 2
  on: [failed]
  backoff: 0s
Y
"$VIGIL" run -q "$W/pr.yaml" >/dev/null 2>&1
id=$("$VIGIL" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
dir=$VIGIL_HOME/runs/$id
sum=$(run_digest "$dir")
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$dir/tasks/$1/$3" "$2"; }
mkdir -p "$dir/slurm"
for t in 0 1 2 3 4 5; do
	rm -rf "$dir/tasks/$t"
	mkdir -p "$dir/tasks/$t"
	printf '0 %d 1 0 0\n' "$t"
done >"$dir/slurm/submit-3.pack"
ln -s "$W/outside" "$dir/tasks/5/claim.2"
# once FILE: waits until FILE holds attempt 1's end.
once() {
	n=0
	until [ -f "$dir/tasks/$1/result.json" ]; do
		n=$((n + 1))
		[ $n -lt 300 ] || fail "task $1 never ended: $(cat "$W/out")"
		sleep 0.1
	done
}
t0=$(date +%s)
VIGIL_PACK_RETRY_WAIT=15 VIGIL_SLURM_STEPS=exec "$VIGIL" pack-exec \
    --manifest-sha256 "$sum" "$dir" submit-3.pack 0 >"$W/out" 2>&1 &
pid=$!
once 0
expect_eq "task 0 attempt 1" "FAILED 1" "$(field 0 state result.json) $(field 0 attempt result.json)"
(set -C; printf 'pack 0 0\n' >"$dir/tasks/0/claim.2") || fail "claim.2 of task 0 was there"
once 1
(set -C; printf 'new\n' >"$dir/tasks/1/claim.2") || fail "claim.2 of task 1 was there"
once 4
echo cancel >"$dir/tasks/4/cancel"
wait "$pid"
expect_eq "pack-exec exit ($(cat "$W/out"))" 1 $?
took=$(( $(date +%s) - t0 ))
[ "$took" -ge 14 ] || fail "pack-exec did not wait for task 2's claim ($took s)"
expect_eq "task 0" "SUCCEEDED 2" "$(field 0 state result.json) $(field 0 attempt result.json)"
expect_eq "task 0 attempt 1 kept" "FAILED 1" "$(field 0 state result.json.1) $(field 0 attempt result.json.1)"
expect_eq "task 0's second attempt ran" "attempt 2" "$(tail -n 1 "$dir/tasks/0/stdout")"
for t in 1 2 4 5; do
	expect_eq "task $t" "FAILED 1" "$(field $t state result.json) $(field $t attempt result.json)"
	expect_eq "task $t ran once" "attempt 1" "$(cat "$dir/tasks/$t/stdout")"
done
expect_eq "task 2 claimed by pack-exec" new "$(cat "$dir/tasks/2/claim.2")"
expect_eq "task 3" SUCCEEDED "$(field 3 state result.json)"
expect_eq "task 3 claimed by pack-exec" new "$(cat "$dir/tasks/3/claim.2")"
expect_eq "task 4 claimed by pack-exec" new "$(cat "$dir/tasks/4/claim.2")"
[ -L "$dir/tasks/5/claim.2" ] || fail "the link at task 5's claim was replaced"
[ -e "$W/outside" ] && fail "pack-exec wrote through the link at task 5's claim"
grep -q "claim.2" "$W/out" || fail "no word of task 5's claim: $(cat "$W/out")"
# A claim that is no claim is refused by name.
for t in 0 1 2 3 4 5; do printf '0 %d 2 0 0\n' "$t"; done >"$dir/slurm/submit-4.pack"
printf 'pack 1 x\n' >"$dir/tasks/1/claim.3"
VIGIL_PACK_RETRY_WAIT=1 VIGIL_SLURM_STEPS=exec "$VIGIL" pack-exec \
    --manifest-sha256 "$sum" "$dir" submit-4.pack 0 >"$W/out" 2>&1
grep -q "claim.3' is not a claim ('pack TIMEOUT MEMORY' or 'new')" "$W/out" ||
	fail "a bad claim: $(cat "$W/out")"
pass
