#!/usr/bin/env bash
# Namespaces, the operator's side (docs/design.md section 13; idgenctl ns):
#   1. names and options checked: a bad name, 'default', a bad B or policy refused;
#   2. adoption: three schemas standing in for an app's shards, each with a table
#      holding IDs up to a different large value (one above 2^40); `ns create
#      --start-above-max` over the three starts every server's counter and marks
#      above the largest, and the service user's first ticket from the new table
#      (REPLACE INTO, as idserver will take it) is above it;
#   3. a create killed (SIGKILL) after each of its steps leaves rows 'creating'
#      (never served) and is run again to the end; a rerun with another B is refused;
#   4. `ns raise` moves forward, and refuses to move back;
#   5. `ns drop` keeps the marks: the name re-created starts above them; a drop
#      killed after its first server leaves no row dropped beside one ready;
#   6. re-created three times with a larger B: each starts just above the old IDs
#      in ID space, and the first ID printed is the one the tickets give.
. "$(dirname "$0")/lib.sh"

pair_up
ctl_env
export IDGEN_ADOPT_PASSWORD=

# ticket ROLE NS: one ticket of namespace NS taken as the service user.
ticket() {
	local port=$ODD_PORT
	[ "$1" = even ] && port=$EVEN_PORT
	mariadb --no-defaults -h 127.0.0.1 -P "$port" -u idgen -p"$IDGEN_DB_PASSWORD" idgen -N -e \
		"REPLACE INTO tickets_$2 (stub) VALUES ('a'); SELECT LAST_INSERT_ID()"
}
counter() {	# ROLE NS
	db_sql "$1" "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'idgen' AND TABLE_NAME = 'tickets_$2'"
}

# 1. Names and options.
expect_ctl 2 "a namespace's name is a lower-case letter" ns create Orders
expect_ctl 2 "a namespace's name is a lower-case letter" ns create default
expect_ctl 2 "a namespace's name is a lower-case letter" ns create "a;drop"
expect_ctl 2 "bad option or value at '--block-size 0'" ns create orders --block-size 0
expect_ctl 2 "bad option or value at '--fallback dense'" ns create orders --fallback dense
expect_ctl 2 "bad option or value at '--start-above-max" ns create orders --start-above-max "http://x" t c
log "1. bad names, B, policy and source URL refused"

# 2. Three shards, the largest above 2^40.
MAXES=(123456 98765432109 1234567890123)
for k in 0 1 2; do
	db_sql odd "CREATE DATABASE shard$k; CREATE TABLE shard$k.orders (id BIGINT UNSIGNED PRIMARY KEY); INSERT INTO shard$k.orders VALUES (1), (${MAXES[$k]})"
done
SRC=()
for k in 0 1 2; do SRC+=(--start-above-max "mariadb://root@127.0.0.1:$ODD_PORT/shard$k" orders id); done
B=1000 TOP=1234567890123
# 3. Killed after each step and run again (the adoption read each time).
for step in rows floor ready; do
	rc=0; { IDGENCTL_KILL_AT=$step "${CTL[@]}" ns create orders --block-size $B "${SRC[@]}" >/dev/null; } 2>/dev/null || rc=$?
	[ $rc = 137 ] || fail "ns create killed at $step: exit $rc, want 137 (SIGKILL)"
	[ "$(db_sql odd "SELECT state FROM idgen.idgen_namespaces WHERE name = 'orders'")" != ready ] ||
		[ "$(db_sql even "SELECT state FROM idgen.idgen_namespaces WHERE name = 'orders'")" != ready ] ||
		fail "killed at $step, yet ready on both servers"
done
expect_ctl 1 "a create of orders with B=1000 and fallback snowflake is unfinished" ns create orders --block-size 2000
expect_ctl 0 "^ns create: orders ready on 2 servers \(B=1000, fallback snowflake\): its first ID is 1234567891000 \(first tickets: odd 1234567891, even 1234567892\), above every existing one" \
	ns create orders --block-size $B "${SRC[@]}"
grep -q "shard2.orders: MAX(id) = $TOP" "$T_DIR/ctl.out" || fail "the largest shard not read: $(cat "$T_DIR/ctl.out")"
expect_ctl 0 "^ns create: orders exists" ns create orders --block-size $B
for r in odd even; do
	c=$(counter $r orders)
	[ $((c * B)) -gt $TOP ] || fail "the $r server's counter $c: its block starts at or below $TOP"
	for role in odd even; do
		hw=$(db_sql $r "SELECT high_water FROM idgen.idgen_ns_marks WHERE ns = 'orders' AND role = '$role'")
		[ "$hw" = $((TOP / B)) ] || fail "the $r server's mark of $role: $hw, want $((TOP / B))"
	done
	t=$(ticket $r orders)
	[ $((t * B)) -gt $TOP ] || fail "the $r server's first ticket $t: block at or below $TOP"
	[ $((t % 2)) = "$([ $r = odd ] && echo 1 || echo 0)" ] || fail "ticket $t from the $r server"
done
expect_ctl 0 "^orders +1000 snowflake ready " ns list
log "2-3. adopted above MAX(id) = $TOP of three shards (killed after rows, floor, ready; resumed); first tickets $(ticket odd orders), $(ticket even orders)"
# idserver serves it from above the largest existing ID.
idserver_start svc "$SVC_PORT" --recheck_ms 300
wait_for "orders served" 10 ns_served "$SVC_PORT" orders
wait_ns_buffered "$SVC_PORT" orders
ids=$(q "$SVC_PORT" 'IDS 5 orders\nBLOCK 10 orders\n' | tr '\n' ' ')
for id in $ids; do
	[ "$id" = 10 ] || [ "$id" -gt $TOP ] || fail "idserver's ID $id of orders is not above $TOP ($ids)"
done
log "2-3. idserver's first IDs of orders: $ids"

# 4. Raise: forward only.
expect_ctl 1 "would move it back" ns raise orders --above 5000
expect_ctl 0 "^ns raise: orders: its next ID is at least 2000000000000" ns raise orders --above 1999999999999
[ $(($(ticket odd orders) * B)) -ge 2000000000000 ] || fail "a ticket below the raise"
# idserver lets go of what it buffered below the raise within recheck_ms.
above_raise() { [ "$(q "$SVC_PORT" 'ID orders\n')" -ge 2000000000000 ]; }
wait_for "idserver's IDs of orders above the raise" 10 above_raise
log "4. ns raise forward ok, backward refused"

# 5. Drop, then create again: above the old marks.
expect_ctl 1 "an idserver may use it; --force drops it anyway" ns drop orders
# Killed after its first step on the odd server: no row 'dropped' beside one 'ready'
# (an idserver reads no dropped row, nor the copies it keeps: design 13.3); run again.
rc=0; { IDGENCTL_KILL_AT=unready "${CTL[@]}" ns drop orders --force >/dev/null; } 2>/dev/null || rc=$?
[ "$rc" -ne 0 ] || fail "IDGENCTL_KILL_AT=unready: ns drop was not killed"
st_odd=$(db_sql odd "SELECT state FROM idgen.idgen_namespaces WHERE name = 'orders'")
st_even=$(db_sql even "SELECT state FROM idgen.idgen_namespaces WHERE name = 'orders'")
[ "$st_odd" = creating ] && [ "$st_even" = ready ] ||
	fail "a drop killed after the odd server's first step left odd $st_odd, even $st_even"
expect_ctl 0 "^ns drop: orders dropped on 2 servers" ns drop orders --force
gone() { q "$SVC_PORT" 'ID orders\n' | has "^ERR RANGE unknown namespace"; }
wait_for "a dropped namespace unknown to idserver" 10 gone
expect_ctl 0 "its first ID is (200000000[0-9]{4}) .*, above its old IDs" ns create orders --block-size $B
first=$(sed -n 's/.*its first ID is \([0-9]*\).*/\1/p' "$T_DIR/ctl.out")
[ "$first" -ge 2000000000000 ] || fail "re-created below its old marks: $first"
wait_for "orders served again" 10 ns_served "$SVC_PORT" orders
[ "$(q "$SVC_PORT" 'ID orders\n')" -ge "$first" ] || fail "idserver's ID of the re-created orders below $first"
expect_ctl 1 "no namespace nothere" ns drop nothere
db_sql odd "CREATE DATABASE shard9; CREATE TABLE shard9.t (id BIGINT UNSIGNED PRIMARY KEY); INSERT INTO shard9.t VALUES (18446744073709551615)"
expect_ctl 1 "the largest existing ID 18446744073709551615 is not below 2\^53" ns create big --block-size 1 \
	--start-above-max "mariadb://root@127.0.0.1:$ODD_PORT/shard9" t id
log "5. dropped and re-created: starts at $first, above its old marks"

# 6. Re-created three times with a larger B each time (issue 31: the kept table's
# counter, a ticket of the old B, multiplied the IDs by the ratio of the B's, and
# the command printed a first ID far below the true one). Each starts just above
# the old IDs in ID space, and the first ID printed is the one the tickets give.
old_end() {	# the end, in ID space, of every marks row of orders on both servers
	for r in odd even; do
		db_sql $r "SELECT MAX((high_water + 1) * block_size) FROM idgen.idgen_ns_marks WHERE ns = 'orders'"
	done | sort -n | tail -n 1
}
for B in 4000 64000 1024000; do
	expect_ctl 0 "^ns drop: orders dropped" ns drop orders --force
	wait_for "orders let go" 10 gone
	end=$(old_end)
	expect_ctl 0 "^ns create: orders ready on 2 servers \(B=$B, fallback snowflake\): its first ID is [0-9]+ \(first tickets: odd [0-9]+, even [0-9]+\), above its old IDs" \
		ns create orders --block-size $B
	read -r first t1 t2 < <(sed -n 's/.*its first ID is \([0-9]*\) (first tickets: odd \([0-9]*\), even \([0-9]*\)).*/\1 \2 \3/p' "$T_DIR/ctl.out")
	d1=$(ticket odd orders) d2=$(ticket even orders)
	[ "$d1" = "$t1" ] && [ "$d2" = "$t2" ] || fail "B=$B: printed first tickets $t1, $t2; drawn $d1, $d2"
	lo=$(( (d1 < d2 ? d1 : d2) * B ))
	[ "$first" = "$lo" ] || fail "B=$B: printed first ID $first, the tickets give $lo"
	[ "$first" -ge "$end" ] && [ "$first" -lt $((end + 2 * B)) ] ||
		fail "B=$B: first ID $first is not just above the old IDs (below $end)"
	wait_for "orders served at B=$B" 10 ns_served "$SVC_PORT" orders
	id=$(q "$SVC_PORT" 'ID orders\n')
	[ "$id" -ge "$end" ] && [ "$id" -lt $((end + 16 * B)) ] || fail "B=$B: idserver's ID $id, old IDs below $end"
	log "6. re-created at B=$B: first ID $first (old IDs below $end), idserver's $id"
done
log ok
