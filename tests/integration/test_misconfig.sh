#!/usr/bin/env bash
# Misconfiguration at start (docs/design.md 6.4): a pair that disagrees on B, a
# block_size setting no server has, swapped ports, or a setting wrong on both
# servers is refused at start with a message naming the setting (the service
# does not listen and exits 1); one server misconfigured alone is named once
# and left out, and the service starts and serves from the other (every ID of
# that server's parity); a server without the namespace tables serves the
# default sequence.
. "$(dirname "$0")/lib.sh"

pair_up
pw=$(cat "$T_DIR/db/db_password")

# expect_refusal WHAT NEEDLE [flags]: idserver must exit 1 and log NEEDLE. The
# connect and query timeouts are wide: a server merely slow to answer on a
# loaded machine would count as down, and one down at start is retried in the
# background while the service starts (design 6.4), which is not what is tested.
expect_refusal() {
	local what=$1 needle=$2 rc=0
	shift 2
	IDGEN_DB_PASSWORD=$pw timeout 20 "$IDSERVER" --state_file "$T_DIR/refuse.state" --odd_port "$ODD_PORT" \
		--even_port "$EVEN_PORT" --listen_port "$SVC_PORT" --connect_timeout_ms 5000 \
		--query_timeout_ms 5000 "$@" >"$T_DIR/refuse.log" 2>&1 || rc=$?
	! grep -q "unreachable at start" "$T_DIR/refuse.log" ||
		fail "$what: a server did not answer in 5 s: $(grep -m1 'unreachable at start' "$T_DIR/refuse.log")"
	[ $rc -eq 1 ] || fail "$what: exit code $rc, want 1: $(tail -n 2 "$T_DIR/refuse.log")"
	grep -q "refusing to start" "$T_DIR/refuse.log" || fail "$what: no 'refusing to start'"
	grep -q -- "$needle" "$T_DIR/refuse.log" || fail "$what: log lacks '$needle': $(cat "$T_DIR/refuse.log")"
	! grep -q "listening on" "$T_DIR/refuse.log" || fail "$what: it listened anyway"
	log "$what: refused ($(grep -m1 'REFUSED' "$T_DIR/refuse.log" | sed 's/.*REFUSED: //'))"
}

# expect_partial WHAT NEEDLE BAD [flags]: idserver starts without the BAD
# server (its refusal logged once, naming NEEDLE), which STATS shows refused,
# and every ID it hands out is a ticket of the other server's parity.
PART_PORT=$((SVC_PORT + 2))
expect_partial() {
	local what=$1 needle=$2 bad=$3 good=1 errs n
	shift 3
	[ "$bad" = odd ] && good=0
	rm -f "$T_DIR/part.txt"
	idserver_start part "$PART_PORT" --refused_retry_ms 200 "$@"
	grep -q -- "$bad ticket server REFUSED: .*$needle" "$T_DIR/part.log" ||
		fail "$what: log lacks '$needle': $(grep REFUSED "$T_DIR/part.log")"
	grep -q "starting without the $bad ticket server" "$T_DIR/part.log" || fail "$what: no 'starting without'"
	# Retried every 200 ms: one read in 40 shows "connecting" (one failed run in 6).
	stat_shows "$PART_PORT" "${bad}_state" refused || fail "$what: $bad is $(stat "$PART_PORT" "${bad}_state")"
	read -r errs _ < <(mint_ids "$PART_PORT" 10 "$T_DIR/part.txt")
	[ "$errs" = 0 ] || fail "$what: $errs errors"
	n=$(awk -v g=$good '$1 >= 2^53 || int($1 / 1048576) % 2 != g' "$T_DIR/part.txt" | wc -l)
	[ "$n" = 0 ] || fail "$what: $n ranges not from the $( [ $good = 1 ] && echo odd || echo even) server's tickets"
	sleep 0.6	# a few retries
	n=$(grep -c "$bad ticket server REFUSED" "$T_DIR/part.log")
	[ "$n" = 1 ] || fail "$what: the refusal logged $n times"
	kill "$part_PID"; wait "$part_PID" 2>/dev/null || true
	log "$what: started without the $bad server ($(grep -m1 'REFUSED' "$T_DIR/part.log" | sed 's/.*REFUSED: //'))"
}

# Different B on the two servers.
db_sql even "UPDATE idgen.idgen_meta SET block_size = 4096"
expect_refusal "different B" "both servers must use the same B"
db_sql even "UPDATE idgen.idgen_meta SET block_size = 1048576"

# A block_size setting that disagrees with the pair.
expect_refusal "block_size setting" "block_size is set to 2097152" --block_size 2097152

# Same parity: the even server reconfigured as a second odd one (until
# issue 30 item 7 a fatal error at start; now left out, as a running idserver
# leaves it).
db_sql even "SET GLOBAL auto_increment_offset = 1"
expect_partial "same parity (offset)" "auto_increment_offset is 1, the even server needs 2" even
db_sql even "SET GLOBAL auto_increment_offset = 2"

# Same parity: the even server's meta row says odd.
db_sql even "UPDATE idgen.idgen_meta SET parity = 'odd'"
expect_partial "same parity (meta row)" "idgen_meta.parity is 'odd'" even
db_sql even "UPDATE idgen.idgen_meta SET parity = 'even'"

# The two servers swapped in the config.
expect_refusal "swapped ports" "auto_increment_offset" --odd_port "$EVEN_PORT" --even_port "$ODD_PORT"

# Not durable, and not auto_increment_increment = 2: on one server it is left
# out; on both, start-up is refused.
db_sql odd "SET GLOBAL innodb_flush_log_at_trx_commit = 2"
expect_partial "flush_log_at_trx_commit (odd)" "innodb_flush_log_at_trx_commit is 2" odd
db_sql even "SET GLOBAL innodb_flush_log_at_trx_commit = 2"
expect_refusal "flush_log_at_trx_commit (both)" "innodb_flush_log_at_trx_commit is 2.*no ticket server of its region passed"
db_sql odd "SET GLOBAL innodb_flush_log_at_trx_commit = 1"
db_sql even "SET GLOBAL innodb_flush_log_at_trx_commit = 1"
db_sql odd "SET GLOBAL auto_increment_increment = 1"
expect_partial "increment 1 (odd)" "auto_increment_increment is 1" odd
db_sql even "SET GLOBAL auto_increment_increment = 1"
expect_refusal "increment 1 (both)" "auto_increment_increment is 1"
db_sql odd "SET GLOBAL auto_increment_increment = 2"
db_sql even "SET GLOBAL auto_increment_increment = 2"

# The tier's shape in the meta row: an offset that is not the role's.
db_sql even "UPDATE idgen.idgen_meta SET server_offset = 1"
expect_partial "meta offset" "idgen_meta.server_offset is 1 but it is configured as the even server" even
db_sql even "UPDATE idgen.idgen_meta SET server_offset = 2"

# A schema from before the shape columns: refused until the schema files are
# loaded again, which adds them and sets the offset (the upgrade path).
db_sql even "ALTER TABLE idgen.idgen_meta DROP COLUMN tier_increment, DROP COLUMN server_offset, \
DROP COLUMN region, DROP COLUMN region_bits"
expect_partial "old schema" "Unknown column 'tier_increment'.*load schema/" even
db_sql even "$(cat "$ROOT/schema/10-tables.sql" "$ROOT/schema/20-even.sql")"
[ "$(db_sql even "SELECT CONCAT(tier_increment, '/', server_offset, '/', region, '/', region_bits) FROM idgen.idgen_meta")" = 2/2/0/0 ] ||
	fail "the schema reload did not add the shape columns"

# Fixed again: it starts and serves.
idserver_start svc "$SVC_PORT" --lease_extend_ms 500 --reprobe_max_ms 500
wait_buffered "$SVC_PORT"
[[ "$(q "$SVC_PORT" 'ID\n')" =~ ^[0-9]+$ ]] || fail "no ID after fixing the pair"

# A server without the namespace tables (a schema of before namespaces) serves
# the default sequence: its failed namespace check neither takes it down nor
# leaves the check's snapshot open (it went down at every recheck_ms before).
db_sql odd "RENAME TABLE idgen.idgen_namespaces TO idgen.idgen_namespaces_gone"
NONS_PORT=$((SVC_PORT + 1))
idserver_start nons "$NONS_PORT" --recheck_ms 200
wait_for "odd: namespaces not read" 10 grep -q "odd ticket server: namespaces not read" "$T_DIR/nons.log"
# Five rechecks of odd (ten in 2 s on a quiet machine; counted, not slept for).
wait_for "five rechecks of odd" 20 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $NONS_PORT | awk '\$2==\"odd_rechecks\"{print \$3}')\" -ge 5 ]"
! grep -q "ticket server down" "$T_DIR/nons.log" || fail "a server went down: $(grep -m1 'server down' "$T_DIR/nons.log")"
[ "$(stat "$NONS_PORT" odd_failures)" = 0 ] || fail "odd_failures $(stat "$NONS_PORT" odd_failures)"
wait_buffered "$NONS_PORT"
for i in 1 2 3 4; do out=$(q "$NONS_PORT" 'IDS 1000\n'); [ "$(wc -w <<<"$out")" = 1000 ] || fail "IDS: $out"; done
# The first prefetch may take both blocks from even (odd still connecting: 14 of
# 30 starts here); the refill after these IDs goes to odd, its ticket perhaps
# still in flight when they are answered.
wait_for "a ticket from odd" 10 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $NONS_PORT | awk '\$2==\"odd_tickets\"{print \$3}')\" -ge 1 ]"
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
kill "$svc_PID"; wait "$svc_PID" 2>/dev/null || true

# A start on that pair is refused whatever answers first (issue 36): even's own
# mark row, written under odd's B, binds in ID space, so even judged before odd's
# check answered was "regressed", and odd, judged next against no B, started the
# service alone (2 starts in 3 with odd holding a mark, as here; 1 in 15 on a
# fresh pair, the first step's case). Fresh idservers: what the servers hold.
for i in 1 2 3 4 5 6 7 8; do
	rm -f "$T_DIR/refuse.state"
	expect_refusal "different B, odd holding a mark ($i)" "both servers must use the same B"
done
log "ok"
