#!/bin/sh
# The example site config and site policy in examples/site/ load through
# vigil without a problem: every example job validates with the site
# config as its site layer (and a broken copy of it is refused, naming
# the file, so the layer is really read); vigil check with the site
# policy denies by a site rule, allows by a site allow rule, and the
# policy reaches the gate of a run through the config's policy.file.
set -u
. "$(dirname "$0")/engine-lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
site=$top/examples/site
VIGIL_USER_CONFIG=
export VIGIL_USER_CONFIG
# Cloud examples find their credentials (by presence) when validated.
MODAL_TOKEN_ID=ak-example MODAL_TOKEN_SECRET=as-example
MODAL_CONFIG_PATH=$W/no-modal.toml
export MODAL_TOKEN_ID MODAL_TOKEN_SECRET MODAL_CONFIG_PATH
DAYTONA_API_KEY=dtn-example VERCEL_TOKEN=vt-example VERCEL_TEAM_ID=team_example VERCEL_PROJECT_ID=prj_example
export DAYTONA_API_KEY VERCEL_TOKEN VERCEL_TEAM_ID VERCEL_PROJECT_ID

# The site config as the site layer of every example job (with a pool of
# two GPUs, which gpu-sweep.yaml needs to fit).
# Exit 6 (valid, but this host lacks the example's engine or binary)
# still says the manifest and the site layer are valid.
for job in "$top"/examples/jobs/*.yaml; do
	CUDA_VISIBLE_DEVICES=0,1 VIGIL_SITE_CONFIG=$site/config.yaml \
	    "$VIGIL" validate "$job" >"$W/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 6 ] ||
	    fail "validate $job: exit $rc: $(cat "$W/out")"
	grep -q ": ok (\|: valid (.*); this host cannot run it:" "$W/out" ||
	    fail "validate $job: $(cat "$W/out")"
done
VIGIL_SITE_CONFIG=$site/config.yaml "$VIGIL" validate --json \
    "$top/examples/jobs/sweep.yaml" >"$W/out" 2>&1 ||
    fail "validate --json: $(cat "$W/out")"
grep -q '"ok":true' "$W/out" || fail "validate --json: $(cat "$W/out")"
sed 's/keep: on-failure/keep: sometimes/' "$site/config.yaml" >"$W/bad.yaml"
VIGIL_SITE_CONFIG=$W/bad.yaml "$VIGIL" validate \
    "$top/examples/jobs/sweep.yaml" >"$W/out" 2>&1
expect_eq "broken site config exit" 2 $?
grep -q "^$W/bad.yaml:[0-9]*:[0-9]*: error: 'scratch.keep' must be one of" \
    "$W/out" || fail "broken site config: $(cat "$W/out")"

# The site policy, as the site config names it (a --policy file is a
# layer over the site's, never the site's own): the file itself is
# valid, a deny rule holds...
printf 'version: 1\npolicy:\n  file: %s\n' "$site/policy.yaml" >"$W/site-config.yaml"
sitecheck() { VIGIL_SITE_CONFIG=$W/site-config.yaml "$VIGIL" check "$@"; }
sitecheck ls </dev/null >"$W/out" 2>&1 ||
    fail "check ls: $(cat "$W/out")"
expect_eq "check ls" "allow: ls" "$(cat "$W/out")"
"$VIGIL" check 'docker run alpine' </dev/null >/dev/null 2>&1 ||
    fail "docker run allowed without the site policy"
sitecheck 'docker run alpine' \
    </dev/null >"$W/out" 2>&1
expect_eq "site deny exit" 3 $?
grep -qF "rule [site:no-docker]" "$W/out" || fail "site deny: $(cat "$W/out")"
sitecheck 'git push origin main' \
    </dev/null >"$W/out" 2>&1
expect_eq "site deny exit" 3 $?
grep -qF "[site:no-git-push]" "$W/out" || fail "no-git-push: $(cat "$W/out")"
# ... auto-approve is forbidden ...
sitecheck --mode auto-approve ls \
    </dev/null >"$W/out" 2>&1
expect_eq "auto-approve exit" 3 $?
grep -qF "auto-approve is forbidden by the site policy" "$W/out" ||
    fail "auto-approve: $(cat "$W/out")"
sitecheck --json \
    'scontrol update NodeName=n1 State=DOWN' </dev/null >"$W/out" 2>&1
expect_eq "category deny exit" 3 $?
grep -qF '"rule":"site:no-scheduler-admin"' "$W/out" ||
    fail "no-scheduler-admin: $(cat "$W/out")"
# ... and an allow rule lets through what the built-in rules refuse.
"$VIGIL" check 'rm -rf /scratch/*' </dev/null >/dev/null 2>&1
expect_eq "scratch cleanup without the site policy" 3 $?
sitecheck 'rm -rf /scratch/*' \
    </dev/null >"$W/out" 2>&1 || fail "site allow: $(cat "$W/out")"
expect_eq "site allow" "allow: rm -rf /scratch/*" "$(cat "$W/out")"

# The site config naming the site policy: the gate of a run uses it.
sed "s|^  mode: auto-deny|&\n  file: $site/policy.yaml|" "$site/config.yaml" \
    >"$W/config.yaml"
cat >"$W/push.yaml" <<'Y'
version: 1
name: push
command: git push origin main
Y
VIGIL_SITE_CONFIG=$W/config.yaml "$VIGIL" run --dry-run "$W/push.yaml" \
    </dev/null >"$W/out" 2>&1
expect_eq "dry run denied by the site policy" 3 $?
grep -q "no-git-push\|batch jobs do not publish" "$W/out" ||
    fail "dry run: $(cat "$W/out")"
pass
