#!/bin/sh
# ssh host keys: an unknown key is refused under the default (strict),
# accept-new adds it (and says so) and later runs check against it, and a
# changed key is refused with a message naming the host, the key type and
# the new fingerprint, under strict and accept-new alike.
. "$(dirname "$0")/ssh-lib.sh"

fp() {
	ssh-keygen -l -E sha256 -f "$1" | cut -d' ' -f2
}
hk=$tmp/kh
name="[127.0.0.1]:$SSHD_PORT"

: >"$hk"
manifest "$tmp/strict.yaml" 'command: echo ran'
sed -i "s#known_hosts: .*#known_hosts: $hk#" "$tmp/strict.yaml"
vrun "$tmp/strict.yaml"
check "unknown key, strict: refused" "$(task_line)" "BACKEND_ERROR exit=None \
signal=None reason=ssh: host key of '$name' is unknown: server offers \
ssh-ed25519 $(fp "$SSHD_DIR/host_ed25519.pub"), '$hk' has no entry (check it \
and add it to that file, or set ssh.host_key: accept-new)"
check "unknown key, strict: nothing ran" "$(cat "$(task_dir)/stdout")" ""
check "unknown key, strict: file untouched" "$(cat "$hk")" ""

rm -f "$hk"
manifest "$tmp/new.yaml" 'command: echo ran'
sed -i "s#known_hosts: .*#known_hosts: $hk\n  host_key: accept-new#" \
	"$tmp/new.yaml"
vrun "$tmp/new.yaml"
check "accept-new: runs" "$(task_line)" "SUCCEEDED exit=0 signal=None reason="
check "accept-new: says so" "$(grep 'added host key' "$tmp/run.err")" \
	"vigil: ssh: added host key of '$name' (ssh-ed25519 \
$(fp "$SSHD_DIR/host_ed25519.pub")) to '$hk' (ssh.host_key: accept-new)"
check "accept-new: key recorded" "$(cut -d' ' -f1,2,3 "$hk")" \
	"$name $(cut -d' ' -f1,2 "$SSHD_DIR/host_ed25519.pub")"
vrun "$tmp/strict.yaml"
check "recorded key, strict: runs" "$(task_line)" \
	"SUCCEEDED exit=0 signal=None reason="

# The server gets a new host key (same address and port).
kill "$SSHD_PID"
i=0
while kill -0 "$SSHD_PID" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
rm -f "$SSHD_DIR/host_ed25519" "$SSHD_DIR/host_ed25519.pub"
ssh-keygen -q -t ed25519 -N '' -f "$SSHD_DIR/host_ed25519"
rm -f "$SSHD_DIR/sshd.pid"
/usr/sbin/sshd -f "$SSHD_DIR/sshd_config" -E "$SSHD_DIR/sshd.log"
i=0
until [ -s "$SSHD_DIR/sshd.pid" ] || [ $i -gt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
SSHD_PID=$(cat "$SSHD_DIR/sshd.pid")
new=$(fp "$SSHD_DIR/host_ed25519.pub")

for mode in strict accept-new; do
	f=$tmp/strict.yaml
	[ $mode = accept-new ] && f=$tmp/new.yaml
	vrun "$f"
	check "changed key, $mode: refused" "$(task_line)" "BACKEND_ERROR \
exit=None signal=None reason=ssh: host key of '$name' CHANGED: server offers \
ssh-ed25519 $new, unlike '$hk' (if expected: ssh-keygen -R '$name' -f '$hk')"
	check "changed key, $mode: nothing ran" "$(cat "$(task_dir)/stdout")" ""
done
check "changed key: old key kept" "$(wc -l <"$hk")" 1
exit $fail
