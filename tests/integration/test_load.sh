#!/usr/bin/env bash
# Two service processes on one pair, many pipelining connections each: millions
# of IDs, every one collected, no duplicate across processes; both servers
# carry load with the right parity; BLOCK replies dense and inside one block.
. "$(dirname "$0")/lib.sh"

pair_up
idserver_start svc1 "$SVC_PORT"
idserver_start svc2 "$((SVC_PORT + 1))"
B=$(stat "$SVC_PORT" block_size)

# Both processes under load at once: ID/IDS/BLOCK mixed, pipelined.
"$IDBENCH" --port "$SVC_PORT" --connections 40 --pipeline 8 --command MIX --seed 1 \
	--duration 3 --dump "$T_DIR/ids1.txt" --label svc1 >"$T_DIR/bench1.out" 2>&1 & b1=$!
"$IDBENCH" --port "$((SVC_PORT + 1))" --connections 40 --pipeline 8 --command MIX --seed 2 \
	--duration 3 --dump "$T_DIR/ids2.txt" --label svc2 >"$T_DIR/bench2.out" 2>&1 & b2=$!
"$IDBENCH" --port "$SVC_PORT" --connections 4 --pipeline 32 --command ID \
	--duration 3 --dump "$T_DIR/ids3.txt" --label single >"$T_DIR/bench3.out" 2>&1 & b3=$!
wait $b1 || fail "idbench on svc1: $(tail -n 2 "$T_DIR/bench1.out")"
wait $b2 || fail "idbench on svc2: $(tail -n 2 "$T_DIR/bench2.out")"
wait $b3 || fail "idbench single IDs: $(tail -n 2 "$T_DIR/bench3.out")"
grep -h '^RESULT' "$T_DIR"/bench*.out | cut -d' ' -f1-7 >&2

# Every ID from both processes, checked together.
total=$(check_unique "$T_DIR"/ids*.txt) || fail "duplicate IDs across the two processes"
[ "$total" -ge 1000000 ] || fail "only $total IDs collected"
log "$total IDs from 2 processes, no duplicate"

# Every ID is a ticket ID; both parities appear, so both servers carried load.
awk -v B="$B" '{ t = int($1 / B); if ($1 < B || $1 + $2 > 9007199254740992) bad++; p[t % 2]++ }
	END { if (bad || !p[0] || !p[1]) exit 1 }' "$T_DIR"/ids*.txt ||
	fail "IDs outside the ticket region, or one server never used"
for port in "$SVC_PORT" "$((SVC_PORT + 1))"; do
	[ "$(stat "$port" err_unavailable)" = 0 ] || fail "UNAVAILABLE errors on $port"
	o=$(stat "$port" odd_last_ticket); e=$(stat "$port" even_last_ticket)
	[ $((o % 2)) = 1 ] && [ $((e % 2)) = 0 ] || fail "last tickets odd=$o even=$e"
done
# The servers' own counters: every ticket the odd server issued is odd, and vice versa.
[ $(( $(db_sql odd "SELECT MAX(id) FROM idgen.tickets64") % 2 )) = 1 ] || fail "odd server issued an even ticket"
[ $(( $(db_sql even "SELECT MAX(id) FROM idgen.tickets64") % 2 )) = 0 ] || fail "even server issued an odd ticket"

# BLOCK replies: n dense IDs inside one ticket block, never overlapping.
for _ in $(seq 400); do echo 'BLOCK 3000'; done | timeout 20 nc -N 127.0.0.1 "$SVC_PORT" >"$T_DIR/blocks.txt"
[ "$(wc -l <"$T_DIR/blocks.txt")" = 400 ] || fail "400 BLOCK requests, $(wc -l <"$T_DIR/blocks.txt") replies"
awk -v B="$B" '$2 != 3000 || int($1 / B) != int(($1 + $2 - 1) / B) { exit 1 }' "$T_DIR/blocks.txt" ||
	fail "a BLOCK reply crosses a ticket block"
check_unique "$T_DIR/blocks.txt" >/dev/null || fail "BLOCK replies overlap"
log "ok"
