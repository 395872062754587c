# sdk-lib.sh - real client SDKs from the npm registry for the conformance
# tests (sourced): Node.js and npm (Debian's, when the machine has none),
# and pinned packages installed into a cache directory outside the
# tracked tree, which a second run reuses.  The caller defines skip
# (prints why, exits 77) and W (a scratch directory).

# sdk_need_node: skips unless node (20 or later: the SDKs' HTTP client
# needs the global File) and npm are there.  Where the machine's node is
# older (Debian 12 has 18), Node.js 20 comes from the npm registry: the
# package node-linux-ARCH holds the official binary, checked against the
# registry's digest by npm; it goes into $VIGIL_NODE_CACHE (build/node20)
# and first in PATH.
sdk_need_node() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		"$top/scripts/deps.sh" nodejs npm >/dev/null 2>&1 || true
	fi
	command -v node >/dev/null || skip "node is not installed"
	command -v npm >/dev/null || skip "npm is not installed"
	[ "$(node -p 'typeof File' 2>/dev/null)" = function ] || sdk_node20
	[ "$(node -p 'typeof File' 2>/dev/null)" = function ] ||
	    skip "node $(node --version) has no global File, which the SDKs' undici needs (Node.js 20 or later)"
}

# sdk_node20: Node.js 20 from the npm registry, first in PATH; skips
# with npm's reason when it cannot be had.
sdk_node20() {
	case $(uname -m) in
	x86_64) _arch=x64 ;;
	aarch64) _arch=arm64 ;;
	*) skip "node $(node --version) is older than 20 and no Node.js 20 package is known for $(uname -m)" ;;
	esac
	_nd=${VIGIL_NODE_CACHE:-$top/build/node20}
	if [ ! -x "$_nd/package/bin/node" ]; then
		mkdir -p "$(dirname "$_nd")"
		_new=$(mktemp -d "$_nd.new.XXXXXX")
		if ! (cd "$_new" && npm pack --silent "node-linux-$_arch@20" \
		    >"$W/npm-node.log" 2>&1 && tar xzf node-linux-*.tgz &&
		    rm -f node-linux-*.tgz) || [ ! -x "$_new/package/bin/node" ]; then
			rm -rf "$_new"
			skip "node $(node --version) is older than 20, and Node.js 20 from the npm registry failed: $(tail -n 1 "$W/npm-node.log")"
		fi
		# Another test may have put one there meanwhile: keep it.
		mv -T "$_new" "$_nd" 2>/dev/null || rm -rf "$_new"
	fi
	PATH=$_nd/package/bin:$PATH
	export PATH
}

# sdk_installed DIR NAME VERSION: true when DIR holds that version.
sdk_installed() {
	[ "$(node -p "require('$1/node_modules/$2/package.json').version" \
	    2>/dev/null)" = "$3" ]
}

# sdk_install DIR NAME@VERSION...: installs the packages into DIR unless
# each is there already; skips with npm's reason when it fails.
sdk_install() {
	_dir=$1
	shift
	_need=0
	for _p in "$@"; do
		sdk_installed "$_dir" "${_p%@*}" "${_p##*@}" || _need=1
	done
	[ $_need -eq 0 ] && return 0
	# Into a fresh directory moved into place whole, so that an
	# interrupted install is never taken for a cached one.
	mkdir -p "$(dirname "$_dir")"
	_new=$(mktemp -d "$_dir.new.XXXXXX")
	echo '{"private": true}' >"$_new/package.json"
	if ! npm install --prefix "$_new" --no-audit --no-fund \
	    --ignore-scripts --loglevel=error "$@" >"$W/npm.log" 2>&1; then
		rm -rf "$_new"
		# npm's first error lines say why (its last names its log).
		_why=$(grep -m 3 \
		    '^npm ERR! \(code\|errno\|request\|network\|[0-9]\{3\}\)' \
		    "$W/npm.log" | sed 's/^npm ERR! //' | tr '\n' ' ')
		[ -n "$_why" ] || _why=$(tail -n 1 "$W/npm.log")
		skip "npm install of $* failed: $_why"
	fi
	rm -rf "$_dir"
	mv "$_new" "$_dir"
}
