#!/usr/bin/env bash
# Restart during an outage: with both ticket servers dead, idserver is killed
# with SIGKILL and restarted; it resumes its lease window from the state file and
# serves Snowflake IDs at once, strictly above everything it minted before, also
# with its clock set back 400 ms (libfaketime); once a server answers it
# re-adopts the lease row. A corrupt or foreign (another machine's) state file is not resumed (one
# log line, ERR UNAVAILABLE, never a guess). Every ID collected: no duplicate.
. "$(dirname "$0")/lib.sh"

BACK=$(faketime_env FAKETIME=-0.4s)
pair_up
IDS=$T_DIR/ids.txt
: >"$IDS"
FLAGS=(--lease_window_ms 60000 --lease_extend_ms 500 --reprobe_max_ms 300 --fallback_reserve_ms 100)
STATE=$T_DIR/svc.state

# mint N: N x IDS 1000 from svc into $IDS; prints "errors max_id".
mint() { mint_ids "$SVC_PORT" "$1" "$IDS"; }
held() { [ "$(stat "$SVC_PORT" lease_state)" = held ]; }
kill_svc() {
	kill -KILL "$svc_PID"
	wait "$svc_PID" 2>/dev/null || true	# reaped quietly (no "Killed" line)
	wait_for "svc gone" 10 bash -c "! kill -0 $svc_PID 2>/dev/null"
}

idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
wait_for "a lease" 10 held
w=$(stat "$SVC_PORT" lease_worker)
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_pool "$SVC_PORT"
read -r errs top <<<"$(mint 200)"
[ "$errs" = 0 ] || fail "fallback before the kill: $errs errors"
[ "$top" -ge 9007199254740992 ] || fail "no Snowflake IDs before the kill"
log "worker $w minted up to $top in fallback"

# resumed_ok WHAT: served at once, same worker, strictly above the previous top.
resumed_ok() {
	local first e t
	grep -q "lease resumed from the state file: worker $w " "$T_DIR/svc.log" ||
		fail "$1: no resumption logged: $(grep -m2 'state file' "$T_DIR/svc.log")"
	first=$(q "$SVC_PORT" 'ID\n')
	[[ "$first" =~ ^[0-9]+$ ]] || fail "$1: no ID at once: $first"
	[ "$first" -gt "$top" ] || fail "$1: $first is not above $top, minted before the kill"
	[ $(( (first >> 12) & 1023 )) = "$w" ] || fail "$1: ID of worker $(( (first >> 12) & 1023 )), want $w"
	echo "$first 1" >>"$IDS"
	read -r e t <<<"$(mint 200)"
	[ "$e" = 0 ] || fail "$1: $e errors after the restart"
	log "$1: resumed worker $w, first ID $first > $top"
	top=$t
}

# 1. SIGKILL during the outage, restarted: resumes its window at once.
kill_svc
idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
resumed_ok "restart"

# 2. Again, with the clock 400 ms behind (a clock set back across the restart).
kill_svc
IDSERVER_WRAP=$BACK idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
resumed_ok "restart with the clock 400 ms back"

# 3. A server answers: the row is re-adopted under this incarnation's name.
db_start odd
db_start even
wait_for "lease re-adopted" 15 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2==\"lease_adopted\"{print \$3}')\" = 1 ]"
srv=$([ $((w % 2)) = 1 ] && echo odd || echo even)
holder=$(db_sql "$srv" "SELECT holder FROM idgen.idgen_leases WHERE worker = $w")
grep -q ":$svc_PID:" <<<"$holder" || fail "worker $w's row names $holder, not pid $svc_PID"
[ "$(stat "$SVC_PORT" lease_worker)" = "$w" ] || fail "worker changed on adoption"
log "re-adopted worker $w ($holder)"

# 4. A corrupt state file: not resumed, moved aside, ERR UNAVAILABLE while the
# servers are down (nothing is guessed).
kill -KILL "$(db_pid odd)" "$(db_pid even)"
kill_svc
python3 "$ROOT/tests/integration/statefile.py" corrupt "$STATE"
idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
grep -q "state file $STATE is corrupt (checksum mismatch" "$T_DIR/svc.log" ||
	fail "corrupt file not reported: $(grep -m1 'state file' "$T_DIR/svc.log")"
[ -f "$STATE.corrupt" ] || fail "corrupt file not kept aside"
! grep -q "lease resumed" "$T_DIR/svc.log" || fail "a corrupt file was resumed"
out=$(q "$SVC_PORT" 'ID\n')
[[ "$out" == "ERR UNAVAILABLE"* ]] || fail "corrupt file: '$out', want ERR UNAVAILABLE"
log "corrupt state file: not resumed ($out)"

# 5. A foreign state file (written on another machine): not resumed either.
db_start odd
db_start even
wait_for "a new lease" 15 held
kill -KILL "$(db_pid odd)" "$(db_pid even)"
kill_svc
python3 "$ROOT/tests/integration/statefile.py" edit "$STATE" '^owner [0-9a-zA-Z-]+' 'owner 00000000000000000000000000e15e0e'
idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
grep -q "state file $STATE is foreign: written on another machine (machine-id 00000000000000000000000000e15e0e" "$T_DIR/svc.log" ||
	fail "foreign file not reported: $(grep 'state file' "$T_DIR/svc.log")"
out=$(q "$SVC_PORT" 'ID\n')
[[ "$out" == "ERR UNAVAILABLE"* ]] || fail "foreign file: '$out', want ERR UNAVAILABLE"
log "foreign state file: not resumed ($out)"
# Stamped with this host now, the foreign lease must not become resumable.
kill_svc
idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
! grep -q "lease resumed" "$T_DIR/svc.log" || fail "the foreign lease was resumed after a restart"
out=$(q "$SVC_PORT" 'ID\n')
[[ "$out" == "ERR UNAVAILABLE"* ]] || fail "after the foreign file: '$out', want ERR UNAVAILABLE"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the restarts"
log "ok: $n IDs, no duplicate"
