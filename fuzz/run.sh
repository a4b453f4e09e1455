#!/usr/bin/env bash
# fuzz/run.sh BUILD_DIR SECONDS - runs every libFuzzer harness for SECONDS,
# starting from its committed seed corpus (fuzz/corpus/NAME, copied so new
# inputs stay out of the tree). A crash leaves its input in
# BUILD_DIR/artifacts/ and fails the run; add it to fuzz/corpus/NAME so it is
# replayed by every later run (a regression test).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 secs=$2
failed=0
mkdir -p "$build/artifacts" "$build/corpus"
for h in "$here"/fuzz_*.c; do
	name=$(basename "$h" .c)
	bin=$build/$name
	seeds=$here/corpus/${name#fuzz_}
	work=$build/corpus/${name#fuzz_}
	mkdir -p "$work"
	[ -d "$seeds" ] && cp -n "$seeds"/* "$work"/ 2>/dev/null
	start=$(date +%s)
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix="$build/artifacts/$name-" "$work" >"$build/$name.log" 2>&1; then
		printf 'PASS %-16s %4ss  %s\n' "$name" $(($(date +%s) - start)) \
		    "$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$build/$name.log" | grep -oE '[0-9]+$') runs"
	else
		printf 'FAIL %-16s: %s\n' "$name" "$(grep -m1 -E 'ERROR|SUMMARY|runtime error|deadly' "$build/$name.log")"
		tail -n 20 "$build/$name.log" >&2
		failed=$((failed + 1))
	fi
done
exit $((failed > 0))
