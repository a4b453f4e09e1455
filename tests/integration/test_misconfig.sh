#!/usr/bin/env bash
# A misconfigured pair is refused at start with a message naming the setting
# (the service does not listen and exits non-zero); a server without the
# namespace tables serves the default sequence.
. "$(dirname "$0")/lib.sh"

pair_up
pw=$(cat "$T_DIR/db/db_password")

# expect_refusal WHAT NEEDLE [flags]: idserver must exit 1 and log NEEDLE.
expect_refusal() {
	local what=$1 needle=$2 rc=0
	shift 2
	IDGEN_DB_PASSWORD=$pw timeout 20 "$IDSERVER" --state_file "$T_DIR/refuse.state" --odd_port "$ODD_PORT" \
		--even_port "$EVEN_PORT" --listen_port "$SVC_PORT" "$@" \
		>"$T_DIR/refuse.log" 2>&1 || rc=$?
	[ $rc -eq 1 ] || fail "$what: exit code $rc, want 1: $(tail -n 2 "$T_DIR/refuse.log")"
	grep -q "refusing to start" "$T_DIR/refuse.log" || fail "$what: no 'refusing to start'"
	grep -q -- "$needle" "$T_DIR/refuse.log" || fail "$what: log lacks '$needle': $(cat "$T_DIR/refuse.log")"
	! grep -q "listening on" "$T_DIR/refuse.log" || fail "$what: it listened anyway"
	log "$what: refused ($(grep -m1 'REFUSED' "$T_DIR/refuse.log" | sed 's/.*REFUSED: //'))"
}

# Different B on the two servers.
db_sql even "UPDATE idgen.idgen_meta SET block_size = 4096"
expect_refusal "different B" "both servers must use the same B"
db_sql even "UPDATE idgen.idgen_meta SET block_size = 1048576"

# A block_size setting that disagrees with the pair.
expect_refusal "block_size setting" "block_size is set to 2097152" --block_size 2097152

# Same parity: the even server reconfigured as a second odd one.
db_sql even "SET GLOBAL auto_increment_offset = 1"
expect_refusal "same parity (offset)" "auto_increment_offset is 1, the even server needs 2"
db_sql even "SET GLOBAL auto_increment_offset = 2"

# Same parity: the even server's meta row says odd.
db_sql even "UPDATE idgen.idgen_meta SET parity = 'odd'"
expect_refusal "same parity (meta row)" "idgen_meta.parity is 'odd'"
db_sql even "UPDATE idgen.idgen_meta SET parity = 'even'"

# The two servers swapped in the config.
expect_refusal "swapped ports" "auto_increment_offset" --odd_port "$EVEN_PORT" --even_port "$ODD_PORT"

# Not durable, and not auto_increment_increment = 2.
db_sql odd "SET GLOBAL innodb_flush_log_at_trx_commit = 2"
expect_refusal "flush_log_at_trx_commit" "innodb_flush_log_at_trx_commit is 2"
db_sql odd "SET GLOBAL innodb_flush_log_at_trx_commit = 1"
db_sql odd "SET GLOBAL auto_increment_increment = 1"
expect_refusal "increment 1" "auto_increment_increment is 1"
db_sql odd "SET GLOBAL auto_increment_increment = 2"

# The tier's shape in the meta row: an offset that is not the role's.
db_sql even "UPDATE idgen.idgen_meta SET server_offset = 1"
expect_refusal "meta offset" "idgen_meta.server_offset is 1 but it is configured as the even server"
db_sql even "UPDATE idgen.idgen_meta SET server_offset = 2"

# A schema from before the shape columns: refused until the schema files are
# loaded again, which adds them and sets the offset (the upgrade path).
db_sql even "ALTER TABLE idgen.idgen_meta DROP COLUMN tier_increment, DROP COLUMN server_offset, \
DROP COLUMN region, DROP COLUMN region_bits"
expect_refusal "old schema" "Unknown column 'tier_increment'.*load schema/"
db_sql even "$(cat "$ROOT/schema/10-tables.sql" "$ROOT/schema/20-even.sql")"
[ "$(db_sql even "SELECT CONCAT(tier_increment, '/', server_offset, '/', region, '/', region_bits) FROM idgen.idgen_meta")" = 2/2/0/0 ] ||
	fail "the schema reload did not add the shape columns"

# Fixed again: it starts and serves.
idserver_start svc "$SVC_PORT" --lease_extend_ms 500 --reprobe_max_ms 500
[[ "$(q "$SVC_PORT" 'ID\n')" =~ ^[0-9]+$ ]] || fail "no ID after fixing the pair"

# A server without the namespace tables (a schema of before namespaces) serves
# the default sequence: its failed namespace check neither takes it down nor
# leaves the check's snapshot open (it went down at every recheck_ms before).
db_sql odd "RENAME TABLE idgen.idgen_namespaces TO idgen.idgen_namespaces_gone"
NONS_PORT=$((SVC_PORT + 1))
idserver_start nons "$NONS_PORT" --recheck_ms 200
wait_for "odd: namespaces not read" 10 grep -q "odd ticket server: namespaces not read" "$T_DIR/nons.log"
sleep 2	# ten rechecks
! grep -q "ticket server down" "$T_DIR/nons.log" || fail "a server went down: $(grep -m1 'server down' "$T_DIR/nons.log")"
[ "$(stat "$NONS_PORT" odd_failures)" = 0 ] || fail "odd_failures $(stat "$NONS_PORT" odd_failures)"
[ "$(stat "$NONS_PORT" odd_rechecks)" -ge 5 ] || fail "odd_rechecks $(stat "$NONS_PORT" odd_rechecks)"
for i in 1 2 3 4; do out=$(q "$NONS_PORT" 'IDS 1000\n'); [ "$(wc -w <<<"$out")" = 1000 ] || fail "IDS: $out"; done
[ "$(stat "$NONS_PORT" odd_tickets)" -ge 1 ] || fail "no ticket from odd"
kill "$nons_PID"; wait "$nons_PID" 2>/dev/null || true
db_sql odd "RENAME TABLE idgen.idgen_namespaces_gone TO idgen.idgen_namespaces"
log "no namespace tables on odd: served, $(grep -c . "$T_DIR/nons.log") log lines, no server down"

# A partner that turns bad while running is refused; the other keeps serving.
db_sql even "UPDATE idgen.idgen_meta SET block_size = 8192"
kill -9 "$(db_pid even)"
sleep 0.5
db_start even
wait_for "even refused" 15 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | awk '\$2==\"even_state\"{print \$3}')\" = refused ]"
out=$(q "$SVC_PORT" 'IDS 1000\n')
[ "$(wc -w <<<"$out")" = 1000 ] || fail "odd server did not keep serving"
grep -q "both servers must use the same B" "$T_DIR/svc.log" || fail "refusal not logged"
# The lease lives on trusted servers only: a number held on the refused even
# server is given up for one from the odd server.
wait_for "lease on the odd server" 20 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $SVC_PORT | grep -q '^STAT lease_server odd'"
[ $(( $(stat "$SVC_PORT" lease_worker) % 2 )) = 1 ] || fail "lease worker not odd"
log "ok"
