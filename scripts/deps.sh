#!/bin/sh
# deps.sh - install the Debian packages vigil needs, only those missing.
#
#   scripts/deps.sh build    compiler and libraries (make demo)
#   scripts/deps.sh test     build + cmocka, valgrind, clang (make check)
#   scripts/deps.sh fuzz     build + clang's libFuzzer runtime
#   scripts/deps.sh bench    build + tools the bench scripts compare against
#   scripts/deps.sh gridengine  Son of Grid Engine's daemons and clients
#                            (tests/harness/sge-up), no system cell made
#   scripts/deps.sh PKG...   those packages
#
# Idempotent and quick when everything is present (one dpkg-query); says
# what it installs.  Services the integration tests need (slurm, podman,
# sshd, apptainer) are installed by their harness scripts in tests/harness/
# through this same script.
set -eu

BUILD="build-essential pkg-config libyaml-dev libsqlite3-dev
libcurl4-openssl-dev libssh-dev libssl-dev libseccomp-dev libslurm-dev
musl-tools libprotobuf-c-dev"
TEST="$BUILD libcmocka-dev valgrind clang sqlite3 procps psmisc python3
siftool squashfs-tools time"
FUZZ="$BUILD clang libclang-rt-14-dev"
BENCH="$BUILD procps time"
GRIDENGINE="gridengine-master gridengine-exec gridengine-client"

case "${1:-build}" in
build)	want=$BUILD ;;
test)	want=$TEST ;;
fuzz)	want=$FUZZ ;;
bench)	want=$BENCH ;;
gridengine)	want=$GRIDENGINE ;;
*)	want="$*" ;;
esac

missing=""
for p in $want; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*"ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages:$missing" >&2
	echo "deps.sh: run as root, or: sudo apt-get install$missing" >&2
	exit 1
fi
echo "deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# Grid Engine's packages would make and configure a system cell under
# /var/lib/gridengine; the tests bring up private cells of their own.
case "$missing" in
*gridengine-*)
	debconf-set-selections <<EOF
gridengine-common shared/gridengineconfig boolean false
gridengine-common shared/gridenginecell string default
gridengine-common shared/gridenginemaster string $(hostname)
EOF
	;;
esac
# apt-get update once per boot (lists may be missing on a fresh machine)
stamp=/var/lib/apt/periodic/vigil-update-stamp
if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +720 2>/dev/null)" ]; then
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	mkdir -p "$(dirname "$stamp")" && touch "$stamp"
fi
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
	$missing >/dev/null
echo "deps.sh: done"
