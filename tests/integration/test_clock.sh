#!/usr/bin/env bash
# The clock rules with a real clock fault (libfaketime, stepped through a file):
# a clock skewed beyond max_clock_skew_ms is refused a lease with a clear
# message, and an extend of a held lease likewise (a clock 1 h fast does not
# push window_end into the future); a small backward step is absorbed; a large one gives ERR CLOCK while
# no server answers, then a fresh worker number once one does; never a duplicate.
. "$(dirname "$0")/lib.sh"

FT_FILE=$T_DIR/faketime
set_clock() { echo "$1" >"$FT_FILE"; }
set_clock "+10s"
IDSERVER_WRAP=$(faketime_env FAKETIME_TIMESTAMP_FILE="$FT_FILE" FAKETIME_NO_CACHE=1)

pair_up
idserver_start svc "$SVC_PORT" --backstep_tolerance_ms 2000 --lease_extend_ms 500 --reprobe_max_ms 500
st() { stat "$SVC_PORT" "$1"; }

# 1. Skewed +10 s: no lease, a message naming the setting; tickets still served.
wait_for "lease refused" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_state refused'"
wait_buffered "$SVC_PORT"
grep -qE "lease REFUSED: local clock is \+(99[0-9][0-9]|10[0-9]{3}) ms off the .* server's \(max_clock_skew_ms=1000\)" "$T_DIR/svc.log" ||
	fail "no clear skew message: $(grep -m1 lease "$T_DIR/svc.log")"
[[ "$(q "$SVC_PORT" 'ID\n')" =~ ^[0-9]+$ ]] || fail "tickets not served while the lease is refused"
log "+10 s skew: lease refused ($(grep -m1 -o 'local clock is [^:]*' "$T_DIR/svc.log"))"
set_clock "-10s"
sleep 1.2
[ "$(st lease_state)" = refused ] || fail "-10 s skew: lease state $(st lease_state)"
log "-10 s skew: lease refused"

# Clock fixed: the claim goes through on the next try.
set_clock "+0"
wait_for "lease held" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_state held'"
w1=$(st lease_worker)
log "clock fixed: worker $w1 leased"

# 1b. The clock jumps 1 h ahead while the lease is held: no extend may push
# window_end an hour into the future in the database (the claim's skew rule on
# every extend). Refused, counted, logged once; the window runs on to its end,
# and the lease shows expired once the (fast) clock is past it.
srv1=$([ $((w1 % 2)) = 1 ] && echo odd || echo even)
layout_now() { python3 -c 'import time; print(int(time.time() * 1000) - 1767225600000)'; }
ext0=$(st lease_extends)
set_clock "+3600s"
sleep 2.5		# five lease_extend_ms ticks
end=$(db_sql "$srv1" "SELECT window_end FROM idgen.idgen_leases WHERE worker = $w1")
[ "$end" -le $(( $(layout_now) + 300000 + 2000 )) ] ||
	fail "a clock 1 h fast pushed worker $w1's window_end $(( end - $(layout_now) )) ms ahead"
[ "$(st lease_extends)" -le $((ext0 + 1)) ] || fail "extends went on with the clock 1 h fast"
[ "$(st lease_extend_skew_refusals)" -ge 3 ] || fail "extend skew refusals: $(st lease_extend_skew_refusals)"
[ "$(grep -c 'lease: extend REFUSED: local clock is +3[56][0-9]\{5\} ms off the' "$T_DIR/svc.log")" = 1 ] ||
	fail "extend refusal not logged once: $(grep -c 'extend REFUSED' "$T_DIR/svc.log") lines"
[ "$(st lease_state)" = expired ] || fail "lease_state $(st lease_state) with the clock past the window"
[[ "$(q "$SVC_PORT" 'ID\n')" =~ ^[0-9]+$ ]] || fail "tickets not served with the clock 1 h fast"
set_clock "+0"
wait_for "extends again" 10 bash -c "[ \$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2==\"lease_extends\"{print \$3}') -gt $((ext0 + 1)) ]"
grep -q 'lease: the clocks agree again' "$T_DIR/svc.log" || fail "no log line when the clocks agree again"
[ "$(st lease_state)" = held ] || fail "lease_state $(st lease_state) after the clock was fixed"
log "clock 1 h fast: $(st lease_extend_skew_refusals) extends refused, window_end kept (now +$(( end - $(layout_now) )) ms); extends resumed"

# to_ranges OUT: reply lines of IDs on stdin -> "first count" lines (exact integers).
to_ranges() {
	python3 -c '
import sys
out = open(sys.argv[1], "a")
for line in sys.stdin:
    w = line.split()
    if not w or w[0] == "ERR":
        continue
    ids = list(map(int, w))
    assert ids == sorted(ids) and len(set(ids)) == len(ids), line
    for i in ids:
        out.write("%d 1\n" % i)' "$1"
}

# 2. Another process whose clock runs 10 s ahead, allowed by a wide
# max_clock_skew_ms, holds a lease; then the outage and the clock steps.
FT_FILE=$T_DIR/faketime-b
set_clock "+10s"
IDSERVER_WRAP=$(faketime_env FAKETIME_TIMESTAMP_FILE="$FT_FILE" FAKETIME_NO_CACHE=1)
B=$((SVC_PORT + 1))
idserver_start svcb "$B" --backstep_tolerance_ms 2000 --max_clock_skew_ms 20000 \
	--lease_extend_ms 500 --reprobe_max_ms 500
wait_for "svcb lease" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $B | grep -q '^STAT lease_state held'"
w1=$(stat "$B" lease_worker)
st() { stat "$B" "$1"; }
mint() { for _ in $(seq "$1"); do echo 'IDS 1000'; done | timeout 30 nc -N 127.0.0.1 "$B"; }
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$B"
drain_pool "$B"
mint 300 | to_ranges "$T_DIR/ids.txt"

# A small backward step (1 s, tolerance 2 s): absorbed, IDs keep coming.
set_clock "+9s"
out=$(mint 20)
printf '%s\n' "$out" | to_ranges "$T_DIR/ids.txt"
! grep -q '^ERR' <<<"$out" || fail "small step: $(grep -m1 '^ERR' <<<"$out")"
[ "$(st clock_absorbed_backsteps)" -ge 1 ] || fail "small step not counted"
log "1 s backward step absorbed"

# 3. A large step (the 10 s-fast clock corrected) while no server answers:
# ERR CLOCK, nothing minted. (IDS 1000: more than the ticket IDs still
# buffered after drain_pool, so the fallback answers.)
set_clock "+0"
out=$(q "$B" 'IDS 1000\nIDS 1000\n')
[ "$(grep -c '^ERR CLOCK ' <<<"$out")" = 2 ] || fail "large step: '$out'"
[ "$(st clock_large_backsteps)" -ge 1 ] && [ "$(st err_clock)" -ge 2 ] || fail "large step not counted"
log "10 s backward step: ERR CLOCK ($(head -n 1 <<<"$out" | cut -c1-60)...)"

# 4. A server returns: a fresh worker number is claimed at the corrected time.
db_start odd
db_start even
wait_for "fresh worker" 15 bash -c "[ \$(printf 'STATS\n' | nc -N 127.0.0.1 $B | awk '\$2==\"lease_worker\"{print \$3}') != $w1 ]"
w2=$(st lease_worker)
log "fresh worker $w2 (was $w1)"
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down again" 10 tier_down "$B"
drain_pool "$B"
out=$(mint 300)
! grep -q '^ERR' <<<"$out" || fail "after the fresh claim: $(grep -m1 '^ERR' <<<"$out")"
printf '%s\n' "$out" | to_ranges "$T_DIR/ids.txt"
python3 - "$T_DIR/ids.txt" "$w1" "$w2" <<'PY' || fail "Snowflake IDs of the wrong workers"
import sys
w = {}
for line in open(sys.argv[1]):
    i = int(line.split()[0])
    if i >= 2**53:
        w[(i >> 12) & 1023] = w.get((i >> 12) & 1023, 0) + 1
want = {int(sys.argv[2]), int(sys.argv[3])}
print("Snowflake IDs per worker:", w, file=sys.stderr)
sys.exit(0 if set(w) == want else 1)
PY
total=$(check_unique "$T_DIR/ids.txt") || fail "duplicate IDs across the clock steps"
log "ok: $total IDs across the steps, no duplicate"
