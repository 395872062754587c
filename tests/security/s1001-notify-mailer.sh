#!/bin/sh
# The mail program (notify.sendmail) runs outside any sandbox, so it is
# treated as every program vigil starts for a user: never one a task or
# another user could plant, judged by the policy gate and audited like
# notify.command, and fixed by the site config when the site says so.
#  (a) a task plants the program in the run's outputs destination and
#      the manifest names it: not run (alice, root);
#  (b) mallory's manifest, run by alice and by root, names a program of
#      mallory's: not run;
#  (c) a mailer that may run is audited (the audit log has its argv);
#  (d) a site config that fixes the mailer: a manifest naming another is
#      refused at validation, naming the key and the site's choice;
#  (e) singularity.binary in a place the run's tasks write: not run.
. "$(dirname "$0")/sec-lib.sh"
. "$sec_dir/users-lib.sh"

marks=$tmp/marks
mkdir -m 1777 "$marks"
chmod 1777 "$marks"
mkdir -m 755 "$tmp/sys"
printf '#!/bin/sh\ncat >/dev/null; touch "%s/sysmail"\n' "$marks" >"$tmp/sys/mailer"
chmod 755 "$tmp/sys/mailer"

# (a) the task writes the mailer into outputs.dest; the manifest names it.
for who in alice root; do
	out=$tmp/out-$who
	mkdir -m 1777 "$out"
	chmod 1777 "$out"
	cat >"$tmp/a-$who.yaml" <<Y
version: 1
name: plant-mailer
outputs:
  paths: [evil]
  dest: $out
notify:
  on: [always]
  email: [ops@example.org]
  sendmail: $out/evil
command: |
  cd "\$VIGIL_SCRATCH_DIR"
  printf '#!/bin/sh\ntouch $marks/planted-$who\n' > evil
  chmod 755 evil
Y
	chmod 644 "$tmp/a-$who.yaml"
	if [ $who = root ]; then as=""; else as=as_alice; fi
	$as "$VG" run -q --cron "$tmp/a-$who.yaml" >"$tmp/a.out" 2>&1 ||
	    fail "$who's planting task failed: $(cat "$tmp/a.out")"
	[ -x "$out/evil" ] || fail "the task did not plant its mailer (the attack needs it): $(find "$out")"
	[ ! -e "$marks/planted-$who" ] || fail "$who's vigil ran a mailer its task planted"
	$as "$VG" status last | grep -q "mail program '$out/evil'" ||
	    fail "$who was not told: $($as "$VG" status last)"
done

# (b) mallory's manifest names her own program.
printf '#!/bin/sh\ntouch "%s/mallory-$(id -un)"\n' "$marks" >"$MALLORY_DIR/mailer"
chown "$U_MALLORY" "$MALLORY_DIR/mailer"
chmod 755 "$MALLORY_DIR/mailer"
chmod 711 "$MALLORY_DIR"
cat >"$tmp/b.yaml" <<Y
version: 1
name: her-mailer
notify:
  on: [always]
  email: [ops@example.org]
  sendmail: $MALLORY_DIR/mailer
command: "true"
Y
chmod 644 "$tmp/b.yaml"
as_alice "$VG" run -q --cron "$tmp/b.yaml" >/dev/null 2>&1
"$VG" run -q --cron "$tmp/b.yaml" >/dev/null 2>&1
"$VG" status last >"$tmp/b.status" 2>&1
[ -z "$(ls "$marks" | grep '^mallory-')" ] || fail "mallory's mailer ran as $(ls "$marks" | grep '^mallory-')"
grep -q "mail program '$MALLORY_DIR/mailer' is not a program of root's or yours" "$tmp/b.status" ||
    fail "(b) not told: $(cat "$tmp/b.status")"

# (c) an allowed mailer is judged and audited.
cat >"$tmp/c.yaml" <<Y
version: 1
name: audited-mailer
policy:
  audit_log: $tmp/audit.jsonl
notify:
  on: [always]
  email: [ops@example.org]
  sendmail: $tmp/sys/mailer
command: "true"
Y
"$VG" run -q --cron "$tmp/c.yaml" >/dev/null 2>&1
[ -e "$marks/sysmail" ] || fail "the allowed mailer did not run"
grep -q "$tmp/sys/mailer -t -oi" "$tmp/audit.jsonl" ||
    fail "the mailer's decision is not audited: $(cat "$tmp/audit.jsonl")"

# (d) the site fixes the mailer.
mkdir -p "$tmp/site"
printf 'version: 1\nnotify:\n  sendmail: %s/sys/mailer\n' "$tmp" >"$tmp/site/config.yaml"
VIGIL_SITE_CONFIG=$tmp/site/config.yaml "$VG" validate "$tmp/b.yaml" >"$tmp/d.out" 2>&1 &&
    fail "a manifest chose another mailer than the site's"
grep -q "b.yaml:[0-9]*:[0-9]*: error: notify.sendmail is fixed by the site config ('$tmp/sys/mailer')" "$tmp/d.out" ||
    fail "(d) not told: $(cat "$tmp/d.out")"
# (e) the same for the container runtime a manifest names: a binary in
# a place this run's tasks write is never run.
mkdir -m 755 "$tmp/w"
printf '#!/bin/sh\ntouch "%s/runtime"\n' "$marks" >"$tmp/w/apptainer"
chmod 755 "$tmp/w/apptainer"
cat >"$tmp/e.yaml" <<Y
version: 1
name: planted-runtime
backend: singularity
image: docker://busybox:latest
isolation:
  writable: [$tmp/w]
singularity:
  binary: $tmp/w/apptainer
command: "true"
Y
"$VG" run -q "$tmp/e.yaml" >"$tmp/e.out" 2>&1 && fail "(e) the run succeeded"
[ ! -e "$marks/runtime" ] || fail "(e) a planted runtime ran"
"$VG" status last | grep -q "singularity.binary '$tmp/w/apptainer' is in '$tmp/w', which this run's tasks can write" ||
    fail "(e) not told: $("$VG" status last) $(cat "$tmp/e.out")"
echo ok
