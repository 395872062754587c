#!/bin/sh
# Cloud backends (the Daytona and Vercel fakes): outputs brought back
# from the sandbox through the provider's file API (Daytona's toolbox
# /files and /files/download, Vercel's fs/read after a find in the
# sandbox) into the task directory, then collected: contents byte for
# byte, directories whole, a symbolic link left in the sandbox and said
# so in outputs.json, outputs.max_files and max_bytes leaving files
# behind (said in outputs.json), outputs.when: failure, a listing that
# fails (said in the reason), the files a command that timed out wrote
# before it (and a provider that stops answering then: the reading
# gives up after 30 s), nothing read after a cancel, and the sandbox
# deleted after all that.
for PROVIDER in daytona vercel; do
	(
	. "$(dirname "$0")/cloud-lib.sh"
	start_fake
	# outs: "PATH SIZE" of each collected file, sorted.
	outs() {
		d=$VIGIL_HOME/runs/$RUN/tasks/0/outputs
		[ -d "$d" ] || return 0
		(cd "$d" && find . -type f | sed 's|^\./||' | sort |
		    while read -r f; do echo "$f $(wc -c <"$f")"; done)
	}
	# skipped: "FROM PATH WHY" of each file outputs.json lists as left.
	skipped() {
		python3 -c 'import json,sys
for s in json.load(open(sys.argv[1]))["skipped"]:
    print(s["from"], s["path"], s["why"])' \
		    "$VIGIL_HOME/runs/$RUN/tasks/0/outputs.json"
	}

	# 1. Files and a directory, exact bytes; a link stays behind.
	mf files "|
  mkdir -p res/sub
  printf 'a\\nb\\n' >res/a.txt
  printf '\\001\\000\\377z' >res/sub/b.dat
  echo one >one.csv
  echo no >other.log
  ln -s /etc/passwd res/link
  echo done" 'outputs: ["res", "*.csv"]'
	run_task files
	expect_eq "files state" "SUCCEEDED 0 None" "$ST"
	expect_eq "files out" "done" "$OUT"
	expect_eq "files collected" "one.csv 4
res/a.txt 4
res/sub/b.dat 4" "$(outs)"
	o=$VIGIL_HOME/runs/$RUN/tasks/0/outputs
	expect_eq "text bytes" "$(printf 'a\nb\n' | od -An -tx1)" \
	    "$(od -An -tx1 <"$o/res/a.txt")"
	expect_eq "binary bytes" "$(printf '\001\000\377z' | od -An -tx1)" \
	    "$(od -An -tx1 <"$o/res/sub/b.dat")"
	expect_eq "link left" "remote res/link a symbolic link (left in the \
sandbox)" "$(skipped)"
	expect_eq "no sandbox left" "" "$(boxes)"

	# 2. outputs.max_files: one file stays in the sandbox.
	mf maxf "'for i in 1 2 3; do echo \$i >f\$i.txt; done'" 'outputs:
  paths: ["*.txt"]
  max_files: 2'
	run_task maxf
	expect_eq "max_files state" "SUCCEEDED 0 None" "$ST"
	expect_eq "max_files collected" 2 "$(outs | wc -l)"
	expect_eq "max_files left" "remote over outputs.max_files" \
	    "$(skipped | awk '{print $1, $3, $4}')"

	# 3. outputs.max_bytes: the second 600-byte file does not fit.
	mf maxb "'head -c 600 /dev/zero >a.bin; head -c 600 /dev/zero >b.bin'" \
	    'outputs:
  paths: ["*.bin"]
  max_bytes: 1000'
	run_task maxb
	expect_eq "max_bytes collected" 1 "$(outs | wc -l)"
	expect_eq "max_bytes left" "remote over outputs.max_bytes" \
	    "$(skipped | awk '{print $1, $3, $4}')"

	# 4. outputs.when: failure: nothing after a success, the files after
	# a failure.
	mf whenok "'echo x >r.txt'" 'outputs:
  paths: ["r.txt"]
  when: failure'
	run_task whenok
	expect_eq "when success: nothing" "" "$(outs)"
	[ ! -e "$VIGIL_HOME/runs/$RUN/tasks/0/r.txt" ] ||
	    fail "when success: the file was brought back"
	mf whenfail "'echo x >r.txt; exit 3'" 'outputs:
  paths: ["r.txt"]
  when: failure'
	run_task whenfail
	expect_eq "when failure state" "FAILED 3 None" "$ST"
	expect_eq "when failure: collected" "r.txt 2" "$(outs)"

	# 5. The listing fails (the working directory is not there): said in
	# the reason, the outcome is the command's, the sandbox still goes.
	mf nodir "'true'" "workdir: $W/no-such-dir
outputs: ['*']"
	run_task nodir
	expect_eq "no dir state" FAILED "${ST%% *}"
	case $REASON in
	*"(outputs not brought back: $PROVIDER: listing the outputs"*) ;;
	*) fail "no dir reason: $REASON" ;;
	esac
	expect_eq "no dir: nothing" "" "$(outs)"
	expect_eq "no sandbox left at the end" "" "$(boxes)"

	# 6. A timeout: the command is killed, what it wrote before is
	# brought back (a timeout is a failed attempt), then the sandbox
	# goes; the timeout is the monitor's, not the scheduler's later one.
	mf late "'echo 1 >ck1.txt; mkdir -p ck; echo 22 >ck/2.txt; echo \
started; sleep 30; echo 3 >ck3.txt'" 'timeout: 2s
kill_grace: 1s
outputs:
  paths: ["ck*"]
  when: failure'
	t0=$(date +%s)
	run_task late
	t1=$(date +%s)
	expect_eq "timeout state" TIMEOUT "${ST%% *}"
	expect_eq "timeout stdout" started "$OUT"
	expect_eq "timeout: files written before it collected" "ck/2.txt 3
ck1.txt 2" "$(outs)"
	case $REASON in
	"timed out after "*"; command stopped with SIGTERM") ;;
	*) fail "timeout reason: $REASON" ;;
	esac
	[ $((t1 - t0)) -lt 15 ] || fail "timeout took $((t1 - t0)) s"
	expect_eq "no sandbox after the timeout" "" "$(boxes)"

	# 7. A cancel (Ctrl-C): nothing is read, the sandbox goes.
	start_fake
	mf cancel "'echo 1 >ck1.txt; echo started; sleep 60'" \
	    'outputs: ["ck*"]'
	run_started cancel
	kill -INT $vpid
	wait $vpid
	expect_eq "cancel exit status" 5 "$?"
	task_fields
	expect_eq "cancel state" CANCELLED "${ST%% *}"
	expect_eq "cancel: nothing collected" "" "$(outs)"
	expect_eq "cancel: no file read" 0 \
	    "$(grep -c 'files/download\|fs/read' "$FD/requests")"
	expect_eq "no sandbox after the cancel" "" "$(boxes)"

	# 8. After a timeout the provider stops answering file reads: the
	# reading gives up 30 s later, says so, and the sandbox still goes.
	start_fake --stall-reads
	mf stall "'echo 1 >ck1.txt; sleep 30'" 'timeout: 2s
kill_grace: 1s
outputs: ["ck*"]'
	t0=$(date +%s)
	run_task stall
	t1=$(date +%s)
	expect_eq "stalled reads state" TIMEOUT "${ST%% *}"
	case $REASON in
	*"(outputs not brought back: not done 30 s after the timeout: "*) ;;
	*) fail "stalled reads reason: $REASON" ;;
	esac
	[ $((t1 - t0)) -ge 30 ] && [ $((t1 - t0)) -lt 50 ] ||
	    fail "stalled reads: the attempt took $((t1 - t0)) s"
	expect_eq "stalled reads: nothing collected" "" "$(outs)"
	expect_eq "no sandbox after stalled reads" "" "$(boxes)"
	stop_fake
	echo "ok: $PROVIDER"
	) || exit 1
done
echo ok
