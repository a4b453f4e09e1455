#!/usr/bin/env bash
# Adoption of a live application table (issue 31, docs/design.md 13.3,
# docs/operations.md Namespaces): `ns create --start-above-max` as the
# application's own user, and the cut-over while a legacy writer still inserts.
#   1. a database shop with a table users and a user app granted only SELECT on
#      shop.* (no right on idgen): adoption reads MAX as app in shop and works
#      (it connected with the tier's db_name, idgen: access denied);
#   2. a writer inserts into shop.users in a bounded background loop: adoption
#      without --margin refuses, naming the move of MAX; a margin smaller than
#      the move is refused; with --margin it succeeds, and every namespace ID an
#      idserver hands out while the writer goes on is above every row the writer
#      inserted (checked once the writer is done).
. "$(dirname "$0")/lib.sh"

pair_up
ctl_env
WRITER_ROWS=${WRITER_ROWS:-6000}
URL="mariadb://app:pw@127.0.0.1:$ODD_PORT/shop"

shop_max() { db_sql odd "SELECT COALESCE(MAX(id), 0) FROM shop.users"; }

# 1. The application's database and its read-only user (every host form the
# client may match over TCP to 127.0.0.1).
db_sql odd "CREATE DATABASE shop; CREATE TABLE shop.users (id BIGINT UNSIGNED NOT NULL
	AUTO_INCREMENT PRIMARY KEY, name CHAR(8) NOT NULL DEFAULT '') ENGINE=InnoDB;
	INSERT INTO shop.users (id) VALUES (1), (5000)"
for h in '%' localhost 127.0.0.1; do
	db_sql odd "CREATE USER 'app'@'$h' IDENTIFIED BY 'pw'; GRANT SELECT ON shop.* TO 'app'@'$h'"
done
# app reads nothing of idgen.
! mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$ODD_PORT" -u app -ppw -N -B idgen \
	-e 'SELECT 1' >/dev/null 2>&1 || fail "app can use the idgen database"
expect_ctl 0 "^ns create: quiet ready on 2 servers \(B=10, fallback snowflake\): its first ID is 5010 " \
	ns create quiet --block-size 10 --start-above-max "$URL" users id
grep -q "shop.users: MAX(id) = 5000 (read twice, 1000 ms apart: unchanged)" "$T_DIR/ctl.out" ||
	fail "adoption's reads not reported: $(cat "$T_DIR/ctl.out")"
log "1. adopted as app (SELECT on shop.* only): $(grep -o 'its first ID is [0-9]*' "$T_DIR/ctl.out")"

# 2. A legacy writer inserting (bounded: WRITER_ROWS rows, about 2 ms apart).
for _ in $(seq "$WRITER_ROWS"); do echo "INSERT INTO users () VALUES (); DO SLEEP(0.002);"; done |
	timeout 120 mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$ODD_PORT" -u root shop &
writer=$!
PIDS+=("$writer")
writing() { [ "$(shop_max)" -gt 5050 ]; }
wait_for "the writer inserting" 10 writing
expect_ctl 1 "shop.users: MAX\(id\) moved from [0-9]+ to [0-9]+ in 1000 ms: a writer still inserts.*--margin N" \
	ns create live --block-size 1 --start-above-max "$URL" users id
[ "$(db_sql odd "SELECT COUNT(*) FROM idgen.idgen_namespaces WHERE name = 'live'")" = 0 ] ||
	fail "a refused adoption left catalogue rows"
moved=$(sed -n 's/.*moved from \([0-9]*\) to \([0-9]*\).*/\1 \2/p' "$T_DIR/ctl.out")
expect_ctl 1 "--margin 2 is not above what one writer added in 1000 ms" \
	ns create live --block-size 1 --margin 2 --start-above-max "$URL" users id
expect_ctl 0 "^ns create: live ready on 2 servers \(B=1, fallback snowflake\)" \
	ns create live --block-size 1 --margin 100000 --start-above-max "$URL" users id
start=$(sed -n 's/.*the namespace starts above \([0-9]*\).*/\1/p' "$T_DIR/ctl.out")
alive "$writer" || fail "the writer ended before the adoption with a margin: nothing to check"
log "2. without --margin refused (MAX moved: $moved); with --margin 100000 it starts above $start"

# The idserver's IDs of live while the writer goes on.
idserver_start svc "$SVC_PORT" --recheck_ms 300
wait_for "live served" 10 ns_served "$SVC_PORT" live
wait_ns_buffered "$SVC_PORT" live
: >"$T_DIR/ns.ids"
for _ in $(seq 20); do
	q "$SVC_PORT" 'IDS 50 live\n' | tr ' ' '\n' | grep -E '^[0-9]+$' >>"$T_DIR/ns.ids" || true
	sleep 0.1
done
during=$(shop_max)
wait "$writer" || fail "the writer failed (exit $?)"
rows=$(db_sql odd "SELECT COUNT(*) FROM shop.users")
wmax=$(shop_max)
n=$(wc -l <"$T_DIR/ns.ids")
[ "$n" -ge 500 ] || fail "only $n IDs of live collected"
nmin=$(sort -n "$T_DIR/ns.ids" | sed -n 1p)	# sed reads it all: head's early exit was SIGPIPE
[ "$nmin" -gt "$wmax" ] || fail "namespace ID $nmin is not above the writer's row $wmax"
[ "$(sort -n "$T_DIR/ns.ids" | uniq -d | wc -l)" = 0 ] || fail "a namespace ID twice"
[ "$rows" -ge "$WRITER_ROWS" ] || fail "the writer inserted $rows rows, want $WRITER_ROWS"
log "2. $n IDs of live (lowest $nmin) while the writer went on (MAX $during then); all above its $rows rows (MAX $wmax)"
log ok
