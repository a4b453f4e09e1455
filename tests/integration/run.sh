#!/usr/bin/env bash
# run.sh [BUILD_DIR] [TEST...] - runs the integration tests one after another,
# each bounded by a timeout, and prints one PASS/FAIL line per test.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export BUILD=$(cd "${1:-$here/../../build}" && pwd)
shift || true
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("$here"/test_*.sh)
limit=${TEST_TIMEOUT:-300}
failed=0
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	if timeout -k 10 "$limit" bash "$t"; then
		printf 'PASS %-28s %4ss\n' "$name" $(($(date +%s) - start))
	else
		printf 'FAIL %-28s %4ss\n' "$name" $(($(date +%s) - start))
		failed=$((failed + 1))
	fi
done
exit $((failed > 0))
