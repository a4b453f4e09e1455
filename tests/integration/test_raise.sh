#!/usr/bin/env bash
# A live change of the tier's increment (docs/design.md section 12.4): a classic
# pair (M = 2) serving two idservers under load is moved to M = 8, then grows
# to four servers. Every ID is collected:
#   1. `idgenctl tier raise-increment 8` killed (SIGKILL) after each of its
#      steps (plan, seal, floor, open) and run again; tier check names the
#      unfinished change; the idservers serve throughout without an error;
#   2. both idservers follow without a restart (STATS tier_generation 1,
#      tier_increment 8, one log line), their old connections opened again,
#      and every ticket above the floor has its server's residue mod 8;
#   3. two servers added at offsets 3 and 4 start above the floor (the
#      residues they own were drawn under M = 2); an idserver on the four
#      takes tickets of all four residues; tier check passes;
#   3b. o4 retired under load (the command killed once): refused by the
#      idserver that used it, its offset refused to add-server, tier check
#      clean without it;
#   4. an idserver restarted with its old config (tier_increment 2) follows
#      the tier's generation at start;
#   5. a second change (to 16) under an idserver whose connections were
#      checked before it and are not checked again for a minute: the tickets
#      it draws on those old sessions are not used;
#   6. no ID twice, across all of it.
. "$(dirname "$0")/lib.sh"

P3=$((ODD_PORT + 40)) P4=$((ODD_PORT + 41))
pair_up
for r in odd even; do db_sql "$r" "UPDATE idgen.idgen_meta SET block_size = 65536"; done
export IDGEN_DB_PASSWORD IDGEN_ADMIN_USER=root IDGEN_ADMIN_PASSWORD=
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password")
FLAGS=(--reprobe_max_ms 300 --refill_wait_ms 50 --recheck_ms 1000)
CTL=("$BUILD/idgenctl" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT")
MORE="3=127.0.0.1:$P3 4=127.0.0.1:$P4"
A=$SVC_PORT B=$((SVC_PORT + 1)) C=$((SVC_PORT + 2))
STOP=$T_DIR/stop

# load PORT FILE: IDS 1000 x 50 batches from PORT until $STOP exists (at most
# 200 batches); any ERR line fails the test afterwards.
load() {
	local k errs
	for k in $(seq 1 200); do
		[ -e "$STOP" ] && return 0
		read -r errs _ < <(mint_ids "$1" 50 "$2")
		[ "$errs" = 0 ] || { echo "$errs" >"$2.err"; return 1; }
	done
}

# above FILE FLOOR ALLOWED...: every ticket above FLOOR in FILE has one of the
# residues ALLOWED mod $M, and each of them gave one (SUBSET=1: some of them).
# Prints how many tickets.
M=8
above() {
	python3 - "$1" 65536 "$2" "$M" "${@:3}" <<'PY'
import os, sys
path, b, floor, m, allowed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), set(map(int, sys.argv[5:]))
sub = os.environ.get("SUBSET") == "1"
seen, n = set(), 0
for line in open(path):
    first, count = map(int, line.split())
    if first + count > 1 << 53:
        continue
    for t in range(first // b, (first + count - 1) // b + 1):
        if t > floor:
            assert t % m in allowed, "ticket %d above the floor %d has residue %d mod %d" % (t, floor, t % m, m)
            seen.add(t % m)
            n += 1
assert seen == allowed or (sub and seen), "residues above the floor %s, want %s" % (sorted(seen), sorted(allowed))
print(n)
PY
}

idserver_start a "$A" "${FLAGS[@]}"
idserver_start b "$B" "${FLAGS[@]}"
wait_buffered "$A"
wait_buffered "$B"
load "$A" "$T_DIR/a.txt" & LA=$!
load "$B" "$T_DIR/b.txt" & LB=$!
sleep 1

# 1. Killed after each step, run again; then finished.
expect_ctl 2 "the increment '1' must be a number from 2 to 64" tier raise-increment 1
for step in plan seal floor open; do
	rc=0; { IDGENCTL_KILL_AT=$step "${CTL[@]}" tier raise-increment 8 >/dev/null; } 2>/dev/null || rc=$?
	[ $rc = 137 ] || fail "raise-increment killed at $step: exit $rc, want 137 (SIGKILL)"
	if [ $step = seal ]; then
		expect_ctl 1 "^VIOLATION odd: in generation 0 \(tier: 0\), planned, sealed: a change of the increment is unfinished; repair: idgenctl tier raise-increment 8" tier check
		expect_ctl 1 "a change of the increment to 8 is in progress: run idgenctl tier raise-increment 8" tier raise-increment 4
	fi
	sleep 0.5
done
expect_ctl 0 "^tier raise-increment: generation 1, M = 8 \(was 2\), floor [0-9]+" tier raise-increment 8
FLOOR=$(sed -n 's/.*floor \([0-9]*\):.*/\1/p' "$T_DIR/ctl.out")
grep -q "^  tier_increment = 8$" "$T_DIR/ctl.out" && grep -q "^  auto_increment_increment = 8$" "$T_DIR/ctl.out" ||
	fail "raise-increment does not print the settings to change: $(cat "$T_DIR/ctl.out")"
expect_ctl 0 "the tier is in generation 1 with M = 8 already" tier raise-increment 8
expect_ctl 0 "^note: the tier is in generation 1 with M = 8 \(idservers follow it\); tier_increment is 2 in this config: set it to 8" tier check
grep -q "^tier check: ok (2 servers" "$T_DIR/ctl.out" || fail "tier check after the change: $(cat "$T_DIR/ctl.out")"
expect_ctl 0 "^tier check: ok \(2 servers" --tier_increment 8 tier check
log "1. raise-increment 8 killed after plan, seal, floor and open, resumed each time; floor $FLOOR"

# 2. Both follow without a restart: the view, the log line, fresh tickets mod 8.
for p in "$A" "$B"; do
	wait_for "port $p in generation 1" 20 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $p | awk '\$2==\"tier_generation\"{print \$3}')\" = 1 ]"
	[ "$(stat "$p" tier_increment)" = 8 ] || fail "port $p: tier_increment $(stat "$p" tier_increment)"
done
grep -q "tier generation 1: the increment moved from 2 to 8 .*set tier_increment = 8" "$T_DIR/a.log" ||
	fail "no log line of the change: $(grep -m3 'generation\|sealed' "$T_DIR/a.log")"
grep -q "sealed for a change of the tier's increment" "$T_DIR/a.log" "$T_DIR/b.log" ||
	fail "no idserver saw a sealed server"
wait_for "tickets of generation 1 on both" 30 bash -c "
	[ \$(awk -v f=$FLOOR '\$1 < 2^53 && int(\$1 / 65536) > f' '$T_DIR/a.txt' | wc -l) -gt 0 ] &&
	[ \$(awk -v f=$FLOOR '\$1 < 2^53 && int(\$1 / 65536) > f' '$T_DIR/b.txt' | wc -l) -gt 0 ]"
touch "$STOP"
wait "$LA" || fail "idserver a answered ERR under the change: $(cat "$T_DIR/a.txt.err" 2>/dev/null)"
wait "$LB" || fail "idserver b answered ERR under the change: $(cat "$T_DIR/b.txt.err" 2>/dev/null)"
rm -f "$STOP"
# Some of the pair's residues (one server may still be reconnecting under load), no other.
n=$(SUBSET=1 above "$T_DIR/a.txt" "$FLOOR" 1 2) || fail "idserver a banked a ticket of the wrong residue"
SUBSET=1 above "$T_DIR/b.txt" "$FLOOR" 1 2 >/dev/null || fail "idserver b banked a ticket of the wrong residue"
log "2. both idservers in generation 1 without a restart; tickets above the floor mod 8 only 1 and 2 ($n on a)"

# 3. Two servers at the free offsets, above the floor; an idserver on four.
export DBPAIR_INCREMENT=8
"$ROOT/scripts/dbpair.sh" more "$T_DIR/db" 3 "$P3" >/dev/null
"$ROOT/scripts/dbpair.sh" more "$T_DIR/db" 4 "$P4" >/dev/null
CTL+=(--tier_increment 8)
for step in new-meta new-marks new-floor others; do
	rc=0; { IDGENCTL_KILL_AT=$step "${CTL[@]}" tier add-server 3 "127.0.0.1:$P3" >/dev/null; } 2>/dev/null || rc=$?
	[ $rc = 137 ] || fail "add-server killed at $step: exit $rc, want 137 (SIGKILL)"
	# Its meta row names its offset only at the end: nothing an idserver would accept.
	o=$("$ROOT/scripts/dbpair.sh" sql "$T_DIR/db" o3 "SELECT server_offset FROM idgen.idgen_meta")
	[ "$o" = 0 ] || [ $step = others ] || fail "add-server killed at $step left o3 with offset $o"
done
expect_ctl 0 "^  more_servers = 3=127.0.0.1:$P3\$" tier add-server 3 "127.0.0.1:$P3"
expect_ctl 0 "^  more_servers = $MORE\$" --more_servers "3=127.0.0.1:$P3" tier add-server 4 "127.0.0.1:$P4"
for r in o3 o4; do
	read -r g f ai < <("$ROOT/scripts/dbpair.sh" sql "$T_DIR/db" "$r" "SELECT tier_generation, tier_floor, (SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'idgen' AND TABLE_NAME = 'tickets64') FROM idgen.idgen_meta")
	[ "$g" = 1 ] && [ "$f" -ge $(((FLOOR + 1) * 65536)) ] && [ $((ai * 65536)) -ge "$f" ] ||
		fail "$r: generation $g, first ID $f, counter $ai (want 1, at least $(((FLOOR + 1) * 65536)), its block at or above it)"
done
expect_ctl 0 "^tier check: ok \(4 servers" --more_servers "$MORE" tier check
idserver_start c "$C" "${FLAGS[@]}" --tier_increment 8 --more_servers "$MORE"
wait_buffered "$C"
# Rounds until c has tickets of all four (at least 2, at most 6).
for k in 1 2 3 4 5 6; do
	mint_ids "$A" 60 "$T_DIR/a.txt" >/dev/null & m=$!
	mint_ids "$C" 120 "$T_DIR/c.txt" >/dev/null
	wait "$m"
	[ "$k" -ge 2 ] && above "$T_DIR/c.txt" "$FLOOR" 1 2 3 4 >/dev/null 2>&1 && break
done
above "$T_DIR/c.txt" "$FLOOR" 1 2 3 4 >/dev/null || fail "idserver c did not use the four servers' residues alone"
log "3. o3 (add-server killed after each step, resumed) and o4 added above the floor; an idserver on the four takes residues 1-4 of 8; tier check ok"

# 3b. o4 retired while c uses it (the command killed once and run again): c
# refuses it at its next check and serves on; its offset is never given again.
MORE3="3=127.0.0.1:$P3"
# --recheck_ms: the idservers' (after its flags the command waits 2 x recheck_ms
# + 1 s, until every idserver refused o4, then carries o4's copies: design 12.5).
rc=0; { IDGENCTL_KILL_AT=retire "${CTL[@]}" --more_servers "$MORE" --recheck_ms 1000 tier retire-server 4 >/dev/null; } 2>/dev/null || rc=$?
[ $rc = 137 ] || fail "retire-server killed: exit $rc, want 137 (SIGKILL)"
expect_ctl 0 "^tier retire-server: o4 retired on 4 servers" --more_servers "$MORE" --recheck_ms 1000 tier retire-server 4
wait_for "c refuses the retired o4" 15 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $C | awk '\$2==\"o4_state\"{print \$3}')\" = refused ]"
grep -q "o4 ticket server REFUSED: retired by idgenctl tier retire-server" "$T_DIR/c.log" || fail "c's log does not name the retirement"
read -r errs _ < <(mint_ids "$C" 100 "$T_DIR/c.txt")
[ "$errs" = 0 ] || fail "idserver c: $errs errors after o4's retirement"
expect_ctl 1 "^VIOLATION o4: retired .*repair: remove 4=127.0.0.1:$P4 from more_servers" --more_servers "$MORE" tier check
expect_ctl 1 "offset 4 is retired" --more_servers "$MORE3" tier add-server 4 "127.0.0.1:$P4"
expect_ctl 0 "^tier check: ok \(3 servers" --more_servers "$MORE3" tier check
log "3b. o4 retired (killed once, resumed): refused by c, which serves on; its offset refused to add-server"

# 4. Restarted with its old config: it follows the tier's generation at start.
kill -TERM "$a_PID"
wait "$a_PID" 2>/dev/null || true
idserver_start a "$A" "${FLAGS[@]}"
wait_for "a in generation 1 after its restart" 10 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $A | awk '\$2==\"tier_generation\"{print \$3}')\" = 1 ]"
# Serving tickets again before the load: a restart's first blocks come after its
# checks (all others first), and a request that finds none within refill_wait_ms
# goes to a fallback whose lease may not be claimed yet (seen: 200 ERR UNAVAILABLE).
wait_buffered "$A"
read -r errs _ < <(mint_ids "$A" 200 "$T_DIR/a2.txt")
[ "$errs" = 0 ] || fail "the restarted idserver: $errs errors"
SUBSET=1 above "$T_DIR/a2.txt" "$FLOOR" 1 2 >/dev/null || fail "the restarted idserver: residues"
log "4. idserver a restarted with tier_increment 2 follows generation 1 (M = 8) at start"

# 5. A second change, 8 to 16, while an idserver sits on connections it checked
# in generation 1 and will not check again for a minute: its next tickets are
# drawn with the old session increment, and must not be used.
idserver_start d $((SVC_PORT + 3)) "${FLAGS[@]}" --recheck_ms 60000 --tier_increment 8 --more_servers "$MORE3"
wait_buffered $((SVC_PORT + 3))
mint_ids $((SVC_PORT + 3)) 100 "$T_DIR/d.txt" >/dev/null
sleep 1
expect_ctl 0 "^tier raise-increment: generation 2, M = 16 \(was 8\), floor [0-9]+" --more_servers "$MORE3" tier raise-increment 16
FLOOR2=$(sed -n 's/.*floor \([0-9]*\):.*/\1/p' "$T_DIR/ctl.out")
M=16
# Until d has a ticket of the new generation (its buffered IDs and the fallback
# come first; under load its servers may take a while to be checked again).
for k in $(seq 1 30); do
	read -r errs _ < <(mint_ids $((SVC_PORT + 3)) 100 "$T_DIR/d.txt")
	[ "$errs" = 0 ] || fail "idserver d: $errs errors after the second change"
	SUBSET=1 above "$T_DIR/d.txt" "$FLOOR2" 1 2 3 >/dev/null 2>&1 && break
done
SUBSET=1 above "$T_DIR/d.txt" "$FLOOR2" 1 2 3 >/dev/null || fail "idserver d used a ticket drawn under the old increment, or none of the new generation"
unbanked=$(q $((SVC_PORT + 3)) 'STATS\n' | awk '$2 ~ /_unbanked$/ { n += $3 } END { print n + 0 }')
[ "$unbanked" -ge 1 ] || fail "idserver d drew no ticket on an old session"
log "5. raise-increment 16 under an idserver with stale sessions: $unbanked ticket(s) drawn on them not used"
expect_ctl 0 "^tier check: ok \(3 servers" --tier_increment 16 --more_servers "$MORE3" tier check

n=$(check_unique "$T_DIR/a.txt" "$T_DIR/b.txt" "$T_DIR/c.txt" "$T_DIR/a2.txt" "$T_DIR/d.txt") ||
	fail "DUPLICATE IDs across the change"
log "6. $n IDs across the change, its interruptions and the growth: no duplicate"
log ok
