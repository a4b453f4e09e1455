#!/usr/bin/env bash
# idgenctl tier status / tier check against a real pair: a clean tier passes;
# each way the uniqueness argument can fail is reported on one line with its
# repair, and passes again once the repair is run: a counter set back, a lease
# row on the server that does not own its worker number, a non-durable setting,
# a missing right, servers disagreeing on B, one server named twice, a server
# that cannot be read; a command that waited for another's lock acts on the
# tier as that one left it, and one that lost its lock (the odd server
# restarted) stops before its next write. IDs taken before and after are
# collected: no duplicate.
. "$(dirname "$0")/lib.sh"

pair_up
CTL=$BUILD/idgenctl
export IDGEN_DB_PASSWORD
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password")
IDS=$T_DIR/ids.txt
: >"$IDS"
ctl() { "$CTL" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" "$@"; }
take() {	# take PORT N: N x BLOCK 4096 into IDS; fails on an ERR
	for _ in $(seq "$2"); do echo 'BLOCK 4096'; done | timeout 60 nc -N 127.0.0.1 "$1" |
		awk -v out="$IDS" '$1 == "ERR" { e++; next } NF == 2 { print $1, $2 >> out } END { exit e > 0 }' ||
		fail "ERR while taking IDs"
}
# expect_check RC PATTERN: tier check exits RC and prints a line matching PATTERN.
expect_check() {
	local rc=0
	ctl tier check >"$T_DIR/check.out" 2>&1 || rc=$?
	[ "$rc" = "$1" ] || { cat "$T_DIR/check.out" >&2; fail "tier check exited $rc, want $1"; }
	grep -qE "$2" "$T_DIR/check.out" || { cat "$T_DIR/check.out" >&2; fail "tier check: no line matching '$2'"; }
}
# repair_from_check: the repair statement of the last regressed line, run on its server.
check_ok() { expect_check 0 '^tier check: ok \(2 servers, B=[0-9]+\)$'; }

# 0. Usage errors are exit 2 with the usage text.
rc=0; "$CTL" tier >/dev/null 2>"$T_DIR/usage.err" || rc=$?
[ $rc = 2 ] && grep -q '^usage: idgenctl' "$T_DIR/usage.err" || fail "bad usage: rc $rc"
"$CTL" --help | has 'tier check' || fail "--help does not list tier check"

# 1. A serving tier: status names both servers, check is clean.
idserver_start svc "$SVC_PORT"
wait_buffered "$SVC_PORT"
take "$SVC_PORT" 300
ctl tier status >"$T_DIR/status.out" || fail "tier status failed: $(cat "$T_DIR/status.out")"
for r in odd even; do
	grep -qE "^$r +127\.0\.0\.1:[0-9]+ +yes .* [0-9]+ held of [0-9]+$" "$T_DIR/status.out" ||
		{ cat "$T_DIR/status.out" >&2; fail "tier status: no line for $r"; }
done
[ "$(awk '$1 == "odd" { print $5 "/" $6 }' "$T_DIR/status.out")" = 2/1 ] || fail "odd: increment/offset not 2/1"
[ "$(awk '$1 == "even" { print $5 "/" $6 "/" $7 }' "$T_DIR/status.out")" = 2/2/0 ] || fail "even: increment/offset/region not 2/2/0"
held=$(awk '$1 == "odd" || $1 == "even" { n += $(NF-3) } END { print n }' "$T_DIR/status.out")
[ "$held" = 1 ] || fail "tier status: $held leases held, the idserver holds 1"
# Who holds it: the idserver, by host and pid (the holder name's fields, design 3.7).
awk -v pid="$svc_PID" '$1 == "held" && $4 == "idserver" && $6 == pid' "$T_DIR/status.out" | has . ||
	{ cat "$T_DIR/status.out" >&2; fail "tier status: no 'held' line naming idserver $svc_PID"; }
check_ok
log "1. clean tier: status lists both, check ok"

# 2. A counter set back (the idserver stopped first: it would refuse the server).
kill -TERM "$svc_PID"; wait_for "svc to exit" 15 bash -c "! kill -0 $svc_PID 2>/dev/null"
db_sql even "DELETE FROM idgen.tickets64; ALTER TABLE idgen.tickets64 AUTO_INCREMENT = 2"
expect_check 1 '^VIOLATION even: counter regressed: next ticket [0-9]+ is not above the high-water mark [0-9]+ \((its own idgen_marks|the odd server.s copy)\).*repair: on the even server run ALTER TABLE idgen.tickets64 AUTO_INCREMENT = [0-9]+$'
stmt=$(sed -n 's/^VIOLATION even: .*run \(ALTER TABLE idgen.tickets64 AUTO_INCREMENT = [0-9]*\)$/\1/p' "$T_DIR/check.out")
db_sql even "$stmt"
check_ok
log "2. regressed counter reported with its repair; '$stmt' made it clean"

# 3. A lease row for an odd worker number on the even server: two authorities.
db_sql even "INSERT INTO idgen.idgen_leases (worker) VALUES (3)"
expect_check 1 '^VIOLATION even: idgen_leases has worker 3, which belongs to the other server of the pair.*DELETE FROM idgen.idgen_leases WHERE worker = 3 on the even server$'
db_sql even "DELETE FROM idgen.idgen_leases WHERE worker = 3"
check_ok

# 3b. A guard trigger dropped (docs/design.md 6.5): named, with the file to load.
db_sql odd "DROP TRIGGER idgen.idgen_leases_no_free"
db_sql even "DROP TRIGGER idgen.idgen_marks_no_lower"
expect_check 1 '^VIOLATION odd: the trigger idgen_leases_no_free is missing: the database does not refuse a held worker freed .*repair: load schema/40-leases.sql on it \(as root\)$'
expect_check 1 '^VIOLATION even: the trigger idgen_marks_no_lower is missing: .*repair: load schema/10-tables.sql on it \(as root\)$'
db_sql odd "source $ROOT/schema/40-leases.sql"
db_sql even "source $ROOT/schema/10-tables.sql"
check_ok
# 3c. Lease rows no writer produces (an open window without a holder, reserved
# far beyond any lease): warnings, exit status 0.
far=$(( $(python3 -c 'import time; print(int(time.time()*1000) - 1767225600000)') + 100000000 ))
db_sql even "UPDATE idgen.idgen_leases SET window_end = $far WHERE worker = 1022"
expect_check 0 '^WARNING even: 1 idgen_leases row \(worker 1022\) has an open window and no holder'
expect_check 0 "^WARNING even: idgen_leases worker 1022: window_end $far is [0-9]+ ms ahead of the server's now"
expect_check 0 '^tier check: ok \(2 servers, B=[0-9]+, with warnings\)$'
db_restored even "UPDATE idgen.idgen_leases SET window_end = 0 WHERE worker = 1022"
check_ok
log "3. lease rows: a row on the wrong server, missing triggers, odd rows reported"

# 4. A non-durable commit setting.
db_sql odd "SET GLOBAL innodb_flush_log_at_trx_commit = 2"
expect_check 1 '^VIOLATION odd: innodb_flush_log_at_trx_commit is 2, must be 1$'
db_sql odd "SET GLOBAL innodb_flush_log_at_trx_commit = 1"

# 5. A missing right.
db_sql odd "REVOKE UPDATE ON idgen.idgen_leases FROM 'idgen'@'%'"
expect_check 1 '^VIOLATION odd: missing rights: idgen_leases: .*run GRANT SELECT, UPDATE ON idgen_leases'
db_sql odd "GRANT SELECT, UPDATE ON idgen.idgen_leases TO 'idgen'@'%'"

# 6. Servers disagreeing on B.
b=$(db_sql even "SELECT block_size FROM idgen.idgen_meta")
db_sql even "UPDATE idgen.idgen_meta SET block_size = $((b * 2))"
expect_check 1 "^VIOLATION odd has B=$b but even has B=$((b * 2)): every server must use the same B"
db_sql even "UPDATE idgen.idgen_meta SET block_size = $b"
check_ok

# 6b. The tier's shape in the meta row: an offset that is not the role's.
db_sql even "UPDATE idgen.idgen_meta SET server_offset = 1"
expect_check 1 '^VIOLATION even: idgen_meta.server_offset is 1 but it is configured as the even server \(offset 2; load schema/20-even.sql'
db_sql even "UPDATE idgen.idgen_meta SET server_offset = 2"
check_ok
log "3-6. wrong-server lease row, durability, rights, B disagreement, offset: each reported, each repaired"

# 7. One server configured twice.
rc=0; "$CTL" --odd_port "$ODD_PORT" --even_port "$ODD_PORT" tier check >"$T_DIR/check.out" || rc=$?
[ $rc = 1 ] && grep -q '^VIOLATION odd and even are the same server' "$T_DIR/check.out" ||
	{ cat "$T_DIR/check.out" >&2; fail "the same server twice: not reported (rc $rc)"; }

# 8. Service again after the repairs: no duplicate anywhere.
idserver_start svc "$SVC_PORT"
wait_buffered "$SVC_PORT"
take "$SVC_PORT" 300
n=$(check_unique "$IDS") || fail "DUPLICATE IDs"
log "$n IDs taken before and after the repairs: no duplicate"

# 8b. A command that waited for the lock reads the tier only once it holds it
# (docs/design.md 12.4): a session holds 'idgenctl' as a running command does,
# ns create waits for it, the session plans a change of the increment (as
# raise-increment's first step does) and lets go: the create must see the plan
# and refuse, not act on a read from before it waited.
mkfifo "$T_DIR/hold.fifo"
mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$ODD_PORT" -u root -N -B \
	<"$T_DIR/hold.fifo" >"$T_DIR/hold.out" 2>&1 &
HOLD=$!
exec 7>"$T_DIR/hold.fifo"
echo "SELECT GET_LOCK('idgenctl', 30);" >&7
lock_held() { [ "$(db_sql odd "SELECT IS_USED_LOCK('idgenctl') IS NOT NULL")" = 1 ]; }
lock_waited() { [ "$(db_sql odd "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'User lock'")" -ge 1 ]; }
wait_for "a session to hold the lock" 10 lock_held
rc=0
IDGEN_ADMIN_USER=root IDGEN_ADMIN_PASSWORD='' ctl ns create waited --block-size 8 >"$T_DIR/waited.out" 2>&1 & CP=$!
wait_for "ns create to wait for the lock" 10 lock_waited
echo "UPDATE idgen.idgen_meta SET tier_plan = 4 WHERE one = 1; SELECT RELEASE_LOCK('idgenctl');" >&7
exec 7>&-
wait "$CP" || rc=$?
wait "$HOLD" || fail "the session holding the lock: $(cat "$T_DIR/hold.out")"
db_sql odd "UPDATE idgen.idgen_meta SET tier_plan = 0 WHERE one = 1"
[ $rc = 1 ] && grep -q 'a change of the increment to 4 is in progress' "$T_DIR/waited.out" ||
	fail "ns create that waited for the lock while a change was planned: exit $rc, $(cat "$T_DIR/waited.out")"
[ "$(db_sql odd "SELECT COUNT(*) FROM idgen.idgen_namespaces WHERE name = 'waited'")" = 0 ] ||
	fail "ns create made namespace 'waited' while a change of the increment was planned"
log "8b. ns create that waited for the lock read the tier after it: refused the planned change"

# 8c. The lock lost mid-command (docs/design.md 12.4): ns drop paused after
# odd's first step (IDGENCTL_PAUSE_AT), the odd server restarted (the lock
# goes with its connection, silently), the drop let go on: it must stop before
# its next statement, even's row still 'ready', and say so.
IDGEN_ADMIN_USER=root IDGEN_ADMIN_PASSWORD='' ctl ns create held --block-size 8 >"$T_DIR/held.out" 2>&1 ||
	fail "ns create held: $(cat "$T_DIR/held.out")"
PAUSE=$T_DIR/drop
rc=0
IDGENCTL_PAUSE_AT=unready IDGENCTL_PAUSE_FILE=$PAUSE IDGEN_ADMIN_USER=root IDGEN_ADMIN_PASSWORD='' \
	ctl ns drop held --force >"$T_DIR/drop.out" 2>&1 & CP=$!
wait_for "ns drop to pause after odd's step" 20 test -e "$PAUSE.paused"
opid=$(db_pid odd)
kill -TERM "$opid"
wait_for "odd to stop" 30 bash -c "! kill -0 $opid 2>/dev/null"
db_start odd
rm -f "$PAUSE.paused"
wait "$CP" || rc=$?
[ $rc = 2 ] && grep -q "lost the lock 'idgenctl' on the odd server (did it restart?): stopped before UPDATE idgen_namespaces SET; run the command again" "$T_DIR/drop.out" ||
	fail "ns drop after the odd server's restart: exit $rc, $(cat "$T_DIR/drop.out")"
[ "$(db_sql even "SELECT state FROM idgen.idgen_namespaces WHERE name = 'held'")" = ready ] ||
	fail "ns drop went on without the lock: even's row $(db_sql even "SELECT state FROM idgen.idgen_namespaces WHERE name = 'held'")"
log "8c. ns drop that lost the lock (odd restarted) stopped before even's step"

# 9. A server that cannot be read: nothing proven, exit 2.
kill -KILL "$(db_pid even)"
wait_for "even to stop" 10 bash -c "! nc -z 127.0.0.1 $EVEN_PORT"
expect_check 2 '^UNCHECKED even \(127\.0\.0\.1:[0-9]+\): cannot connect'
grep -q '^tier check: 1 server not read: nothing proven about it$' "$T_DIR/check.out" || fail "no summary line"
log "7-9. a server named twice, service after repairs (no duplicate), a server down: ok"
log ok
