#!/usr/bin/env bash
# run-all.sh - what `make test` runs: build, unit tests, a sanitizer build with
# the unit tests and several integration tests, all integration tests (the fault
# mix shortened to 90 s), bounded fuzzing; a summary.
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

step "build (warnings are errors)" make -s all
step "unit tests (cmocka)" make -s unit
step "sanitizer build + unit tests (ASan/UBSan)" make -s sanitize
step "ThreadSanitizer build of libidgen's threaded test" make -s tsan
step "integration tests on the sanitizer build" tests/integration/run.sh build/asan \
	tests/integration/test_netcat.sh tests/integration/test_nasty.sh \
	tests/integration/test_failover.sh tests/integration/test_fallback.sh \
	tests/integration/test_lease.sh tests/integration/test_window.sh \
	tests/integration/test_regress.sh tests/integration/test_restart.sh \
	tests/integration/test_resp.sh \
	tests/integration/test_http.sh tests/integration/test_grpc.sh \
	tests/integration/test_grpc_flood.sh \
	tests/integration/test_slow.sh tests/integration/test_libidgen.sh \
	tests/integration/test_resp_tx.sh tests/integration/test_owner.sh \
	tests/integration/test_bchange.sh tests/integration/test_witness.sh \
	tests/integration/test_views.sh tests/integration/test_refusal.sh
# The fault mix for 60 s here (make soak runs it for SOAK_SECONDS): make test stays
# within its 20 minutes.
step "integration tests (real MariaDB pair, netcat)" env FAULT_SECONDS="${FAULT_SECONDS:-60}" \
	tests/integration/run.sh build
step "fuzzing, bounded (libFuzzer + ASan/UBSan, every parser)" make -s fuzz-short

echo
echo "==== summary"
printf '%s\n' "${results[@]}"
if [ $failed -eq 0 ]; then
	echo "make test: ALL PASSED"
else
	echo "make test: $failed STEP(S) FAILED"
fi
exit $((failed > 0))
