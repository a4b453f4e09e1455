#!/usr/bin/env bash
# libidgen's generator checks each server of its pair before its lease may
# claim there (issue 35, docs/design.md 3.2 and 11.8), as idserver's ticket
# tier does: a worker number is exclusive only within one lease table. The
# pair is region 0 of a tier of 5 region bits (M = 4) whose idgen_leases also
# holds the rows of every other region (loaded when the tier had one region).
# A library told region 1, or region_bits 0, is refused with the setting and
# both values named and holds no number; told region 0's shape, or none (it
# then adopts idgen_meta's), it mints on a worker number of region 0 only.
. "$(dirname "$0")/lib.sh"
IDGEN=$BUILD/idgen

DBPAIR_INCREMENT=4 DBPAIR_REGION=0 DBPAIR_REGION_BITS=5 pair_up
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password")
export IDGEN_DB_PASSWORD
# Rows of every region in region 0's tables: 1..1023 odd, 0..1022 even.
db_sql odd "INSERT IGNORE INTO idgen.idgen_leases (worker) WITH RECURSIVE w (n) AS
	(SELECT 1 UNION ALL SELECT n + 2 FROM w WHERE n < 1023) SELECT n FROM w"
db_sql even "INSERT IGNORE INTO idgen.idgen_leases (worker) WITH RECURSIVE w (n) AS
	(SELECT 0 UNION ALL SELECT n + 2 FROM w WHERE n < 1022) SELECT n FROM w"
TIER=mariadb://idgen@127.0.0.1:$ODD_PORT,127.0.0.1:$EVEN_PORT/idgen
held() {
	for role in odd even; do
		db_sql "$role" "SELECT COUNT(*) FROM idgen.idgen_leases WHERE holder LIKE '%:libidgen'"
	done | awk '{ n += $1 } END { print n + 0 }'
}

# refused NAME QUERY REGEX: the idgen command mints nothing, fails naming it.
refused() {
	if "$IDGEN" --server "$TIER?$2" ids 5 >"$T_DIR/$1.out" 2>&1; then
		fail "$1: minted from a pair of another shape: $(tr '\n' ' ' <"$T_DIR/$1.out")"
	fi
	cat "$T_DIR/$1.out" >&2
	has -E "$3" "$T_DIR/$1.out" || fail "$1: no clear error: $(cat "$T_DIR/$1.out")"
	! has -E '^[0-9]+$' "$T_DIR/$1.out" || fail "$1: printed an ID"
	[ "$(held)" = 0 ] || fail "$1: a library holds a worker number"
}

log "region 1 against region 0's pair: refused, nothing held"
refused region1 "region=1&region_bits=5&tier_increment=4" \
	"no Snowflake lease: the (odd|even) server's lease rows are not trusted: auto_increment_offset is [12], the (odd|even) server needs [34]"

log "region_bits 0 (every region's workers) against region 0's pair: refused, nothing held"
refused bits0 "region=0&region_bits=0&tier_increment=4" \
	"not trusted: idgen_meta.region is 0 with region_bits 5, but it is configured as a server of region 0 with region_bits 0"

# minted NAME QUERY: 100 Snowflake IDs of one worker number of region 0 (0..31).
minted() {
	"$IDGEN" --server "$TIER?$2" ids 100 >"$T_DIR/$1.out" 2>&1 || fail "$1: $(head -n 3 "$T_DIR/$1.out")"
	w=$(python3 -c '
import sys
ids = [int(l) for l in open(sys.argv[1])]
assert len(set(ids)) == 100 and all(i >> 53 for i in ids), "not 100 Snowflake IDs"
ws = {(i >> 12) & 1023 for i in ids}
assert len(ws) == 1, ws
print(ws.pop())' "$T_DIR/$1.out") || fail "$1: not one worker's Snowflake IDs"
	[ "$w" -le 31 ] || fail "$1: worker $w is not region 0's (0..31)"
	log "$1: 100 IDs on worker $w"
}

log "region 0's shape: minted on region 0's numbers"
minted region0 "region=0&region_bits=5&tier_increment=4"
log "no shape in the address: idgen_meta's adopted, minted on region 0's numbers"
minted adopted "connect_timeout_ms=2000"
log "PASS"
