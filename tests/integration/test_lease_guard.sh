#!/usr/bin/env bash
# Issue 30, item 3: the database refuses a hand edit that frees a held worker
# (UPDATE window_end = 0, holder = '', DELETE, REPLACE) or lowers a mark, with a
# message naming the rule (schema guard triggers, docs/design.md 6.5), as root
# and as the service user; a raising edit (the operators' repair) passes. Then
# the issue's scenario: every other number taken, the free refused, a second
# idserver finds no free number; both servers go down; the holder mints
# Snowflake IDs, the second refuses; every ID collected: none twice. On the code
# before the triggers the first UPDATE is accepted (and, run with
# GUARD_DEMO=1, the second idserver claims the number and mints the same IDs).
. "$(dirname "$0")/lib.sh"

pair_up
PW=$(cat "$T_DIR/db/db_password")
PA=$SVC_PORT PB=$((SVC_PORT + 1))
idserver_start a "$PA" --lease_window_ms 20000 --lease_extend_ms 5000
held() { [ "$(stat "$1" lease_state)" = held ]; }
wait_for "a's lease" 10 held "$PA"
wait_buffered "$PA"
w=$(stat "$PA" lease_worker)
srv=$([ $((w % 2)) = 1 ] && echo odd || echo even)
port=$([ "$srv" = odd ] && echo "$ODD_PORT" || echo "$EVEN_PORT")
row() { db_sql "$srv" "SELECT holder, window_start, window_end FROM idgen.idgen_leases WHERE worker = $w"; }
read -r holder start end <<<"$(row)"
grep -q ":${a_PID}:" <<<"$holder" || fail "worker $w's holder is not a (pid $a_PID): $holder"
# Each server's own mark above 0: tickets of both.
read -r errs _ < <(mint_ids "$PA" 20 "$T_DIR/a.txt")
[ "$errs" = 0 ] || fail "a: $errs errors while the pair is up"
log "a holds worker $w on the $srv server (window $start..$end)"

# as_service SQL: SQL as the service user, on the server of the worker.
as_service() {
	mariadb --no-defaults --protocol=tcp -h 127.0.0.1 -P "$port" -u idgen -p"$PW" \
		--connect-timeout=2 -N -B idgen -e "$1"
}
# refused WHO RULE SQL: SQL run as WHO (root on the server ON, default the
# worker's, or the service user on the worker's) fails with the trigger's
# message naming RULE (GUARD_DEMO=1: only logged, to show the old code's outcome).
refused() {
	local who=$1 rule=$2 sql=$3 out rc=0
	if [ "$who" = root ]; then out=$(db_sql "${ON:-$srv}" "$sql" 2>&1) || rc=$?
	else out=$(as_service "$sql" 2>&1) || rc=$?; fi
	if [ $rc = 0 ]; then
		[ "${GUARD_DEMO:-0}" = 1 ] && { log "accepted ($who): $sql"; return 0; }
		fail "accepted as $who: $sql"
	fi
	grep -q "ERROR 1644 (45000).*idgen: .*$rule" <<<"$out" || fail "$sql: not the trigger's refusal: $out"
}

# 1. The hand edits of the issue, as root and as the service user.
refused root "only its holder releases it" "UPDATE idgen.idgen_leases SET window_end = 0, holder = '' WHERE worker = $w"
refused service "only its holder releases it" "UPDATE idgen_leases SET window_end = 0, holder = '' WHERE worker = $w"
refused root "held worker is never freed" "UPDATE idgen.idgen_leases SET holder = '' WHERE worker = $w"
refused root "deleted only an hour after" "DELETE FROM idgen.idgen_leases WHERE worker = $w; INSERT INTO idgen.idgen_leases (worker) VALUES ($w)"
refused root "deleted only an hour after" "REPLACE INTO idgen.idgen_leases (worker) VALUES ($w)"
refused root "starts after the old one ends" "UPDATE idgen.idgen_leases SET window_start = 0 WHERE worker = $w"
# ... and a release by someone who is not the holder.
refused root "only its holder releases it" "SET @idgen_release = 'someone-else'; UPDATE idgen.idgen_leases SET window_end = 0 WHERE worker = $w"
# (GUARD_DEMO=1 leaves the marks alone: lowered, they would refuse the servers.)
[ "${GUARD_DEMO:-0}" = 1 ] || for r in odd even; do
	[ "$(db_sql "$r" "SELECT high_water FROM idgen.idgen_marks WHERE role = '$r'")" -gt 0 ] ||
		fail "the $r server has a mark of 0: $(db_sql "$r" "SELECT * FROM idgen.idgen_marks")"
	ON=$r refused root "mark is never lowered" "UPDATE idgen.idgen_marks SET high_water = 0 WHERE role = '$r'"
	ON=$r refused root "mark row is never deleted" "DELETE FROM idgen.idgen_marks WHERE role = '$r'"
done
if [ "${GUARD_DEMO:-0}" != 1 ]; then
	refused service "mark is never lowered" "UPDATE idgen_marks SET high_water = high_water - 1 WHERE role = '$srv'"
	refused service "mark is never lowered" "UPDATE idgen_marks SET block_size = block_size DIV 2 WHERE role = '$srv'"
fi
read -r h2 s2 e2 <<<"$(row)"
if [ "${GUARD_DEMO:-0}" != 1 ]; then
	[ "$h2 $s2" = "$holder $start" ] && [ "$e2" -ge "$end" ] || fail "worker $w's row changed: $h2 $s2 $e2"
fi
log "1. freeing worker $w and lowering the marks refused by the database, with the rule"

# 2. Every other number taken (a raising edit, the operators' repair: it passes),
# the free refused (above); a second idserver finds no free number.
far=99999999999999
for r in odd even; do
	db_sql "$r" "UPDATE idgen.idgen_leases SET window_end = GREATEST(window_end, $far) WHERE worker <> $w"
done
idserver_start b "$PB" --lease_window_ms 20000 --lease_extend_ms 5000
wait_for "b's first claim" 10 bash -c "grep -q 'no free worker number\|lease claimed' '$T_DIR/b.log'"
sleep 0.5
if [ "${GUARD_DEMO:-0}" != 1 ]; then
	[ "$(stat "$PB" lease_state)" != held ] || fail "b holds worker $(stat "$PB" lease_worker)"
	grep -q "no free worker number" "$T_DIR/b.log" || fail "b did not say why it has no lease"
fi
log "2. b: lease_state $(stat "$PB" lease_state) (worker $(stat "$PB" lease_worker))"

# 3. Both servers down before a's next extend: a mints in its window, b has
# no lease; every ID of both collected, minted at the same time.
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "a: both servers down" 10 tier_down "$PA"
wait_for "b: both servers down" 10 tier_down "$PB"
drain_pool "$PA"
drain_pool "$PB"
mint_ids "$PA" 300 "$T_DIR/a.txt" >"$T_DIR/a.sum" & ma=$!
mint_ids "$PB" 300 "$T_DIR/b.txt" >"$T_DIR/b.sum" & mb=$!
wait "$ma" "$mb"
touch "$T_DIR/b.txt"
read -r errs_a top_a <"$T_DIR/a.sum"
read -r errs_b _ <"$T_DIR/b.sum"
[ "$errs_a" = 0 ] || fail "a: $errs_a errors in its window"
[ "$top_a" -ge 9007199254740992 ] || fail "a minted no Snowflake ID ($top_a)"
n=$(check_unique "$T_DIR/a.txt" "$T_DIR/b.txt") || fail "IDs issued twice (a and b)"
sf_b=$(python3 -c 'import sys; print(sum(1 for l in open(sys.argv[1]) if int(l.split()[0]) + int(l.split()[1]) > 2**53))' "$T_DIR/b.txt")
[ "${GUARD_DEMO:-0}" = 1 ] || [ "$sf_b" = 0 ] || fail "b minted $sf_b Snowflake ranges without a lease"
log "3. both servers down: a minted, b refused $errs_b requests; $n IDs, none twice"
log "ok"
