#!/bin/sh
# Daytona backend against tests/harness/fake-daytona.py (Daytona's REST
# API and toolbox as documented, commands run locally): streams, exit
# codes, environment, argv, big output, token errors, 5xx retries,
# timeout, cancel, reap, doctor, validate.  See cloud-lib.sh.
PROVIDER=daytona
. "$(dirname "$0")/cloud-lib.sh"
cloud_suite
