#!/bin/sh
# synth-run.sh VIGIL N - makes a run of N tasks in $VIGIL_HOME's real
# store for `vigil report` to chew on, and prints its id.  vigil itself
# creates the run (one task of a real manifest, so that the schema, the
# run directory and the manifest are its own), then one SQL transaction
# widens it to N tasks as a 16-node Slurm sweep would leave them: a
# matrix of two keys, 2 slots per node, 5% retried once, some failures,
# timeouts and OOMs, and usage on every attempt.  Used by
# tests/integration/t0220-cli-report.sh and bench/report.sh.
# Every INSERT names its columns, so columns the store gains later (with
# their defaults) leave it working; the run is found by the id vigil
# printed, not by its place in a listing.
set -eu
VIGIL=$1
N=$2
W=$(mktemp -d /tmp/vigil-synth-XXXXXX)
trap 'rm -rf "$W"' EXIT
# No resources: the one real task must fit any host and need no cgroup;
# the rows below say what the sweep asked for.
cat >"$W/one.yaml" <<'YAML'
version: 1
name: synth-sweep
command: ["true"]
YAML
"$VIGIL" run "$W/one.yaml" >"$W/out" 2>"$W/err" ||
    { cat "$W/err" >&2; echo "synth-run: vigil run failed" >&2; exit 1; }
id=$(sed -n 's/^vigil: run \([^ ]*\) SUCCEEDED.*/\1/p' "$W/err" | tail -n 1)
[ -n "$id" ] ||
    { cat "$W/err" >&2; echo "synth-run: no run id in vigil's output" >&2; exit 1; }
sqlite3 -bail "$VIGIL_HOME/vigil.db" >/dev/null <<SQL
PRAGMA busy_timeout = 10000;
BEGIN;
DELETE FROM attempts WHERE run_id = '$id';
DELETE FROM tasks WHERE run_id = '$id';
DELETE FROM events WHERE run_id = '$id';
CREATE TEMP TABLE seq AS WITH RECURSIVE s(i) AS
  (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < $N) SELECT i FROM s;
CREATE TEMP TABLE t AS SELECT i,
  CASE WHEN i % 97 = 5 THEN 'FAILED' WHEN i % 193 = 7 THEN 'TIMEOUT'
       WHEN i % 389 = 11 THEN 'OOM' ELSE 'SUCCEEDED' END AS state,
  CASE WHEN i % 20 = 3 THEN 2 ELSE 1 END AS attempts,
  (i / 32) * 1.0 + (i % 7) * 0.05 AS start,
  20 + (i % 17) * 1.5 AS wall
  FROM seq;
INSERT INTO tasks (run_id, idx, matrix, label, state, attempts, tries,
  exit_code, signal, started, ended, next_at, memory, time, timeout, pid,
  pid_start, cancel_req, handle, node, reason) SELECT '$id', i,
  '{"lr":"' || (i % 10) || '","seed":"' || (i / 10) || '"}',
  'lr=' || (i % 10) || ' seed=' || (i / 10), state, attempts, attempts,
  CASE state WHEN 'SUCCEEDED' THEN 0 WHEN 'FAILED' THEN 1 ELSE -1 END,
  0, (SELECT created FROM runs WHERE id = '$id') + start + (attempts - 1) * 30,
  (SELECT created FROM runs WHERE id = '$id') + start + (attempts - 1) * 30 + wall,
  0, 4294967296, 0, 0, 0, 0, 0, (i + 1000) || '_' || i,
  'node' || (i % 16),
  CASE state WHEN 'SUCCEEDED' THEN '' WHEN 'FAILED' THEN 'exit code 1'
       WHEN 'TIMEOUT' THEN 'time limit' ELSE 'out of memory' END
  FROM t;
INSERT INTO attempts (run_id, idx, attempt, state, exit_code, signal,
  started, ended, pid, pid_start, handle, node, reason, cpu_user, cpu_sys,
  max_rss, alloc_cpus, alloc_gpus, alloc_mem) SELECT '$id', i, 1,
  CASE WHEN attempts = 2 THEN 'FAILED' ELSE state END,
  CASE WHEN attempts = 2 OR state = 'FAILED' THEN 1 WHEN state = 'SUCCEEDED'
       THEN 0 ELSE -1 END, 0,
  (SELECT created FROM runs WHERE id = '$id') + start,
  (SELECT created FROM runs WHERE id = '$id') + start + wall,
  0, 0, (i + 1000) || '_' || i, 'node' || (i % 16), '',
  wall * 0.6, wall * 0.05, (200 + (i % 300)) * 1048576, 2, NULL, 4294967296
  FROM t;
INSERT INTO attempts (run_id, idx, attempt, state, exit_code, signal,
  started, ended, pid, pid_start, handle, node, reason, cpu_user, cpu_sys,
  max_rss, alloc_cpus, alloc_gpus, alloc_mem) SELECT '$id', i, 2, state,
  CASE state WHEN 'SUCCEEDED' THEN 0 WHEN 'FAILED' THEN 1 ELSE -1 END, 0,
  (SELECT created FROM runs WHERE id = '$id') + start + 30,
  (SELECT created FROM runs WHERE id = '$id') + start + 30 + wall,
  0, 0, (i + 1000) || '_' || i, 'node' || ((i + 1) % 16), '',
  wall * 0.6, wall * 0.05, (200 + (i % 300)) * 1048576, 2, NULL, 4294967296
  FROM t WHERE attempts = 2;
UPDATE runs SET ntasks = $N, scheduler = 'slurm', state = 'FAILED',
  ended = created + ($N / 32) + 120 WHERE id = '$id';
COMMIT;
SQL
echo "$id"
