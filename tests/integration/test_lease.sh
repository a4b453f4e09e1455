#!/usr/bin/env bash
# Leases on the real pair: two processes hold different worker numbers; a
# process killed with SIGKILL and restarted never gets a window overlapping
# the old one's; a clean shutdown releases the lease (visible in the table).
. "$(dirname "$0")/lib.sh"

pair_up
P1=$SVC_PORT P2=$((SVC_PORT + 1))
idserver_start svc1 "$P1" --lease_window_ms 2000 --lease_extend_ms 500
idserver_start svc2 "$P2" --lease_extend_ms 500
held() { [ "$(stat "$1" lease_state)" = held ]; }
wait_for "svc1 lease" 10 held "$P1"
wait_for "svc2 lease" 10 held "$P2"
w1=$(stat "$P1" lease_worker) w2=$(stat "$P2" lease_worker)
[ "$w1" != "$w2" ] || fail "both processes hold worker $w1"
log "svc1 holds worker $w1, svc2 worker $w2"
# row WORKER: "holder window_start window_end" from the server that owns it.
row() {
	local srv=$([ $(($1 % 2)) = 1 ] && echo odd || echo even)
	db_sql "$srv" "SELECT holder, window_start, window_end FROM idgen.idgen_leases WHERE worker = $1"
}
now_ms() { python3 -c 'import time; print(int(time.time() * 1000) - 1767225600000)'; }
grep -q ":${svc1_PID}:" <<<"$(row "$w1")" || fail "worker $w1's holder is not svc1 (pid $svc1_PID): $(row "$w1")"
grep -q ":${svc2_PID}:" <<<"$(row "$w2")" || fail "worker $w2's holder is not svc2: $(row "$w2")"

# svc2 mints in fallback while both servers are down, then shuts down cleanly.
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "svc2: both servers down" 10 tier_down "$P2"
# Past the buffered ticket IDs into Snowflake ones.
drain_pool "$P2"
last=$(q "$P2" 'IDS 1000\n' | awk '{ print $NF }')
[ "$last" -ge 9007199254740992 ] || fail "svc2 minted no Snowflake ID ($last)"
last_ts=$(python3 -c "print($last >> 22)")
db_start odd
db_start even
wait_for "svc2 extends again" 15 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $P2 | grep -q '^STAT mode ticket'"
sleep 1.2
kill -TERM "$svc2_PID"
wait_for "svc2 exit" 10 bash -c "! kill -0 $svc2_PID 2>/dev/null"
grep -q "lease released: worker $w2" "$T_DIR/svc2.log" || fail "svc2 did not log the release"
read -r holder start end <<<"$(row "$w2")"
[ "$end" = "$last_ts" ] || fail "released window_end $end, last ms minted was $last_ts"
log "svc2 released worker $w2: window_end = $end, the last ms it minted"

# svc1 killed: its row keeps its window. Restarted with every other number
# taken, it must wait for that window to end and then start after it.
read -r old_holder old_start old_end <<<"$(row "$w1")"
kill -KILL "$svc1_PID"
wait_for "svc1 gone" 5 bash -c "! kill -0 $svc1_PID 2>/dev/null"
sleep 0.6
read -r h s old_end <<<"$(row "$w1")"
[ "$h" = "$old_holder" ] || fail "worker $w1 changed holder after the kill"
far=99999999999999
db_sql odd "UPDATE idgen.idgen_leases SET window_end = $far WHERE worker <> $w1"
db_sql even "UPDATE idgen.idgen_leases SET window_end = $far WHERE worker <> $w1"
idserver_start svc1b "$P1" --lease_window_ms 2000 --lease_extend_ms 500
wait_for "svc1b lease" 15 held "$P1"
read -r new_holder new_start new_end <<<"$(row "$w1")"
[ "$(stat "$P1" lease_worker)" = "$w1" ] || fail "svc1b did not get the only free number $w1"
[ "$new_holder" != "$old_holder" ] || fail "the holder did not change: $new_holder"
[ "$new_start" -gt "$old_end" ] || fail "new window starts at $new_start, old one ended at $old_end"
log "worker $w1 reclaimed by a new incarnation: window $new_start.. after the old end $old_end"

# A third process finds no free number: no lease, tickets still served.
idserver_start svc3 "$((SVC_PORT + 2))"
# Its claim, which runs after the listen, found none on either server (waited
# for, not slept for: a loaded machine took longer than the 1 s slept before).
wait_for "svc3's claim failed on both servers" 10 bash -c \
	"grep -q 'no free worker number on the odd' '$T_DIR/svc3.log' && grep -q 'no free worker number on the even' '$T_DIR/svc3.log'"
wait_buffered "$((SVC_PORT + 2))"
[ "$(stat "$((SVC_PORT + 2))" lease_state)" = none ] || fail "svc3 got a lease from a full table"
[[ "$(q "$((SVC_PORT + 2))" 'ID\n')" =~ ^[0-9]+$ ]] || fail "svc3 does not serve tickets"
log "ok"
