#!/usr/bin/env bash
# One MariaDB killed with SIGKILL under load: the other serves and no request
# fails; restarted, it is used again. Then the same for the other server.
. "$(dirname "$0")/lib.sh"

pair_up
idserver_start svc "$SVC_PORT"
wait_buffered "$SVC_PORT"

st() { stat "$SVC_PORT" "$1"; }
state_is() { [ "$(st "$1_state")" = "$2" ]; }

"$IDBENCH" --port "$SVC_PORT" --connections 20 --pipeline 4 --command MIX --duration 12 \
	--dump "$T_DIR/ids.txt" --label failover >"$T_DIR/bench.out" 2>&1 & bench=$!
sleep 1.5

for role in odd even; do
	before=$(st "${role}_tickets")
	kill -KILL "$(db_pid "$role")"
	log "killed the $role server (SIGKILL) under load"
	wait_for "$role marked down" 5 bash -c "! printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT ${role}_state up'"
	sleep 1.5
	db_start "$role"
	log "restarted the $role server"
	wait_for "$role up again" 10 state_is "$role" up
	after=$(st "${role}_tickets")
	wait_for "$role tickets again" 10 bash -c "[ \$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2==\"${role}_tickets\"{print \$3}') -gt $after ]"
	log "$role: $before tickets before the kill, used again after the restart"
done

wait $bench || fail "requests failed during failover: $(grep '^RESULT' "$T_DIR/bench.out")"
grep '^RESULT' "$T_DIR/bench.out" | cut -d' ' -f1-10 >&2
total=$(check_unique "$T_DIR/ids.txt") || fail "duplicate IDs"
u=$(st err_unavailable)
[ "$u" = 0 ] || fail "ERR UNAVAILABLE during failover: err_unavailable=$u; $(q "$SVC_PORT" 'STATS\n' |
	grep -E ' (mode|err_|lease_(state|worker|server|claims|claim_failures)|refill|ids_fallback|ids_buffered)' | cut -d' ' -f2- | tr '\n' ' ')"
[ "$(st odd_failures)" -ge 1 ] && [ "$(st even_failures)" -ge 1 ] || fail "kills not counted"
log "ok: $total IDs, none failed, none duplicated"
