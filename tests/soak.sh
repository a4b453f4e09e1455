#!/usr/bin/env bash
# soak.sh - what `make soak` runs (not part of `make test`): the mixed fault run of
# tests/integration/test_faults.sh, long and with every fault kind (FAULT_KINDS=all):
# MariaDB servers killed and hung, idservers killed and stopped, silent partitions
# of one and both servers and the servers 50 ms or 200 ms away (through
# delayproxy.py), floods of idle, slowloris and non-reading clients; every ID
# collected checked for duplicates across the whole run. Ends with one line:
#
#   SOAK VERDICT: seconds= faults= kinds: kill_db= ... ids= duplicates= errors: CONN= ... PASS|FAIL
#
# Settings (environment):
#   SOAK_SECONDS   length of the run (default 1800)
#   SOAK_SEED      seed of the fault plan and of the load (default: from the date,
#                  printed: the same seed replays the same plan)
#   SOAK_KINDS     fault kinds (default all; see test_faults.sh)
#   SOAK_MIN_IDS   fewest IDs the run must collect (default 33,000 per second)
#   BUILD          build directory with idserver and idbench (default build/)
#   TEST_VAR       where the run's directory goes (default build/test-var); the run
#                  uses TEST_VAR/soak/test_faults (logs, dumps, the MariaDB pair)
#   ODD_PORT, EVEN_PORT, SVC_PORT  as for the integration tests; the proxies
#                  listen on ODD_PORT+100 and EVEN_PORT+100, the services on
#                  SVC_PORT and SVC_PORT+1
# Any FAULT_* setting of test_faults.sh (FAULT_RATE, FAULT_CONNECTIONS, ...) passes through.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
export BUILD=$(cd "${BUILD:-$ROOT/build}" 2>/dev/null && pwd) ||
	{ echo "soak: no build directory ${BUILD:-$ROOT/build} (make all first)" >&2; exit 2; }
for b in idserver idbench; do
	[ -x "$BUILD/$b" ] || { echo "soak: $BUILD/$b missing (make all first)" >&2; exit 2; }
done
SOAK_SECONDS=${SOAK_SECONDS:-1800}
SOAK_SEED=${SOAK_SEED:-$(date +%Y%m%d%H%M)}
SOAK_KINDS=${SOAK_KINDS:-all}
SOAK_MIN_IDS=${SOAK_MIN_IDS:-$((SOAK_SECONDS * 33000))}
for v in SOAK_SECONDS SOAK_SEED SOAK_MIN_IDS; do
	[[ ${!v} =~ ^[0-9]+$ ]] || { echo "soak: $v must be a number (got '${!v}')" >&2; exit 2; }
done
[ "$SOAK_SECONDS" -ge 60 ] || { echo "soak: SOAK_SECONDS must be at least 60" >&2; exit 2; }
export TEST_VAR=${TEST_VAR:-$ROOT/build/test-var}/soak
mkdir -p "$TEST_VAR"
out=$TEST_VAR/soak.out

echo "soak: seed $SOAK_SEED, $SOAK_SECONDS s, kinds $SOAK_KINDS, build $BUILD, logs in $TEST_VAR/test_faults"
echo "soak: replay with: SOAK_SEED=$SOAK_SEED SOAK_SECONDS=$SOAK_SECONDS SOAK_KINDS=$SOAK_KINDS make soak"
start=$(date +%s)
# Bounded: the run, the final checks of hundreds of millions of IDs, the cleanup.
FAULT_SECONDS=$SOAK_SECONDS FAULT_SEED=$SOAK_SEED FAULT_KINDS=$SOAK_KINDS FAULT_MIN_IDS=$SOAK_MIN_IDS \
	timeout -k 30 $((SOAK_SECONDS + 900)) bash "$ROOT/tests/integration/test_faults.sh" | tee "$out"
rc=${PIPESTATUS[0]}
verdict=$(grep -m1 '^FAULT RUN VERDICT: ' "$out" | sed 's/^FAULT RUN VERDICT: //')
echo "soak: $(($(date +%s) - start)) s in all, exit status $rc"
if [ -z "$verdict" ]; then
	echo "SOAK VERDICT: seconds=$SOAK_SECONDS seed=$SOAK_SEED no verdict (the run stopped early; logs in $TEST_VAR/test_faults) FAIL"
	[ "$rc" -ne 0 ] || rc=1
elif [ "$rc" -ne 0 ] && [[ $verdict != *" FAIL" ]]; then
	echo "SOAK VERDICT: ${verdict% PASS} FAIL"
else
	echo "SOAK VERDICT: $verdict"
fi
exit "$rc"
