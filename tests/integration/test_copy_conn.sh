#!/usr/bin/env bash
# A copy that is not the ticket's own (docs/design.md 6.5, rule copy-conn), on a
# real pair: the interleaving the simulation found (idsim seed 1065560571).
# The waiter idserver draws even's ticket t while a mariadb session holds the
# row of odd's copy of even's mark (SELECT ... FOR UPDATE), so t's block waits
# for its copy on odd (copy first). Even is then restored from a mariadb-dump
# taken before t: shut down (every connection to it ends), the dump loaded with
# it on no port, started again. The waiter refuses it as regressed; a fresh
# idserver reads odd's old copy, draws t again and banks it alone (its own copy
# cannot land either, odd is not up for it) and hands it out. The lock is
# released: the waiter's own copy lands on odd, and the re-draw's copies too.
# Every ID both idservers hand out is collected: none twice, and the waiter
# logged that t was not used (the connection it was drawn on ended). Before the
# rule the waiter banked t on that copy and both handed out its IDs: run with
# COPY_CONN_RULE_OFF=1, the test links a variant idserver with the rule off
# (rule_off.c) in its own directory and fails with t's IDs issued twice.
. "$(dirname "$0")/lib.sh"

B=4096
pair_up
for r in odd even; do db_sql "$r" "UPDATE idgen.idgen_meta SET block_size = $B"; done
W_IDS=$T_DIR/waiter.ids F_IDS=$T_DIR/fresh.ids
: >"$W_IDS"
: >"$F_IDS"
P2=$((SVC_PORT + 1))
# The waiter: a query held on odd must outlast the whole sequence (60 s), its
# prefetch two blocks (one ticket on each server at a time), rechecked often.
W_FLAGS=(--block_size $B --query_timeout_ms 60000 --recheck_ms 500 --reprobe_max_ms 300
	--refused_retry_ms 500 --prefetch_max_blocks 2)
F_FLAGS=(--block_size $B --reprobe_max_ms 300 --prefetch_max_blocks 2)
mark_of() { db_sql "$1" "SELECT high_water FROM idgen.idgen_marks WHERE role = '$2'"; }
# mark_above ROLE ROW N: ROLE's row ROW of idgen_marks is above N.
mark_above() { [ "$(mark_of "$1" "$2")" -gt "$3" ]; }
# stat_at_least PORT NAME N: that STATS value is N or more.
stat_at_least() { [ "$(stat "$1" "$2")" -ge "$3" ]; }
# stat_is PORT NAME VALUE: that STATS value is VALUE now.
stat_is() { [ "$(stat "$1" "$2")" = "$3" ]; }
gone() { ! alive "$1"; }
counter_of() {
	db_sql "$1" "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'idgen' AND TABLE_NAME = 'tickets64'"
}

if [ "${COPY_CONN_RULE_OFF:-}" = 1 ]; then
	# The shipped idserver cannot turn a rule off: link one that can, from this
	# build's objects and rule_off.c (the normal build's flags: not a sanitizer build).
	objs=()
	for f in "$ROOT"/src/*.c "$ROOT"/common/*.c; do
		o=$BUILD/obj/${f#"$ROOT"/src/}
		[[ $f == "$ROOT"/common/* ]] && o=$BUILD/obj/common/${f#"$ROOT"/common/}
		[ -f "${o%.c}.o" ] || fail "no ${o%.c}.o: build idserver first (make all)"
		objs+=("${o%.c}.o")
	done
	cc -std=c11 -Wall -Wextra -Werror -I"$ROOT/src" -DRULE_OFF='"copy-conn"' -c "$ROOT/tests/integration/rule_off.c" \
		-o "$T_DIR/rule_off.o"
	cc -pthread -o "$T_DIR/idserver-copy-conn-off" "${objs[@]}" "$BUILD"/obj/gen/*.o \
		"$T_DIR/rule_off.o" $(pkg-config --libs $(sed -n 's/^PKGS *:= *//p' "$ROOT/Makefile"))
	IDSERVER=$T_DIR/idserver-copy-conn-off
	log "COPY_CONN_RULE_OFF=1: both idservers are $IDSERVER, rule copy-conn off"
fi

# take PORT FILE: every ticket ID PORT holds buffered now (whole blocks of B:
# BLOCK B each; the tail of a used block, if any, ID by ID), appended to FILE as
# "first count"; fails on any ERR.
take() {
	local b n
	b=$(stat "$1" ids_buffered)
	n=$((b / B))
	{
		for _ in $(seq "$n"); do echo "BLOCK $B"; done
		for _ in $(seq $((b % B))); do echo ID; done
	} | timeout 30 nc -N 127.0.0.1 "$1" >"$T_DIR/take.out"
	! grep -q '^ERR' "$T_DIR/take.out" || fail "ERR from port $1: $(grep -m1 '^ERR' "$T_DIR/take.out")"
	awk 'NF == 2 { print $1, $2 } NF == 1 { print $1, 1 }' "$T_DIR/take.out" >>"$2"
}
# settled: the waiter's prefetch is full and every copy landed (each server's
# copy of the other's mark equals its own): nothing in flight.
settled() {
	[ "$(stat "$SVC_PORT" ids_buffered)" -ge $((2 * B)) ] &&
		[ "$(mark_of even even)" = "$(mark_of odd even)" ] &&
		[ "$(mark_of odd odd)" = "$(mark_of even odd)" ]
}
# handed_out FILE T: FILE's ranges hold the first ID of ticket T's block.
handed_out() { awk -v f=$(($2 * B)) '$1 <= f && f < $1 + $2 { n++ } END { exit n == 0 }' "$1"; }

# The holder: one mariadb session on odd keeps odd's copy of even's mark locked
# from hold_start to hold_end (its statements through a FIFO, its output unbuffered).
HOLD_PID=
hold_start() {
	mkfifo "$T_DIR/hold.in"
	mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$ODD_PORT" -u root -N -B --unbuffered \
		<"$T_DIR/hold.in" >"$T_DIR/hold.out" 2>&1 &
	HOLD_PID=$!
	exec 7>"$T_DIR/hold.in"
	echo "START TRANSACTION; SELECT 'held', high_water FROM idgen.idgen_marks WHERE role = 'even' FOR UPDATE;" >&7
	wait_for "the lock on odd's copy of even's mark" 10 grep -q '^held' "$T_DIR/hold.out"
	HOLD_AT=$SECONDS
}
hold_end() {
	echo "ROLLBACK; SELECT 'released';" >&7
	wait_for "the holder's rollback" 10 grep -q '^released' "$T_DIR/hold.out"
	# Its input ends here (every process started since holds no fd 7); stopped
	# if it has not exited by itself.
	exec 7>&-
	kill -TERM "$HOLD_PID" 2>/dev/null || true
	wait_for "the holder to exit" 10 gone "$HOLD_PID"
	HOLD_PID=
}
on_cleanup() {
	exec 7>&-
	[ -z "$HOLD_PID" ] || kill -TERM "$HOLD_PID" 2>/dev/null
}

# even_restore DUMP: even restored from DUMP as from a backup: shut down (every
# connection to it ends), its idgen database replaced while it listens on no port
# (--skip-networking: no idserver sees it half restored), the lease rows moved past
# every window granted since the backup (docs/operations.md), then back on its port.
even_local() { mariadb --no-defaults --socket="$T_DIR/db/even/mariadbd.sock" -u root -N -B "$@"; }
even_local_up() { even_local -e 'SELECT 1' >/dev/null 2>&1; }
even_restore() {
	local d=$T_DIR/db/even pid now
	pid=$(db_pid even)
	kill -TERM "$pid"
	wait_for "even to shut down" 30 gone "$pid"
	setsid mariadbd --defaults-file="$d/my.cnf" --user=root --skip-networking </dev/null \
		>>"$d/error.log" 2>&1 7>&- &
	pid=$!
	PIDS+=("$pid")
	wait_for "even on its socket only" 30 even_local_up
	even_local -e 'DROP DATABASE idgen'
	even_local <"$1"
	now=$(python3 -c 'import time; print(int(time.time() * 1000) - 1767225600000)')
	even_local -e "UPDATE idgen.idgen_leases SET window_end = GREATEST(window_end, $((now + 301000)))"
	mariadb-admin --no-defaults --socket="$d/mariadbd.sock" -u root shutdown
	wait_for "even to shut down again" 30 gone "$pid"
	db_start even 7>&-
}

# 1. The waiter, settled: its first blocks banked, every copy landed.
idserver_start waiter "$SVC_PORT" "${W_FLAGS[@]}"
wait_buffered "$SVC_PORT"
wait_for "the waiter settled (prefetch full, copies landed)" 15 settled

# 2. Odd's copy of even's mark held; even's backup taken (mariadb-dump); the
# waiter's pool taken, so that it draws: its even ticket waits for its copy.
hold_start
dumped=$(mark_of even even) c=$(counter_of even)
t=$(((c + 1) / 2 * 2))	# the first even ticket the counter gives
mariadb-dump --no-defaults --protocol=tcp -h 127.0.0.1 -P "$EVEN_PORT" -u root --databases idgen \
	>"$T_DIR/even-backup.sql"
[ "$(mark_of even even)" = "$dumped" ] || fail "even took a ticket during its dump"
log "2. odd's copy of even's mark held at $(mark_of odd even); even's backup at its mark $dumped, counter $c"
take "$SVC_PORT" "$W_IDS"
wait_for "the waiter draws an even ticket" 10 mark_above even even "$dumped"
drawn=$(mark_of even even)
[ "$(stat "$SVC_PORT" ids_buffered)" = 0 ] || fail "the waiter banked a block while odd's copy was held"
log "2. the waiter drew even's ticket(s) $t..$drawn; their block waits for a copy on odd"

# 3. Even restored from its backup: the waiter's connection to it ends, and the
# waiter refuses it as regressed (its state file knows $drawn).
even_restore "$T_DIR/even-backup.sql"
[ "$(counter_of even)" = "$c" ] || fail "even's counter is $(counter_of even) after the restore, $c in its backup"
wait_for "the waiter: even regressed" 15 stat_is "$SVC_PORT" even_state regressed
log "3. even restored (counter $c, own mark $(mark_of even even)), refused by the waiter"

# 4. A fresh idserver: reads odd's copy ($dumped), draws t again, banks it alone
# (its copies cannot land on odd either) and hands it out.
idserver_start fresh "$P2" "${F_FLAGS[@]}" 7>&-
wait_buffered "$P2"
take "$P2" "$F_IDS"
handed_out "$F_IDS" "$t" || fail "the fresh idserver did not hand out ticket $t's block (the re-draw): $(cat "$F_IDS")"
log "4. the fresh idserver drew even's ticket $t again and handed out its block" \
	"($(stat "$P2" tickets_banked_alone) banked alone)"

# 5. The hold released (held below the waiter's query_timeout_ms): copies at or
# above t land on odd; two rechecks of odd later the waiter has read them.
log "5. releasing odd's copy of even's mark, held for $((SECONDS - HOLD_AT)) s"
hold_end
wait_for "odd's copy of even's mark at $t or above" 15 mark_above odd even $((t - 1))
r=$(stat "$SVC_PORT" odd_rechecks)
wait_for "two rechecks of odd by the waiter" 15 stat_at_least "$SVC_PORT" odd_rechecks $((r + 2))
take "$SVC_PORT" "$W_IDS"
take "$P2" "$F_IDS"
log "5. odd's copy of even's mark $(mark_of odd even); every buffered ID of both taken"

if ! n=$(check_unique "$W_IDS" "$F_IDS"); then
	handed_out "$W_IDS" "$t" && fail "an ID issued twice: ticket $t's block, by both idservers"
	fail "an ID issued twice"
fi
! handed_out "$W_IDS" "$t" || fail "the waiter handed out ticket $t's block"
for ((k = t; k <= drawn; k += 2)); do
	grep -q "ticket $k of the even server not used: the connection it was drawn on ended" \
		"$T_DIR/waiter.log" || fail "the waiter did not log dropping its waiting ticket $k"
done
log "ok: ticket(s) $t..$drawn dropped by the waiter, $t handed out by the fresh idserver only; $n IDs, no duplicate"
