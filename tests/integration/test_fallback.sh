#!/usr/bin/env bash
# Both MariaDB servers killed (SIGKILL), then both hung (SIGSTOP), under load:
# the fallback keeps answering, no request fails while the window is valid, and
# with the servers back the service returns to ticket IDs by itself. Reports the
# P99.9 latency of each run (the switch included).
. "$(dirname "$0")/lib.sh"

pair_up
idserver_start svc "$SVC_PORT" --lease_extend_ms 1000
st() { stat "$SVC_PORT" "$1"; }
mode_is() { [ "$(st mode)" = "$1" ]; }
wait_for "lease held" 10 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_state held'"
wait_buffered "$SVC_PORT"
worker=$(st lease_worker)

# run_fault NAME DOWN_CMD UP_CMD: load for 9 s, the fault from 2 s to about 6 s.
# Two clients: a closed-loop mix (volume: ID, IDS, BLOCK as fast as possible; in
# fallback it is capped by one worker's 4,096,000 IDs/s, so it queues) and an
# open-loop stream of single IDs at 5,000/s whose latency shows the switch itself.
run_fault() {
	local name=$1 down=$2 up=$3 mix lat ids
	"$IDBENCH" --port "$SVC_PORT" --connections 20 --pipeline 4 --command MIX --duration 9 \
		--dump "$T_DIR/ids-$name-mix.txt" --label "$name-mix" \
		>"$T_DIR/bench-$name-mix.out" 2>&1 & mix=$!
	"$IDBENCH" --port "$SVC_PORT" --connections 10 --rate 5000 --command ID --duration 9 \
		--dump "$T_DIR/ids-$name-lat.txt" --label "$name-switch" \
		--latency-out "$T_DIR/lat-$name.txt" >"$T_DIR/bench-$name-lat.out" 2>&1 & lat=$!
	sleep 2
	before=$(st ids_fallback)
	eval "$down"
	log "$name: both servers down under load"
	wait_for "$name: fallback mode" 5 mode_is fallback
	wait_for "$name: fallback IDs issued" 5 bash -c "[ \$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2==\"ids_fallback\"{print \$3}') -gt $before ]"
	sleep 2
	eval "$up"
	log "$name: both servers back"
	wait_for "$name: ticket mode again" 15 mode_is ticket
	wait $mix || fail "$name: requests failed: $(grep '^RESULT' "$T_DIR/bench-$name-mix.out")"
	wait $lat || fail "$name: requests failed: $(grep '^RESULT' "$T_DIR/bench-$name-lat.out")"
	for f in "$T_DIR/bench-$name-mix.out" "$T_DIR/bench-$name-lat.out"; do
		grep '^RESULT' "$f" | tr ' ' '\n' |
			grep -E '^(label|requests|ids|p50_us|p99_us|p999_us|max_us|errors)=' | tr '\n' ' ' >&2
		echo >&2
	done
	# Ticket IDs again: below 2^53, from a block of a live server.
	id=$(q "$SVC_PORT" 'IDS 1000\n' | awk '{ print $NF }')
	[ "$id" -lt 9007199254740992 ] || fail "$name: still minting Snowflake IDs after recovery ($id)"
	ids=$(awk '$1 >= 9007199254740992 { n += $2 } END { print n + 0 }' "$T_DIR"/ids-$name-*.txt)
	[ "$ids" -gt 0 ] || fail "$name: the clients got no Snowflake IDs"
	log "$name: $ids Snowflake IDs received; switch latency (5,000 ID/s open loop):" \
		"$(grep -oE 'p99_us=[0-9.]+|p999_us=[0-9.]+|max_us=[0-9.]+' "$T_DIR/bench-$name-lat.out" | tr '\n' ' ')"
}

run_fault kill 'kill -KILL $(db_pid odd) $(db_pid even)' 'db_start odd; db_start even'
run_fault hang 'kill -STOP $(db_pid odd) $(db_pid even)' 'kill -CONT $(db_pid odd) $(db_pid even)'

# Every ID of both runs, ticket and Snowflake, unique (idbench checked each is in
# [1, 2^63)); the Snowflake ones carry our leased worker number.
total=$(check_unique "$T_DIR"/ids-*.txt) || fail "duplicate IDs"
sample=$(awk '$1 >= 9007199254740992 { print $1; exit }' "$T_DIR/ids-kill-mix.txt")
dec=$(q "$SVC_PORT" "DECODE $sample\n")
[[ "$dec" =~ ^snowflake\ time=.*\ worker=$worker\ seq=[0-9]+$ ]] || fail "DECODE $sample -> '$dec' (worker $worker)"
[ "$(st err_unavailable)" = 0 ] && [ "$(st err_clock)" = 0 ] || fail "errors during the faults"
log "ok: $total IDs over both faults, no duplicate, no failed request"
