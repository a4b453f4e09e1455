#!/usr/bin/env bash
# A ticket counter that moves back never re-issues IDs, across idserver restarts:
# the ticket table truncated; dropped and re-created; one server restored from a
# mariadb-dump taken earlier; both servers reset; the counter set back by ALTER
# TABLE. Each is followed by an idserver restart (its state file remembers) and,
# where the database marks can catch it, by a fresh idserver with no state file.
# The refusal names the repair; running it puts the server back in service.
# Every ID handed out by every process is collected: zero duplicates.
. "$(dirname "$0")/lib.sh"

pair_up
IDS=$T_DIR/ids.txt
: >"$IDS"
# refill_wait_ms 1000: after both servers' repair (step 4) no lease is held yet
# (its claim waits for a checked server), so a request that outran the refills
# has no fallback; under ASan a refill took longer than the default 50 ms and
# the take after the repair got ERR (clean-clone run cc42).
FLAGS=(--refused_retry_ms 500 --recheck_ms 500 --reprobe_max_ms 300 --lease_extend_ms 500
	--refill_wait_ms 1000)
P2=$((SVC_PORT + 1))

# take PORT N: N x BLOCK 4096, every range recorded; prints the ERR count.
take() {
	for _ in $(seq "$2"); do echo 'BLOCK 4096'; done | timeout 60 nc -N 127.0.0.1 "$1" |
		awk -v out="$IDS" '$1 == "ERR" { e++; next } NF == 2 { print $1, $2 >> out } END { print e + 0 }'
}
state() { stat "$1" "$2_state"; }
restart() {	# restart NAME PORT: SIGTERM, then the same state file again
	local pid_var="${1}_PID"
	kill -TERM "${!pid_var}"
	wait_for "$1 to exit" 15 bash -c "! kill -0 ${!pid_var} 2>/dev/null"
	idserver_start "$1" "$2" "${FLAGS[@]}"
}
# regressed NAME PORT ROLE: the server is refused as regressed, with the repair.
regressed() {
	wait_for "$1: $3 regressed" 10 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $2 | awk '\$2==\"$3_state\"{print \$3}')\" = regressed ]"
	grep -q "$3 ticket server REFUSED: counter regressed" "$T_DIR/$1.log" ||
		fail "$1: no 'counter regressed' line for $3"
	grep "$3 ticket server REFUSED: counter regressed" "$T_DIR/$1.log" | tail -n 1 |
		grep -q "repair: on the $3 server run ALTER TABLE idgen.tickets64 AUTO_INCREMENT = " ||
		fail "$1: the refusal does not name the repair"
}
# repair NAME ROLE: runs the statement the refusal named, as an operator would.
repair() {
	local stmt
	stmt=$(grep "$2 ticket server REFUSED: counter regressed" "$T_DIR/$1.log" | tail -n 1 |
		sed -n 's/.*run \(ALTER TABLE idgen.tickets64 AUTO_INCREMENT = [0-9]*\).*/\1/p')
	[ -n "$stmt" ] || fail "no repair statement in $1's log"
	db_sql "$2" "$stmt"
	log "repair on $2: $stmt"
}
up_again() { wait_for "$1: $3 up again" 10 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $2 | awk '\$2==\"$3_state\"{print \$3}')\" = up ]"; }
# fresh NAME ROLE...: a new idserver with no state file refuses each ROLE too.
fresh() {
	local name=$1 r
	shift
	rm -f "$T_DIR/$name.state"
	idserver_start "$name" "$P2" "${FLAGS[@]}"
	for r in "$@"; do regressed "$name" "$P2" "$r"; done
	# Which layer caught it: the refusal at the next check names them all.
	[ -z "${FRESH_EXPECT:-}" ] || wait_for "$name: '$FRESH_EXPECT' in the refusal" 10 \
		grep -q "REFUSED: counter regressed.*$FRESH_EXPECT" "$T_DIR/$name.log"
	# The other server's first block is banked once its copy lands, or alone
	# (copy first): a burst before that finds none (a clean clone's ASan run).
	[ $# -eq 2 ] || wait_buffered "$P2"
	[ "$(take "$P2" 300)" = 0 ] || [ $# -eq 2 ] || fail "$name: errors while the other server serves"
	kill -TERM "$(eval echo "\$${name}_PID")"
	wait_for "$name to exit" 15 bash -c "! kill -0 $(eval echo "\$${name}_PID") 2>/dev/null"
}

idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
wait_buffered "$SVC_PORT"
[ "$(take "$SVC_PORT" 3000)" = 0 ] || fail "errors on a healthy pair"
# A dump of the odd server now, restored later (scenario 3).
mariadb-dump --no-defaults --protocol=tcp -h 127.0.0.1 -P "$ODD_PORT" -u root --databases idgen >"$T_DIR/odd-early.sql"
[ "$(take "$SVC_PORT" 3000)" = 0 ] || fail "errors on a healthy pair"

# 1. The odd ticket table truncated while idserver runs: caught at once.
db_sql odd "TRUNCATE idgen.tickets64"
errs=$(take "$SVC_PORT" 2000)
regressed svc "$SVC_PORT" odd
[ "$errs" = 0 ] || fail "truncate: $errs failed requests (the even server should carry them)"
restart svc "$SVC_PORT"
regressed svc "$SVC_PORT" odd
wait_buffered "$SVC_PORT"
[ "$(take "$SVC_PORT" 1000)" = 0 ] || fail "after restart: failed requests"
fresh fresh1 odd
log "1. truncated odd: refused live, after a restart and by a fresh idserver"
repair svc odd
up_again svc "$SVC_PORT" odd
[ "$(take "$SVC_PORT" 2000)" = 0 ] || fail "after repair: failed requests"

# 2. The even ticket table dropped and re-created from the schema.
db_sql even "DROP TABLE idgen.tickets64"
db_sql_retry even "$(cat "$ROOT/schema/10-tables.sql")" || fail "the schema did not load on even"
restart svc "$SVC_PORT"
regressed svc "$SVC_PORT" even
wait_buffered "$SVC_PORT"
fresh fresh2 even
[ "$(take "$SVC_PORT" 1000)" = 0 ] || fail "dropped even: failed requests"
log "2. dropped and re-created even: refused after a restart and by a fresh idserver"
repair svc even
up_again svc "$SVC_PORT" even
[ "$(take "$SVC_PORT" 2000)" = 0 ] || fail "after repair: failed requests"

# 3. The odd server restored from the early dump (its own marks go back with it):
# the state file catches it, and so does the even server's copy for a fresh one.
db_sql odd "$(cat "$T_DIR/odd-early.sql")"
restart svc "$SVC_PORT"
regressed svc "$SVC_PORT" odd
FRESH_EXPECT="the even server's copy: [0-9]" fresh fresh3 odd
log "3. odd restored from an early dump: refused after a restart and by a fresh idserver (even's copy)"
repair svc odd
# docs/operations.md's step for a restored server: no lease window granted since the
# backup may be claimed again.
db_sql odd "UPDATE idgen.idgen_leases SET window_end = $(python3 -c 'import time; print(int(time.time()*1000) - 1767225600000 + 300000)')"
up_again svc "$SVC_PORT" odd
[ "$(take "$SVC_PORT" 2000)" = 0 ] || fail "after repair: failed requests"

# 4. Both servers reset: nothing can be served from tickets, nothing is guessed.
db_sql odd "TRUNCATE idgen.tickets64"
db_sql even "TRUNCATE idgen.tickets64"
restart svc "$SVC_PORT"
regressed svc "$SVC_PORT" odd
regressed svc "$SVC_PORT" even
take "$SVC_PORT" 50 >/dev/null
fresh fresh4 odd even
log "4. both reset: both refused after a restart and by a fresh idserver"
repair svc odd
repair svc even
up_again svc "$SVC_PORT" odd
up_again svc "$SVC_PORT" even
wait_buffered "$SVC_PORT"
[ "$(take "$SVC_PORT" 2000)" = 0 ] || fail "after repair: failed requests"

# 5. The counter set back by ALTER TABLE (InnoDB needs the row gone first). The
# idserver is stopped meanwhile: a ticket it took between the DELETE and the
# ALTER would leave a row, and the ALTER could not set the counter back.
kill -TERM "$svc_PID"
wait_for "svc to exit" 15 bash -c "! kill -0 $svc_PID 2>/dev/null"
db_sql even "DELETE FROM idgen.tickets64; ALTER TABLE idgen.tickets64 AUTO_INCREMENT = 3"
[ "$(db_sql even "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'idgen' AND TABLE_NAME = 'tickets64'")" -le 4 ] ||
	fail "even's counter was not set back"
idserver_start svc "$SVC_PORT" "${FLAGS[@]}"
regressed svc "$SVC_PORT" even
fresh fresh5 even
log "5. even set back by ALTER TABLE: refused after a restart and by a fresh idserver"
repair svc even
up_again svc "$SVC_PORT" even
wait_buffered "$SVC_PORT"
[ "$(take "$SVC_PORT" 2000)" = 0 ] || fail "after repair: failed requests"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs across restarts and processes"
log "ok: $n IDs from $(ls "$T_DIR"/*.log | wc -l) processes, no duplicate"
