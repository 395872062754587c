#!/bin/sh
# Vercel backend against tests/harness/fake-vercel.py (the Sandbox REST
# API as the @vercel/sandbox SDK speaks it, commands run locally):
# streams, exit codes, environment, argv, big output, token errors, 5xx
# retries, timeout, cancel, reap, doctor, validate.  See cloud-lib.sh.
PROVIDER=vercel
. "$(dirname "$0")/cloud-lib.sh"
cloud_suite
