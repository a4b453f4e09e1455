#!/usr/bin/env bash
# run-all.sh - what `make test` runs: build, unit tests, a sanitizer build with
# the unit tests and several integration tests, all integration tests (the fault
# mix shortened to 60 s), bounded fuzzing; a summary. The integration tests run in
# lanes (INTEGRATION_JOBS, tests/integration/run.sh), the fuzzing beside them.
set -uo pipefail
cd "$(dirname "$0")/.."
results=()
failed=0

step() {
	local name=$1 start rc
	shift
	echo "==== $name"
	start=$(date +%s)
	"$@"
	rc=$?
	if [ $rc -eq 0 ]; then
		results+=("PASS $name ($(($(date +%s) - start))s)")
	else
		results+=("FAIL $name ($(($(date +%s) - start))s)")
		failed=$((failed + 1))
	fi
	return 0
}

# make -j2: CI has two cores (MAKE_JOBS to change it).
J=-j${MAKE_JOBS:-2}
step "build (warnings are errors)" make -s $J all
step "unit tests (cmocka)" make -s $J unit
step "simulation, bounded (build/idsim: seeds 1..20000, a random slice, determinism, each rule disabled)" tests/sim.sh build
step "sanitizer build + unit tests (ASan/UBSan)" make -s $J sanitize
step "ThreadSanitizer build of libidgen's threaded test" make -s $J tsan

# Bounded fuzzing (CPU) runs beside the integration tests' lanes (which mostly
# wait), holding INTEGRATION_SERIAL_LOCK shared: the timing-sensitive tests of the
# serial phase start only once it is over. Its output is shown after theirs.
mkdir -p build/test-var
export INTEGRATION_SERIAL_LOCK=$PWD/build/test-var/.serial.lock
fuzz_out=build/test-var/fuzz-short.out
fuzz_start=$(date +%s)
(
	flock -s "$INTEGRATION_SERIAL_LOCK" make -s fuzz-short
	echo "$? $(date +%s)" >"$fuzz_out.rc"
) >"$fuzz_out" 2>&1 &
fuzz_pid=$!
# Interrupted: the fuzzing stops too (its processes by PID, the whole tree at once).
tree() { local c; echo "$1"; for c in $(pgrep -P "$1"); do tree "$c"; done; }
stop_fuzz() { kill -TERM $(tree "$fuzz_pid") 2>/dev/null; }
trap 'stop_fuzz; exit 130' INT
trap 'stop_fuzz; exit 143' TERM
# One run, two groups: the sanitizer build's list (its directories under
# build/test-var/asan/) and every test on the normal build, in INTEGRATION_JOBS
# lanes, then the serial ones alone (tests/integration/run.sh). The fault mix for
# 45 s here (make soak runs it for SOAK_SECONDS): make test stays within its 20 minutes.
step "integration tests: sanitizer build (19), normal build (all)" env FAULT_SECONDS="${FAULT_SECONDS:-45}" \
	tests/integration/run.sh build/asan \
	tests/integration/test_netcat.sh tests/integration/test_nasty.sh \
	tests/integration/test_failover.sh tests/integration/test_fallback.sh \
	tests/integration/test_lease.sh tests/integration/test_window.sh \
	tests/integration/test_regress.sh tests/integration/test_restart.sh \
	tests/integration/test_resp.sh \
	tests/integration/test_http.sh tests/integration/test_grpc.sh \
	tests/integration/test_grpc_flood.sh \
	tests/integration/test_slow.sh tests/integration/test_libidgen.sh \
	tests/integration/test_owner.sh \
	tests/integration/test_bchange.sh tests/integration/test_witness.sh \
	tests/integration/test_views.sh tests/integration/test_refusal.sh \
	-- build
echo "==== fuzzing, bounded (libFuzzer + ASan/UBSan, every parser)"
wait $fuzz_pid
trap - INT TERM
cat "$fuzz_out"
rc=1 end=$(date +%s)
[ -f "$fuzz_out.rc" ] && read -r rc end <"$fuzz_out.rc"
rm -f "$fuzz_out.rc"
if [ "$rc" -eq 0 ]; then
	results+=("PASS fuzzing, bounded (libFuzzer + ASan/UBSan, every parser) ($((end - fuzz_start))s, beside the integration tests)")
else
	results+=("FAIL fuzzing, bounded (libFuzzer + ASan/UBSan, every parser) ($((end - fuzz_start))s, beside the integration tests)")
	failed=$((failed + 1))
fi

echo
echo "==== summary"
printf '%s\n' "${results[@]}"
if [ $failed -eq 0 ]; then
	echo "make test: ALL PASSED"
else
	echo "make test: $failed STEP(S) FAILED"
fi
exit $((failed > 0))
