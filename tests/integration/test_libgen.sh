#!/usr/bin/env bash
# libidgen as a generator (issue 35, docs/design.md 11.8): a mariadb:// address
# makes the library lease a worker number from the tier itself (idserver's own
# src/lease.c) and mint Snowflake IDs in the process. On a pair with 6 worker
# rows per server: the idgen command mints after a claim and releases; a claim
# that finds no free number fails with a clear error (a pair of another
# region's shape is refused: test_libshape); then library processes
# (threads, a fork, a SIGKILL, a SIGSTOP past the lease window) mint beside an
# idserver in fallback minting from its own lease; every ID collected, none
# twice, and the frozen process mints nothing after SIGCONT until it holds a
# lease again.
. "$(dirname "$0")/lib.sh"
LOAD=$BUILD/idgen_load
IDGEN=$BUILD/idgen

pair_up
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password")
export IDGEN_DB_PASSWORD
# Worker numbers are scarce here: 0..11, six on each server.
for role in odd even; do
	db_restored "$role" "DELETE FROM idgen.idgen_leases WHERE worker > 11"
done
TIER=mariadb://idgen@127.0.0.1:$ODD_PORT,127.0.0.1:$EVEN_PORT/idgen
# A short window, so that a process stopped for 6 s outlives it.
U="$TIER?lease_window_ms=3000&lease_extend_ms=500"
D=$T_DIR/ids
mkdir -p "$D"
leases() { db_sql "$1" "SELECT worker, holder, window_start, window_end FROM idgen.idgen_leases"; }

log "one process, one thread: the idgen command claims, mints 1000 Snowflake IDs, releases"
"$IDGEN" --server "$U" ids 1000 >"$T_DIR/cli.out" 2>&1 || fail "idgen ids: $(head -n 3 "$T_DIR/cli.out")"
[ "$(sort -u "$T_DIR/cli.out" | wc -l)" = 1000 ] || fail "idgen ids: not 1000 distinct IDs"
read -r w ts < <(python3 -c '
import sys
ids = [int(l) for l in open(sys.argv[1])]
assert ids == sorted(ids) and all(i >> 53 for i in ids), "not ascending Snowflake IDs"
ws = {(i >> 12) & 1023 for i in ids}
assert len(ws) == 1, ws
print(ws.pop(), max(i >> 22 for i in ids))' "$T_DIR/cli.out") || fail "idgen ids: not one worker's Snowflake IDs"
[ "$w" -le 11 ] || fail "worker $w is not a row of the tier"
role=$([ $((w % 2)) = 1 ] && echo odd || echo even)
row=$(leases "$role" | awk -v w="$w" '$1 == w')
log "worker $w ($role): $row"
# Released: the window written back to the last ms minted, free from then on.
[ "$(echo "$row" | awk '{ print $4 }')" = "$ts" ] || fail "worker $w not released at its last ms $ts: $row"
"$IDGEN" decode "$(head -n 1 "$T_DIR/cli.out")" | has "snowflake.*worker=$w " || fail "decode"
sed 's/$/ 1/' "$T_DIR/cli.out" >"$D/cli"

log "no free worker number: a clear error (the rows set aside for it)"
for role in odd even; do
	db_restored "$role" "CREATE TABLE idgen.leases_aside AS SELECT * FROM idgen.idgen_leases; DELETE FROM idgen.idgen_leases"
done
if "$IDGEN" --server "$TIER" ids 1 >"$T_DIR/none.out" 2>&1; then
	fail "a claim with no free number minted: $(cat "$T_DIR/none.out")"
fi
for role in odd even; do
	db_restored "$role" "INSERT INTO idgen.idgen_leases SELECT * FROM idgen.leases_aside; DROP TABLE idgen.leases_aside"
done
cat "$T_DIR/none.out" >&2
has 'no Snowflake lease: no free worker number on the (odd|even) server' -E "$T_DIR/none.out" ||
	fail "no clear error: $(cat "$T_DIR/none.out")"

log "two threads and a fork: each process its own worker number"
"$LOAD" -s "$U" -t 2 -d 2 --fork --stream --dump "$D/fork" >"$T_DIR/fork.out" || fail "fork: $(cat "$T_DIR/fork.out")"
cat "$T_DIR/fork.out" >&2
grep -q 'role=child.*forks=1 .*lease_claims=1' "$T_DIR/fork.out" || fail "the child did not claim its own number"

log "an idserver in fallback minting from its own lease (its pair behind proxies, partitioned)"
PO=$((SVC_PORT + 10))
PE=$((SVC_PORT + 11))
python3 "$ROOT/tests/integration/delayproxy.py" "$PO" "$ODD_PORT" 0 >"$T_DIR/proxy-odd.log" 2>&1 &
PROXY_ODD=$!
PIDS+=("$PROXY_ODD")
python3 "$ROOT/tests/integration/delayproxy.py" "$PE" "$EVEN_PORT" 0 >"$T_DIR/proxy-even.log" 2>&1 &
PROXY_EVEN=$!
PIDS+=("$PROXY_EVEN")
wait_for "the proxies" 10 bash -c "nc -z 127.0.0.1 $PO && nc -z 127.0.0.1 $PE"
idserver_start svc "$SVC_PORT" --odd_port "$PO" --even_port "$PE" --lease_window_ms 60000 \
	--query_timeout_ms 800 --connect_timeout_ms 800 --reprobe_max_ms 500 \
	--prefetch_blocks 1 --prefetch_max_blocks 1
svc_is() { [ "$(stat "$SVC_PORT" "$1")" = "$2" ]; }
wait_for "idserver's lease" 10 svc_is lease_state held
kill -USR1 "$PROXY_ODD" "$PROXY_EVEN"
# Its buffered tickets are handed out first (collected too).
for _ in $(seq 1 60); do
	[ "$(stat "$SVC_PORT" ids_fallback)" -gt 0 ] && break
	mint_ids "$SVC_PORT" 100 "$D/svc" >/dev/null
done
[ "$(stat "$SVC_PORT" ids_fallback)" -gt 0 ] || fail "idserver hands out no Snowflake ID: $(q "$SVC_PORT" 'STATS\n' | grep mode)"
log "idserver: fallback, worker $(stat "$SVC_PORT" lease_worker)"
( end=$((SECONDS + 12)); while [ $SECONDS -lt $end ]; do mint_ids "$SVC_PORT" 20 "$D/svc" >/dev/null; done ) &
SVC_LOAD=$!

log "library processes beside it: 4 threads; 2 threads and a fork; one SIGKILLed; one SIGSTOPped past its window"
"$LOAD" -s "$U" -t 4 -d 12 --mix --pace 1000 --stream --dump "$D/a" >"$T_DIR/a.out" 2>&1 &
A=$!
"$LOAD" -s "$U" -t 2 -d 12 --fork --pace 1000 --stream --dump "$D/b" >"$T_DIR/b.out" 2>&1 &
B=$!
"$LOAD" -s "$U" -t 2 -d 12 --pace 1000 --stream --dump "$D/c" >"$T_DIR/c.out" 2>&1 &
C=$!
PIDS+=("$C")
"$LOAD" -s "$U" -t 1 -d 14 --pace 1000 --allow-errors --stream --dump "$D/p" >"$T_DIR/p.out" 2>&1 &
P=$!
sleep 3
kill -KILL "$C"
kill -STOP "$P"
log "SIGKILL $C, SIGSTOP $P"
sleep 0.5
read -r PW PE_END < <(for role in odd even; do leases "$role"; done | awk -v p=":$P:" 'index($2, p) { print $1, $4 }')
[ -n "$PW" ] || fail "no lease row names the stopped process $P"
log "the stopped process held worker $PW until $PE_END (layout ms)"
now_l() { echo $(( $(date +%s%3N) - 1767225600000 )); }
wait_for "the stopped process's window to end" 10 bash -c "[ \$(( \$(date +%s%3N) - 1767225600000 )) -gt $((PE_END + 100)) ]"
# Another holder takes the number, as a claim does (after the window's end).
PROLE=$([ $((PW % 2)) = 1 ] && echo odd || echo even)
took=$(db_sql "$PROLE" "UPDATE idgen.idgen_leases SET holder = 'test-thief', window_start = CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - 1767225600000, window_end = CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - 1767225600000 + 60000, claims = claims + 1 WHERE worker = $PW AND window_end < CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - 1767225600000; SELECT ROW_COUNT()")
[ "$took" = 1 ] || fail "worker $PW could not be claimed after its window ($took)"
sleep 3
kill -CONT "$P"
log "SIGCONT $P ($(($(now_l) - PE_END)) ms past its window)"
wait "$A" || fail "a: $(cat "$T_DIR/a.out")"
wait "$B" || fail "b: $(cat "$T_DIR/b.out")"
wait "$P" || fail "p: $(cat "$T_DIR/p.out")"
wait "$SVC_LOAD"
cat "$T_DIR/a.out" "$T_DIR/b.out" "$T_DIR/p.out" >&2
grep -q 'role=child.*forks=1' "$T_DIR/b.out" || fail "b: the child did not detect the fork"
grep -q 'lease_claims=2' "$T_DIR/p.out" || fail "p: no second lease after SIGCONT"
[ "$(stat "$SVC_PORT" ids_fallback)" -gt 0 ] || fail "idserver handed out no Snowflake ID"

# The stopped process: worker PW only up to its window's end; after it only a
# worker whose row names it, from that window's start on.
for role in odd even; do leases "$role"; done >"$T_DIR/leases.txt"
python3 "$ROOT/tests/integration/frozen_check.py" "$PW" "$PE_END" ":$P:" "$T_DIR/leases.txt" "$D"/p* || fail "the stopped process minted without a lease"

n=$(check_unique "$D"/*) || fail "duplicate IDs"
log "PASS: $n IDs, none twice"
