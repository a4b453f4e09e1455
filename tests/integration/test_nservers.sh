#!/usr/bin/env bash
# A region of four ticket servers in a pre-sized tier (tier_increment 8): the
# pair (offsets 1, 2) and two servers added online (offsets 3, 4) with
# `idgenctl tier add-server` (docs/design.md section 12.2). Every ID collected:
#   1. an idserver on the pair serves; add-server refuses a taken, used or
#      wrongly set offset, and a run killed (SIGKILL) after each of its steps
#      is run again and finishes;
#   2. tier check passes over the four servers;
#   3. an idserver given the four (more_servers) takes tickets of all four
#      residues while the first, left on the pair, goes on with two: no
#      duplicate between them; o3's address offered as offset 5 is refused,
#      naming o3 (never a renumbering);
#   4. a server beyond the pair restored from an old backup (its counter and
#      its own mark back to zero) is refused by a fresh idserver, from the
#      copies of its mark the other servers keep, and tier check names it;
#   5. a retired server's offset is never given again;
#   6. beyond four: two more servers added, an idserver on the six uses all.
. "$(dirname "$0")/lib.sh"

M=8
P3=$((ODD_PORT + 30)) P4=$((ODD_PORT + 31))
export DBPAIR_INCREMENT=$M
pair_up
IDS=$T_DIR/ids.txt
: >"$IDS"
export IDGEN_DB_PASSWORD IDGEN_ADMIN_USER=root IDGEN_ADMIN_PASSWORD=
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password")
FLAGS=(--tier_increment $M --reprobe_max_ms 300 --refill_wait_ms 50)
CTL=("$BUILD/idgenctl" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" --tier_increment $M)
MORE="3=127.0.0.1:$P3 4=127.0.0.1:$P4"
on_cleanup() { [ -d "$T_DIR/db2" ] && "$ROOT/scripts/dbpair.sh" down "$T_DIR/db2" >/dev/null 2>&1; }

# residues FILE ALLOWED...: every ID of FILE is a ticket of the offsets ALLOWED
# (mod M), and every one of them gave some.
residues() {
	python3 - "$1" "$(stat "$SVC_PORT" block_size)" "$M" "${@:2}" <<'PY'
import sys
path, b, m, allowed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), set(map(int, sys.argv[4:]))
seen = set()
for line in open(path):
    first, n = map(int, line.split())
    assert first + n <= 1 << 53, "a Snowflake ID"
    for t in range(first // b, (first + n - 1) // b + 1):
        assert t % m in allowed, "ticket %d (residue %d)" % (t, t % m)
        seen.add(t % m)
if seen != allowed:
    print("residues %s, want %s" % (sorted(seen), sorted(allowed)), file=sys.stderr)
    sys.exit(3)
PY
}

# mint_residues PORT FILE ALLOWED...: rounds of 400 requests (at most 8) until
# every offset of ALLOWED gave tickets: which servers a short burst reaches
# depends on which were checked first (a clean clone once saw only 2 and 4 of 1,
# 2, 4 in 400 requests). A ticket of another offset fails at once (status 1); errors
# fail; all rounds without every offset: status 3.
mint_residues() {
	local port=$1 file=$2 k errs rc=3
	shift 2
	: >"$file"
	for k in 1 2 3 4 5 6 7 8; do
		read -r errs _ < <(mint_ids "$port" 400 "$file")
		[ "$errs" = 0 ] || fail "port $port: $errs errors in round $k"
		residues "$file" "$@" 2>/dev/null
		rc=$?
		[ "$rc" = 3 ] || break
	done
	[ "$rc" = 0 ] || residues "$file" "$@"
}

# 1. The pair serves; the two servers are prepared while it does.
for r in odd even; do db_sql "$r" "UPDATE idgen.idgen_meta SET block_size = 65536"; done
idserver_start old "$SVC_PORT" "${FLAGS[@]}"
wait_buffered "$SVC_PORT"
read -r errs _ < <(mint_ids "$SVC_PORT" 100 "$T_DIR/old-1.txt")
[ "$errs" = 0 ] || fail "the pair: $errs errors"
cat "$T_DIR/old-1.txt" >>"$IDS"
"$ROOT/scripts/dbpair.sh" more "$T_DIR/db" 3 "$P3" >/dev/null
"$ROOT/scripts/dbpair.sh" more "$T_DIR/db" 4 "$P4" >/dev/null
expect_ctl 2 "offset '2' must be a number from 3" tier add-server 2 "127.0.0.1:$P3"
expect_ctl 2 "offset '9' must be a number from 3 .* to 8" tier add-server 9 "127.0.0.1:$P3"
expect_ctl 2 "is not IP:PORT" tier add-server 3 "localhost:$P3"
expect_ctl 1 "has auto_increment_increment 8, auto_increment_offset 4, .*repair: set them to 8, 3 and 1" \
	tier add-server 3 "127.0.0.1:$P4"
expect_ctl 1 "127.0.0.1:$ODD_PORT is already server odd \(offset 1\) of the tier in the config" tier add-server 3 "127.0.0.1:$ODD_PORT"
# Killed after each step, then run again: it finishes, and a third run is a no-op.
for step in new-meta new-marks others; do
	rc=0; { IDGENCTL_KILL_AT=$step "${CTL[@]}" tier add-server 3 "127.0.0.1:$P3" >/dev/null; } 2>/dev/null || rc=$?
	[ $rc = 137 ] || fail "add-server killed at $step: exit $rc, want 137 (SIGKILL)"
done
expect_ctl 0 "^  more_servers = 3=127.0.0.1:$P3\$" tier add-server 3 "127.0.0.1:$P3"
expect_ctl 0 "o3 \(offset 3 of 8, region 0, B=65536\) at 127.0.0.1:$P3 is ready" tier add-server 3 "127.0.0.1:$P3"
{ IDGENCTL_KILL_AT=others "${CTL[@]}" --more_servers "3=127.0.0.1:$P3" tier add-server 4 "127.0.0.1:$P4" >/dev/null; } 2>/dev/null || true
expect_ctl 0 "^  more_servers = 3=127.0.0.1:$P3 4=127.0.0.1:$P4\$" --more_servers "3=127.0.0.1:$P3" \
	tier add-server 4 "127.0.0.1:$P4"
[ "$("$ROOT/scripts/dbpair.sh" sql "$T_DIR/db" odd "SELECT GROUP_CONCAT(role ORDER BY role) FROM idgen.idgen_marks")" = "even,o3,o4,odd" ] ||
	fail "the odd server's marks rows: $("$ROOT/scripts/dbpair.sh" sql "$T_DIR/db" odd "SELECT GROUP_CONCAT(role) FROM idgen.idgen_marks")"
log "1. add-server: offsets 3 and 4 prepared online, killed after every step and resumed; wrong offsets refused"

# 2. The tier of four, checked.
expect_ctl 0 "^tier check: ok \(4 servers, B=65536\)" --more_servers "$MORE" tier check
log "2. tier check: four servers clean"

# 3. Four servers for a new idserver, the pair for the old one, both under load.
idserver_start new $((SVC_PORT + 1)) "${FLAGS[@]}" --more_servers "$MORE"
wait_buffered $((SVC_PORT + 1))
# Rounds until every server has given tickets (each takes turns once its connection
# is checked), at least 2 and at most 10 (about 16 tickets each).
for k in 1 2 3 4 5 6 7 8 9 10; do
	mint_ids "$SVC_PORT" 100 "$T_DIR/old-2.txt" >/dev/null & m=$!
	mint_ids $((SVC_PORT + 1)) 100 "$T_DIR/new.txt" >/dev/null
	wait "$m"
	[ "$k" -ge 2 ] && residues "$T_DIR/old-2.txt" 1 2 2>/dev/null && residues "$T_DIR/new.txt" 1 2 3 4 2>/dev/null && break
done
residues "$T_DIR/old-2.txt" 1 2 || fail "the idserver on the pair took a ticket of another offset"
residues "$T_DIR/new.txt" 1 2 3 4 || fail "the idserver on four servers did not use all four"
cat "$T_DIR/old-2.txt" "$T_DIR/new.txt" >>"$IDS"
grep -qE '^mark (- )?o3 [1-9]' "$T_DIR/new.state" || fail "the state file has no mark of o3"
[ "$(stat $((SVC_PORT + 1)) o3_state)" = up ] && [ "$(stat $((SVC_PORT + 1)) o4_tickets)" -gt 0 ] ||
	fail "STATS of o3/o4: $(q $((SVC_PORT + 1)) 'STATS\n' | grep -E ' o[34]_' | head -4)"
log "3. one idserver on four servers (residues 1-4 of 8), one left on the pair (1, 2): both serve"
# o3 has issued tickets: offered again as offset 5, it is named, never to be renumbered
# (issue 31: the command said to set its auto_increment_offset to 5 and restart it).
expect_ctl 1 "127.0.0.1:$P3 is already server o3 \(offset 3\) of the tier \(its idgen_meta says so, and it has issued tickets\)" \
	tier add-server 5 "127.0.0.1:$P3"
! grep -q "repair" "$T_DIR/ctl.out" || fail "add-server of o3 as 5 names a repair: $(cat "$T_DIR/ctl.out")"
expect_ctl 1 "127.0.0.1:$P3 is already server o3 \(offset 3\) of the tier in the config" \
	--more_servers "$MORE" tier add-server 5 "127.0.0.1:$P3"
log "3b. add-server 5 at o3's address refused, naming o3"

# 4. o3 restored from an old backup: counter and own mark back to zero. A fresh
# idserver learns o3's mark from the copies on the others and refuses it.
# A copy of o3's mark reaches another server with that server's next ticket
# transaction or witness (design 12.2): a server whose last ticket came before o3's
# first holds none yet (issue 36 saw o4 without one, reconnecting when the idserver
# stopped). So the idserver mints until some other server holds a copy (bounded),
# and no copy is ever above o3's own mark.
copies() {
	local r c out=""
	for r in odd even o4; do
		c=$("$ROOT/scripts/dbpair.sh" sql "$T_DIR/db" "$r" "SELECT high_water FROM idgen.idgen_marks WHERE role = 'o3'")
		out+="$r=$c "
	done
	echo "$out"
}
for _ in 1 2 3 4 5 6 7 8 9 10; do
	grep -qE '=[1-9]' <<<"$(copies)" && break
	mint_ids $((SVC_PORT + 1)) 100 "$T_DIR/new-more.txt" >/dev/null
done
[ -f "$T_DIR/new-more.txt" ] && cat "$T_DIR/new-more.txt" >>"$IDS"
kill -TERM "$new_PID"
wait "$new_PID" 2>/dev/null || true
mark3=$("$ROOT/scripts/dbpair.sh" sql "$T_DIR/db" o3 "SELECT high_water FROM idgen.idgen_marks WHERE role = 'o3'")
[ "$mark3" -gt 0 ] || fail "o3 has no mark of its own"
seen=$(copies)
grep -qE '=[1-9]' <<<"$seen" || fail "no other server keeps a copy of o3's mark: $seen"
for kv in $seen; do
	[ "${kv#*=}" -le "$mark3" ] || fail "a copy of o3's mark is above o3's own $mark3: $seen"
done
db_restored o3 "DELETE FROM idgen.tickets64; ALTER TABLE idgen.tickets64 AUTO_INCREMENT = 1; UPDATE idgen.idgen_marks SET high_water = 0 WHERE role = 'o3'"
idserver_start fresh $((SVC_PORT + 2)) "${FLAGS[@]}" --more_servers "$MORE"
wait_for "o3 refused as regressed" 15 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $((SVC_PORT + 2)) | awk '\$2==\"o3_state\"{print \$3}')\" = regressed ]"
grep -q "o3 ticket server .*counter regressed: next ticket [0-9]* is not above the high-water mark [0-9]* (.*the other servers' copies: [1-9]" "$T_DIR/fresh.log" ||
	fail "the refusal does not name the copies: $(grep -m1 regressed "$T_DIR/fresh.log")"
wait_buffered $((SVC_PORT + 2))
mint_residues $((SVC_PORT + 2)) "$T_DIR/fresh.txt" 1 2 4 ||
	fail "the fresh idserver used the restored o3, or not each of the others"
cat "$T_DIR/fresh.txt" >>"$IDS"
expect_ctl 1 "^VIOLATION o3: counter regressed" --more_servers "$MORE" tier check
log "4. o3 restored from an old backup: refused from the others' copies of its mark; tier check names it"

# 5. o4 retired: idservers no longer list it; its offset is never given again
# (the others keep its mark), not even to a fresh server at another address.
kill -TERM "$fresh_PID"
wait "$fresh_PID" 2>/dev/null || true
mkdir -p "$T_DIR/db2" && cp "$T_DIR/db/db_password" "$T_DIR/db2/"
"$ROOT/scripts/dbpair.sh" more "$T_DIR/db2" 4 $((ODD_PORT + 32)) >/dev/null ||
	fail "a second server of offset 4 did not start"
expect_ctl 1 "offset 4 was used before: the odd server holds its mark [1-9]" \
	--more_servers "3=127.0.0.1:$P3" tier add-server 4 "127.0.0.1:$((ODD_PORT + 32))"
log "5. o4 retired from the config: its offset refused to a new server (the others keep its mark)"

# 6. Beyond four: o3 repaired (the repair tier check names), o5 and o6 added,
# an idserver on the six takes tickets of every residue.
P5=$((ODD_PORT + 33)) P6=$((ODD_PORT + 34))
expect_ctl 1 "^VIOLATION o3: counter regressed" --more_servers "$MORE" tier check
repair=$(grep -o "ALTER TABLE idgen.tickets64 AUTO_INCREMENT = [0-9]*" "$T_DIR/ctl.out" | head -n 1)
"$ROOT/scripts/dbpair.sh" sql "$T_DIR/db" o3 "$repair"
"$ROOT/scripts/dbpair.sh" more "$T_DIR/db" 5 "$P5" >/dev/null
"$ROOT/scripts/dbpair.sh" more "$T_DIR/db" 6 "$P6" >/dev/null
expect_ctl 0 "^  more_servers = $MORE 5=127.0.0.1:$P5\$" --more_servers "$MORE" tier add-server 5 "127.0.0.1:$P5"
MORE6="$MORE 5=127.0.0.1:$P5 6=127.0.0.1:$P6"
expect_ctl 0 "^  more_servers = $MORE6\$" --more_servers "$MORE 5=127.0.0.1:$P5" tier add-server 6 "127.0.0.1:$P6"
expect_ctl 0 "^tier check: ok \(6 servers, B=65536\)" --more_servers "$MORE6" tier check
idserver_start six $((SVC_PORT + 3)) "${FLAGS[@]}" --more_servers "$MORE6"
wait_buffered $((SVC_PORT + 3))
mint_residues $((SVC_PORT + 3)) "$T_DIR/six.txt" 1 2 3 4 5 6 ||
	fail "the idserver on six servers did not use all six"
cat "$T_DIR/six.txt" >>"$IDS"
log "6. o3 repaired, o5 and o6 added: an idserver on six servers takes residues 1-6 of 8; tier check ok"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the idservers"
log "7. $n IDs in $(wc -l <"$IDS") ranges: no duplicate"
log ok
