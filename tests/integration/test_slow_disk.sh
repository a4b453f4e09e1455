#!/usr/bin/env bash
# In fallback with a slow disk (issue 31, item 7): every fdatasync of the state
# file's writer thread is slowed to 50 ms by strace fault injection (attached
# to that thread alone, idgen-state). Snowflake time is reserved ahead, off the
# loop, with a lead that follows the measured write times (docs/design.md 6.7),
# so ID requests (one connection, open loop at 2,000/s for 6 s) do not wait
# for the disk. The verdict is what the server controls (issue 36): no take
# waited for a reservation (lease_reserve_waits unchanged) and no save held the
# loop for the delay (state_save_loop_us_max not raised to half of it), in one
# of up to three runs; every ID was received and is unique.
# Before reserving ahead, each reservation (one per 100 ms of minting) was a
# take's wait that held the loop for the delay: both counters move in every
# run (P99.9 71-174 ms here), whatever the machine does.
# The P99.9 is reported; it is judged (below a fifth of the delay) only on a
# quiet run: its own P50 at quiet speed (under 200 us, so the machine was not
# stalling every request) and the load average below the core count. On a
# machine loaded by other work (a clean clone's make test saw load 8-10 on 2
# cores: P50 38 ms in one run, P99.9 27 ms with no wait and the loop never
# held in another) the tail is that machine's, not the disk's.
# A warm-up before the runs lets the server time the slow writes (the first
# slow write after the fast ones may be a wait: the lead then grows to cover it).
# A second connection takes 100 IDs/s from the warm-up to the end, so minting
# never pauses between runs: after a pause longer than the lead the clock has
# passed the reservation and the next take waits for its write whatever the
# lead (docs/design.md 6.7; on a loaded machine the test's own STATS calls
# between runs took that long: one wait at the start of every run).
. "$(dirname "$0")/lib.sh"

DELAY_US=50000
RATE=2000
SECS=6
command -v strace >/dev/null || fail "strace not installed (make deps)"
pair_up
idserver_start svc "$SVC_PORT"
st() { stat "$SVC_PORT" "$1"; }
mode_is() { [ "$(st mode)" = "$1" ]; }
wait_for "lease held" 10 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2 == \"lease_state\" { print \$3 }')\" = held ]"

# Fallback: both servers killed, the buffered ticket IDs taken.
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "no ticket server up" 10 tier_down "$SVC_PORT"
drain_all "$SVC_PORT"
wait_for "fallback mode" 5 mode_is fallback
# The episode's first reservation (a wait, on the fast disk) is behind us.
q "$SVC_PORT" 'IDS 1000\n' >/dev/null
[ "$(st ids_fallback)" -gt 0 ] || fail "no fallback ID: $(st mode)"

# The writer thread alone under strace: its fdatasync slowed, nothing else traced.
tid=""
for c in /proc/"$svc_PID"/task/*/comm; do
	[ "$(cat "$c" 2>/dev/null)" = idgen-state ] && tid=$(basename "$(dirname "$c")")
done
[ -n "$tid" ] || fail "no idgen-state thread in idserver $svc_PID"
strace -qq -o "$T_DIR/strace.out" -e trace=fdatasync \
	-e inject=fdatasync:delay_enter=$DELAY_US -p "$tid" 2>"$T_DIR/strace.err" &
PIDS+=("$!")
wait_for "strace attached to thread $tid" 10 bash -c \
	"awk '/^TracerPid:/ { exit \$2 == 0 }' /proc/$svc_PID/task/$tid/status"

# The keeper (minting without a pause), then the warm-up: the server times
# its first slow writes (not judged).
"$IDBENCH" --port "$SVC_PORT" --connections 1 --pipeline 1 --rate 100 --command ID \
	--duration 300 --dump "$T_DIR/ids-keep.txt" --label slow-disk-keep >"$T_DIR/bench-keep.out" 2>&1 &
keeper=$!
PIDS+=("$keeper")
"$IDBENCH" --port "$SVC_PORT" --connections 1 --pipeline 1 --rate "$RATE" --command ID \
	--duration 2 --dump "$T_DIR/ids-warm.txt" --label slow-disk-warm >"$T_DIR/bench-warm.out" 2>&1 ||
	fail "warm-up requests failed: $(grep '^RESULT' "$T_DIR/bench-warm.out")"
total=$(grep '^RESULT' "$T_DIR/bench-warm.out" | tr ' ' '\n' | awk -F= '$1 == "requests" { print $2 }')
log "warm-up: lease_reserve_waits $(st lease_reserve_waits), lease_reserve_lead_ms $(st lease_reserve_lead_ms)," \
	"state_write_us_max $(st state_write_us_max) us"

# Up to three runs: a machine busy enough can still outrun the largest lead
# (fallback_reserve_lead_max_ms) for a moment; the code before fails every run.
field() { tr ' ' '\n' <<<"$res" | awk -F= -v k="$1" '$1 == k { print $2 }'; }
quiet() { awk -v p="$p50" -v l="$(cut -d' ' -f1 /proc/loadavg)" -v n="$(nproc)" 'BEGIN { exit !(p < 200 && l < n) }'; }
ok=0 res0=$(st lease_reservations)
for run in 1 2 3; do
	waits0=$(st lease_reserve_waits) loop0=$(st state_save_loop_us_max)
	"$IDBENCH" --port "$SVC_PORT" --connections 1 --pipeline 1 --rate "$RATE" --command ID \
		--duration "$SECS" --dump "$T_DIR/ids-$run.txt" --label "slow-disk-$run" \
		>"$T_DIR/bench-$run.out" 2>&1 || fail "requests failed: $(grep '^RESULT' "$T_DIR/bench-$run.out")"
	res=$(grep '^RESULT' "$T_DIR/bench-$run.out")
	p50=$(field p50_us) p999=$(field p999_us) reqs=$(field requests)
	waits1=$(st lease_reserve_waits) loop1=$(st state_save_loop_us_max)
	total=$((total + reqs))
	# The server's own counts: no take waited, the loop not held for the delay.
	served=1
	[ "$waits1" = "$waits0" ] || served=0
	[ "$loop1" = "$loop0" ] || [ "$loop1" -lt $((DELAY_US / 2)) ] || served=0
	tail="P99.9 not judged (a busy machine: P50 $p50 us, load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores)"
	if quiet; then
		tail="P99.9 judged (a quiet run)"
		awk -v p="$p999" -v d=$DELAY_US 'BEGIN { exit !(p < d / 5) }' || { served=0; tail="$tail: at least $((DELAY_US / 5)) us"; }
	fi
	log "run $run: $(tr ' ' '\n' <<<"$res" | grep -E '^(requests|p50_us|p99_us|p999_us|max_us|errors)=' | tr '\n' ' ')" \
		"lease_reserve_waits $waits0 -> $waits1, state_save_loop_us_max $loop0 -> $loop1 us," \
		"lease_reserve_lead_ms $(st lease_reserve_lead_ms), load $(cut -d' ' -f1 /proc/loadavg); $tail"
	if [ "$served" = 1 ]; then
		ok=1
		break
	fi
done

# The keeper stops (SIGTERM: it reports what it received).
kill -TERM "$keeper"
wait "$keeper" || true
kres=$(grep '^RESULT' "$T_DIR/bench-keep.out") || fail "the keeper reported nothing: $(tail -n 3 "$T_DIR/bench-keep.out")"
total=$((total + $(tr ' ' '\n' <<<"$kres" | awk -F= '$1 == "requests" { print $2 }')))
log "keeper: $(tr ' ' '\n' <<<"$kres" | grep -E '^(requests|p50_us|p999_us|errors)=' | tr '\n' ' ')"

# The delay was in force: the writes took it, and there were writes (one per
# 100 ms of minting, or one per landing time when a write takes longer).
wmax=$(st state_write_us_max) res1=$(st lease_reservations)
[ "$wmax" -ge $((DELAY_US * 9 / 10)) ] || fail "state_write_us_max $wmax: the fdatasync was not slowed"
[ $((res1 - res0)) -ge $((run * SECS)) ] || fail "only $((res1 - res0)) reservations in $run runs of $SECS s"
ids_ok=$(check_unique "$T_DIR"/ids-*.txt) || fail "duplicate IDs"
[ "$ids_ok" = "$total" ] || fail "$ids_ok unique IDs for $total requests"
[ "$(cat "$T_DIR"/ids-*.txt | awk '$1 < 9007199254740992' | wc -l)" = 0 ] || fail "ticket IDs in fallback"
log "$total IDs, unique, all Snowflake; $((res1 - res0)) reservations written, state_write_us_max $wmax us"
[ "$ok" = 1 ] || fail "in each of 3 runs requests waited for the ${DELAY_US} us fdatasync (a take or the loop waited, or a quiet run's P99.9 was at least $((DELAY_US / 5)) us: above)"
log "ok: no take waited and the loop was not held with every fdatasync ${DELAY_US} us (P99.9 $p999 us)"
