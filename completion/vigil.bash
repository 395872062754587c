# bash completion for vigil, written by 'vigil help --bash-completion'
# from the command table (make docs); change runner/cli/ and regenerate
# rather than edit.  Install as share/bash-completion/completions/vigil.

# Completes command names, each command's options, the values of options
# that list them, a command's subcommand words, and run and session
# ids (from 'vigil __complete runs|sessions'); files otherwise.
_vigil()
{
	local cur prev cmd opts takes subs ids w i npos

	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	if [ "$COMP_CWORD" -le 1 ]; then
		COMPREPLY=($(compgen -W "run submit status logs report cancel resume retry validate check exec policy session mcp doctor scratch cache reuse gc notify version help" -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	subs= ids=
	case $cmd in
	run)
		opts="-j --jobs --set --after -n --dry-run --json --mode -q --quiet --cron --no-reuse --reuse-only"
		takes=" -j --jobs --set --after --mode "
		case $prev in
		--mode)
			COMPREPLY=($(compgen -W "auto-deny auto-approve interactive" -- "$cur"))
			return 0 ;;
		esac
		;;
	submit)
		opts="-j --jobs --set --cron --no-reuse --reuse-only --after"
		takes=" -j --jobs --set --after "
		;;
	status|st)
		opts="--json -w --watch -a --all --state"
		takes=" --state "
		ids=runs
		;;
	logs)
		opts="-f --follow --stderr"
		takes=" "
		ids=runs
		;;
	report)
		opts="-o --output --json"
		takes=" -o --output "
		ids=runs
		;;
	cancel)
		opts="--wait"
		takes=" --wait "
		ids=runs
		;;
	resume)
		opts="-j --jobs --json -q --quiet"
		takes=" -j --jobs "
		ids=runs
		;;
	retry)
		opts="--failed -j --jobs --json -q --quiet"
		takes=" -j --jobs "
		ids=runs
		;;
	validate)
		opts="--set --json"
		takes=" --set "
		;;
	check)
		opts="--json --policy --mode --stdin -0 --null --audit-log"
		takes=" --policy --mode --audit-log "
		case $prev in
		--mode)
			COMPREPLY=($(compgen -W "auto-deny auto-approve interactive" -- "$cur"))
			return 0 ;;
		esac
		;;
	exec)
		opts="--backend --policy --mode --timeout --audit-log --session --stdin --json --background --open-stdin --output-limit"
		takes=" --backend --policy --mode --timeout --audit-log --session --output-limit "
		case $prev in
		--mode)
			COMPREPLY=($(compgen -W "auto-deny auto-approve interactive" -- "$cur"))
			return 0 ;;
		esac
		;;
	policy)
		opts="--json --policy --mode"
		takes=" --policy --mode "
		case $prev in
		--mode)
			COMPREPLY=($(compgen -W "auto-deny auto-approve interactive" -- "$cur"))
			return 0 ;;
		esac
		;;
	session)
		opts="--backend --image -f --file --set --workdir --name --idle-timeout --max-age --mode --policy --json --wait --follow --close"
		takes=" --backend --image -f --file --set --workdir --name --idle-timeout --max-age --mode --policy "
		case $prev in
		--mode)
			COMPREPLY=($(compgen -W "auto-deny auto-approve interactive" -- "$cur"))
			return 0 ;;
		esac
		subs="start list stop jobs output kill input egress"
		ids=sessions
		;;
	mcp)
		opts="--mode --policy --backend --image --workdir --idle-timeout --max-age --output-limit --listen --token-file"
		takes=" --mode --policy --backend --image --workdir --idle-timeout --max-age --output-limit --listen --token-file "
		case $prev in
		--mode)
			COMPREPLY=($(compgen -W "auto-deny auto-approve interactive" -- "$cur"))
			return 0 ;;
		esac
		;;
	doctor)
		opts="-b --backend --set"
		takes=" -b --backend --set "
		;;
	scratch)
		opts="--base -n --dry-run"
		takes=" --base "
		subs="list gc"
		;;
	cache)
		opts="--dir --purge --purge-age --purge-clock --margin --quota --max-entries --lock-wait --lock-lease --puller --json -n --dry-run --force --refresh"
		takes=" --dir --purge --purge-age --purge-clock --margin --quota --max-entries --lock-wait --lock-lease --puller "
		case $prev in
		--purge)
			COMPREPLY=($(compgen -W "nersc olcf jsc cscs alliance pawsey purdue none" -- "$cur"))
			return 0 ;;
		--purge-clock)
			COMPREPLY=($(compgen -W "atime mtime ctime any all" -- "$cur"))
			return 0 ;;
		esac
		subs="list pull verify gc rm"
		;;
	reuse)
		opts="--json --all"
		takes=" "
		subs="list drop drop"
		ids=runs
		;;
	gc)
		opts="--older-than --audit-older-than -n --dry-run --no-reap --drop-reuse"
		takes=" --older-than --audit-older-than "
		;;
	notify)
		opts="--test --set"
		takes=" --set "
		subs=""
		;;
	version)
		opts=""
		takes=" "
		;;
	help)
		opts="--man --bash-completion"
		takes=" "
		subs="run submit status logs report cancel resume retry validate check exec policy session mcp doctor scratch cache reuse gc notify version help"
		;;
	*)
		return 0 ;;
	esac
	npos=0
	for ((i = 2; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--)	return 0 ;;
		-*)	[[ $takes == *" $w "* ]] && i=$((i + 1)) ;;
		*)	npos=$((npos + 1)) ;;
		esac
	done
	[[ $takes == *" $prev "* ]] && return 0
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	elif [ "$npos" -eq 0 ] && [ -n "$subs" ]; then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
	elif [ -n "$ids" ]; then
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" __complete "$ids" 2>/dev/null)" -- "$cur"))
	fi
	return 0
}
complete -o default -F _vigil vigil
