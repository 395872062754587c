# known-usage.py STATUS_JSON [--cpu MIN:MAX] [--given CPUS:BYTES]
#                [--mem-eff MIN:MAX]
# Checks the usage of task 0 in `vigil status RUN --json` against what
# tests/data/known-use.py uses: a peak of 200 to 320 MiB, CPU time within
# --cpu (default 1:3 seconds) and equal to user + system; --given: what
# the attempt was given (cpus and mem_limit); --mem-eff: the peak's share
# of it.  Exits non-zero, saying what differs, when anything does.
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("status")
p.add_argument("--cpu", default="1:3")
p.add_argument("--given")
p.add_argument("--mem-eff")
a = p.parse_args()
u = json.load(open(a.status))["tasks"][0]["usage"]


def bounds(s):
    lo, hi = s.split(":")
    return float(lo), float(hi)


def check(ok, what):
    if not ok:
        sys.exit("known usage: %s: %s" % (what, json.dumps(u)))


mb = (u["max_rss"] or 0) / 2**20
check(200 <= mb <= 320, "peak %.0f MiB not in 200..320" % mb)
lo, hi = bounds(a.cpu)
check(u["cpu"] is not None and lo <= u["cpu"] <= hi,
      "cpu not in %g..%g s" % (lo, hi))
check(abs(u["cpu"] - u["cpu_user"] - u["cpu_sys"]) < 1e-6,
      "cpu is not user + system")
if a.given:
    cpus, mem = a.given.split(":")
    check(u["cpus"] == int(cpus) and u["mem_limit"] == int(mem),
          "given is not %s CPUs and %s bytes" % (cpus, mem))
if a.mem_eff:
    lo, hi = bounds(a.mem_eff)
    check(u["mem_eff"] is not None and lo < u["mem_eff"] < hi,
          "mem_eff not in %g..%g" % (lo, hi))
