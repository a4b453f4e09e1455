#!/usr/bin/env bash
# A namespace's ticket table on another engine than InnoDB (issue 30, item 8;
# docs/design.md 2.3, 13.6): tickets_eng moved to MyISAM on the odd server is
# refused there by a running idserver and by a fresh one (one log line each,
# naming the table, the engine and the ALTER TABLE that repairs it); no ticket
# of eng is drawn on the odd server meanwhile, while the even server serves eng
# and the odd server serves the default sequence and another namespace; once
# repaired, the odd server serves eng again. The same for a marks row missing
# (issue 33: one check of every ticket table). Every ID collected, no duplicate.
. "$(dirname "$0")/lib.sh"

pair_up
ctl_env
A=$SVC_PORT B=$((SVC_PORT + 1))
FLAGS=(--recheck_ms 300 --refill_wait_ms 200)
NEEDLE="namespace eng REFUSED on the odd ticket server: ticket table idgen.tickets_eng uses engine MyISAM, must be InnoDB"

ctl ns create eng --block-size 10
ctl ns create other --block-size 10
idserver_start a "$A" "${FLAGS[@]}"
wait_for "eng served" 10 ns_served "$A" eng
wait_for "other served" 10 ns_served "$A" other
wait_ns_buffered "$A" eng; wait_ns_buffered "$A" other

# last ROLE NS: the last ticket drawn from NS's table on that server (its one row).
last() { db_sql "$1" "SELECT IFNULL(MAX(id), 0) FROM idgen.tickets_$2"; }
# take PORT NS FILE ROUNDS: IDS 100 of NS, ROUNDS times, appended to FILE ("id 1").
take() {
	local out k
	for k in $(seq 1 "$4"); do
		out=$(q "$1" "IDS 100 $2\n")
		[ "$(wc -w <<<"$out")" = 100 ] || fail "IDS 100 $2 on port $1: $out"
		tr ' ' '\n' <<<"$out" | sed 's/$/ 1/' >>"$3"
	done
}
# odd_blocks FILE AFTER: IDs in FILE from odd tickets of B 10 above AFTER.
odd_blocks() { awk -v a="$2" '{ t = int($1 / 10) } t % 2 == 1 && t > a' "$1" | wc -l; }

take "$A" eng "$T_DIR/eng.txt" 20
o0=$(last odd eng)
[ "$o0" -gt 0 ] && [ "$(last even eng)" -gt 0 ] || fail "eng not drawn on both servers (odd $o0, even $(last even eng))"
log "eng served from both servers (odd's last ticket $o0)"

# 1. MyISAM on the odd server: refused there at the next check, once.
db_sql odd "ALTER TABLE idgen.tickets_eng ENGINE=MyISAM"
wait_for "a refuses eng on odd" 10 grep -qF "$NEEDLE" "$T_DIR/a.log"
grep -qF "repair: ALTER TABLE idgen.tickets_eng ENGINE=InnoDB" "$T_DIR/a.log" || fail "no repair line: $(grep -F 'eng REFUSED' "$T_DIR/a.log")"
o1=$(last odd eng)
idserver_start b "$B" "${FLAGS[@]}"
wait_for "b refuses eng on odd" 10 grep -qF "$NEEDLE" "$T_DIR/b.log"
# Buffered blocks of odd, drawn before, may still be handed out; nothing new.
o_other=$(last odd other)
take "$A" eng "$T_DIR/eng.txt" 40
take "$B" eng "$T_DIR/eng_b.txt" 40
take "$A" other "$T_DIR/other.txt" 20
[ "$(last odd eng)" = "$o1" ] || fail "tickets of eng drawn on odd from its MyISAM table: last $o1, now $(last odd eng)"
[ "$(odd_blocks "$T_DIR/eng_b.txt" "$o1")" = 0 ] || fail "b handed out eng IDs of odd tickets above $o1"
[ "$(last odd other)" -gt "$o_other" ] || fail "odd stopped serving namespace other"
# The default sequence from odd: blocks of 2^20 alternate between the servers, so
# mint until one of odd's comes (at most 8 rounds of 500,000 IDs).
for _ in 1 2 3 4 5 6 7 8; do
	read -r errs _ < <(mint_ids "$A" 500 "$T_DIR/default.txt")
	[ "$errs" = 0 ] || fail "default sequence: $errs errors"
	[ "$(awk '{ t = int($1 / 1048576) } t % 2 == 1' "$T_DIR/default.txt" | wc -l)" -gt 0 ] && break
done
[ "$(awk '{ t = int($1 / 1048576) } t % 2 == 1' "$T_DIR/default.txt" | wc -l)" -gt 0 ] ||
	fail "no default ID from the odd server"
for f in a b; do
	n=$(grep -cF "$NEEDLE" "$T_DIR/$f.log")
	[ "$n" = 1 ] || fail "$f logged the refusal $n times"
done
log "1. tickets_eng on MyISAM on odd: refused there by a running and a fresh idserver (logged once each), 8000 IDs of eng from even only; odd serves other and the default"

# 2. Repaired: odd serves eng again.
db_sql odd "ALTER TABLE idgen.tickets_eng ENGINE=InnoDB"
for k in $(seq 1 30); do
	take "$A" eng "$T_DIR/eng.txt" 5
	take "$B" eng "$T_DIR/eng_b.txt" 5
	[ "$(last odd eng)" -gt "$o1" ] && [ "$(odd_blocks "$T_DIR/eng_b.txt" "$o1")" -gt 0 ] && break
	sleep 0.1
done
[ "$(last odd eng)" -gt "$o1" ] || fail "odd not used for eng after the repair"
[ "$(odd_blocks "$T_DIR/eng_b.txt" "$o1")" -gt 0 ] || fail "b took no eng ticket from odd after the repair"
log "2. repaired: eng drawn on odd again (last ticket $(last odd eng))"

# 3. The one check of every ticket table (issue 33) wants every marks row its
# ticket transaction writes, as tickets64's does: odd without its copy row of
# even's mark of eng (a copy UPDATE of it would write nothing, yet count as
# landed) is refused for eng, by both idservers; made again, it serves eng.
ROW_NEEDLE="namespace eng REFUSED on the odd ticket server: idgen_ns_marks lacks the row 'even' for tickets_eng (the copy of the even server's mark)"
db_sql odd "CREATE TABLE idgen.saved_row AS SELECT * FROM idgen.idgen_ns_marks WHERE ns = 'eng' AND role = 'even'; DROP TRIGGER idgen.idgen_ns_marks_no_delete; DELETE FROM idgen.idgen_ns_marks WHERE ns = 'eng' AND role = 'even'"
wait_for "a refuses eng on odd without the row" 10 grep -qF "$ROW_NEEDLE" "$T_DIR/a.log"
wait_for "b refuses eng on odd without the row" 10 grep -qF "$ROW_NEEDLE" "$T_DIR/b.log"
o3=$(last odd eng)
take "$A" eng "$T_DIR/eng.txt" 20
take "$B" eng "$T_DIR/eng_b.txt" 20
[ "$(last odd eng)" = "$o3" ] || fail "tickets of eng drawn on odd without its copy row: last $o3, now $(last odd eng)"
log "3. odd without its copy row of even's mark of eng: refused by both (last odd ticket $o3)"
db_sql odd "INSERT INTO idgen.idgen_ns_marks SELECT * FROM idgen.saved_row; DROP TABLE idgen.saved_row"
for k in $(seq 1 30); do
	take "$A" eng "$T_DIR/eng.txt" 5
	[ "$(last odd eng)" -gt "$o3" ] && break
	sleep 0.1
done
[ "$(last odd eng)" -gt "$o3" ] || fail "odd not used for eng after its row was made again"
log "   the row made again: eng drawn on odd again (last ticket $(last odd eng))"

n=$(check_unique "$T_DIR/eng.txt" "$T_DIR/eng_b.txt") || fail "DUPLICATE IDs of eng"
log "$n IDs of eng, no duplicate"
log ok
