#!/usr/bin/env bash
# Two regions, each its own odd/even pair, in one tier (tier_increment 4,
# region_bits 5: region r's pair has offsets 2r+1 and 2r+2, and the worker
# numbers 32r..32r+31). Two idservers per region. Every ID is collected:
#   1. both regions serve tickets of their own residues; leases in their ranges;
#   2. idgenctl tier check passes in each region;
#   3. region 1's pair goes down: the region 1 idserver configured with region
#      0's pair (other_regions) serves tickets of region 0's residues; the one
#      without serves Snowflake IDs of its own worker range (DECODE:
#      datacenter 1); region 0 keeps serving tickets;
#   4. region 1's pair comes back: tickets come from it again;
#   4b. an idserver of region 1 whose own pair answers later than region 0's at
#      start (a proxy) takes no ticket of region 0's;
#   5. an idserver of region 1 pointed at region 0's pair is refused, and so is
#      other_regions naming region 1's pair as region 0's;
#   6. a tier of regions has one B (issue 30, finding 4; docs/design.md 12.3):
#      region 1's live pair moved to B = 2^19 is refused at the next recheck,
#      naming the rule; a fresh pair of region 1 set up with B = 2^19, served by
#      an idserver with other_regions empty, is refused at start (both servers,
#      naming the rule) and gives no ticket ID (on the old code it served them:
#      its blocks overlap region 0's, and the IDs repeat);
#   7. no duplicate anywhere.
. "$(dirname "$0")/lib.sh"

M=4 BITS=5
R1_ODD=$((ODD_PORT + 10)) R1_EVEN=$((EVEN_PORT + 10))
R1=$T_DIR/db1
on_cleanup() { [ -d "$R1" ] && "$ROOT/scripts/dbpair.sh" down "$R1" >/dev/null 2>&1; }
DBPAIR_INCREMENT=$M DBPAIR_REGION=0 DBPAIR_REGION_BITS=$BITS pair_up
mkdir -p "$R1" && cp "$T_DIR/db/db_password" "$R1/db_password"	# one service password
DBPAIR_INCREMENT=$M DBPAIR_REGION=1 DBPAIR_REGION_BITS=$BITS \
	"$ROOT/scripts/dbpair.sh" up "$R1" "$R1_ODD" "$R1_EVEN" >/dev/null
# B is the schema's 2^20, the only B of a tier of regions (docs/design.md 12.3).
IDS=$T_DIR/ids.txt
: >"$IDS"

# residues FILE REGION [ALSO]: every ID of FILE is a ticket of REGION's pair (or
# of region ALSO's: buffered before a switch), and both servers of REGION gave
# some.
residues() {
	python3 - "$1" "$B" "$M" "$2" "${3:-$2}" <<'PY'
import sys
path, b, m, r, also = sys.argv[1], *map(int, sys.argv[2:])
allowed = {(2 * x + k) % m for x in (r, also) for k in (1, 2)}
want = {(2 * r + 1) % m, (2 * r + 2) % m}
seen = set()
for line in open(path):
    first, n = map(int, line.split())
    assert first + n <= 1 << 53, "a Snowflake ID in ticket mode"
    for t in range(first // b, (first + n - 1) // b + 1):
        assert t % m in allowed, "ticket %d" % t
        seen.add(t % m)
assert want <= seen, "both servers of region %d carry load: %s" % (r, seen)
PY
}

# mint_until PORT FILE REGION ALSO: IDS 1000 x 500 at a time into FILE until
# both servers of REGION gave tickets (buffered IDs of ALSO's go first; a
# block is 2^20 IDs).
mint_until() {
	local i errs top
	for i in $(seq 1 30); do
		read -r errs top < <(mint_ids "$1" 500 "$2")
		[ "$errs" = 0 ] && [ "$top" -lt $((1 << 53)) ] || fail "port $1: errors $errs, top $top: not tickets"
		residues "$2" "$3" "$4" 2>/dev/null && return 0
	done
	residues "$2" "$3" "$4" || fail "port $1: no tickets of region $3 after $i rounds"
}
FLAGS=(--tier_increment $M --region_bits $BITS --lease_extend_ms 500 --reprobe_max_ms 300
	--refill_wait_ms 50)
P=("$SVC_PORT" $((SVC_PORT + 1)) $((SVC_PORT + 2)) $((SVC_PORT + 3)))
idserver_start r0a "${P[0]}" "${FLAGS[@]}" --region 0
idserver_start r0b "${P[1]}" "${FLAGS[@]}" --region 0
# r1a may take region 0's tickets while its own pair is down; r1b may not.
ODD_PORT=$R1_ODD EVEN_PORT=$R1_EVEN idserver_start r1a "${P[2]}" "${FLAGS[@]}" --region 1 \
	--other_regions "0=127.0.0.1:$ODD_PORT,127.0.0.1:$EVEN_PORT"
ODD_PORT=$R1_ODD EVEN_PORT=$R1_EVEN idserver_start r1b "${P[3]}" "${FLAGS[@]}" --region 1

# 1. Leases in each region's range; tickets of each region's residues.
for k in 0 1 2 3; do
	wait_for "idserver $k holds a lease" 15 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 ${P[$k]} | awk '\$2==\"lease_state\"{print \$3}')\" = held ]"
	wait_buffered "${P[$k]}"
	w=$(stat "${P[$k]}" lease_worker)
	r=$((k / 2))
	[ "$w" -ge $((32 * r)) ] && [ "$w" -le $((32 * r + 31)) ] ||
		fail "idserver $k (region $r) leased worker $w, outside $((32 * r))..$((32 * r + 31))"
done
B=$(stat "${P[0]}" block_size)
[ "$(stat "${P[2]}" tickets_other_regions)" = 0 ] && [ "$(stat "${P[2]}" ticket_region)" = 1 ] ||
	fail "idserver 2 took tickets from another region while its own pair was up"
for k in 0 1 2 3; do
	# Until both servers of its region gave tickets (one may answer its first
	# connect late on a loaded machine); every ticket of its region's residues.
	r=$((k / 2))
	mint_until "${P[$k]}" "$T_DIR/ids-$k.txt" $r $r
	cat "$T_DIR/ids-$k.txt" >>"$IDS"
	# DECODE names the ticket's region, from any idserver of the tier, and the
	# idgen command says the same offline given the tier's shape.
	first=$(awk 'NR == 1 { print $1 }' "$T_DIR/ids-$k.txt")
	for p in "${P[0]}" "${P[2]}"; do
		q "$p" "DECODE $first\n" | has -E "^ticket block=[0-9]+ server=(odd|even) region=$r\$" ||
			fail "DECODE $first on port $p: '$(q "$p" "DECODE $first\n")', want region=$r"
	done
	[ "$("$BUILD/idgen" -b "$B" --tier-increment $M --region-bits $BITS decode "$first")" = "$first $(q "${P[0]}" "DECODE $first\n")" ] ||
		fail "idgen decode $first: '$("$BUILD/idgen" -b "$B" --tier-increment $M --region-bits $BITS decode "$first")'"
done
log "1. four idservers: leases in their regions' ranges, tickets of their own residues, DECODE names the region"

# 2. idgenctl sees each region's pair clean.
export IDGEN_DB_PASSWORD
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password")
"$BUILD/idgenctl" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" --tier_increment $M \
	--region_bits $BITS --region 0 tier check >"$T_DIR/check0.out" || fail "tier check region 0: $(cat "$T_DIR/check0.out")"
"$BUILD/idgenctl" --odd_port "$R1_ODD" --even_port "$R1_EVEN" --tier_increment $M \
	--region_bits $BITS --region 1 tier check >"$T_DIR/check1.out" || fail "tier check region 1: $(cat "$T_DIR/check1.out")"
rc=0; "$BUILD/idgenctl" --odd_port "$R1_ODD" --even_port "$R1_EVEN" --tier_increment $M \
	--region_bits $BITS --region 0 tier check >"$T_DIR/check-wrong.out" || rc=$?
[ $rc = 1 ] && grep -q "^VIOLATION odd: auto_increment_offset is 3, the odd server needs 1" "$T_DIR/check-wrong.out" ||
	fail "tier check of region 1's pair as region 0 did not object: $(cat "$T_DIR/check-wrong.out")"
log "2. tier check: each region clean; region 1's pair checked as region 0 is a violation"

# 3. Region 1's pair down: r1b falls back in its own worker range, r1a takes
# region 0's tickets, region 0 serves tickets.
for r in odd even; do kill -KILL "$(cat "$R1/$r/mariadbd.pid")"; done
wait_for "idserver 3 sees its tier down" 15 tier_down "${P[3]}"
drain_pool "${P[3]}"
read -r errs top < <(mint_ids "${P[3]}" 50 "$T_DIR/sf-3.txt")
[ "$errs" = 0 ] || fail "idserver 3: $errs errors in fallback"
[ "$top" -ge $((1 << 53)) ] || fail "idserver 3: no Snowflake ID in fallback"
first=$(awk '$1 >= 9007199254740992 { print $1; exit }' "$T_DIR/sf-3.txt")
q "${P[3]}" "DECODE $first\n" | has -E "^snowflake .* worker=(3[2-9]|[45][0-9]|6[0-3]) seq=[0-9]+ region=1\$" ||
	fail "idserver 3: Snowflake ID $first is not of region 1: $(q "${P[3]}" "DECODE $first\n")"
[ "$("$BUILD/idgen" --tier-increment $M --region-bits $BITS decode "$first")" = "$first $(q "${P[3]}" "DECODE $first\n")" ] ||
	fail "idgen decode $first: '$("$BUILD/idgen" --tier-increment $M --region-bits $BITS decode "$first")'"
# RESP's DECODE: datacenter_id is the region, worker_id the worker within it.
redis-cli -p "${P[0]}" DECODE "$first" | tr '\n' ' ' | has -E "datacenter_id 1 worker_id [0-9]+ seq [0-9]+ region 1 " ||
	fail "RESP DECODE $first: $(redis-cli -p "${P[0]}" DECODE "$first" | tr '\n' ' ')"
cat "$T_DIR/sf-3.txt" >>"$IDS"
wait_for "idserver 2 sees its own pair down" 15 bash -c "! printf 'STATS\n' | nc -N 127.0.0.1 ${P[2]} | grep -qE '^STAT (odd|even)_state up'"
mint_until "${P[2]}" "$T_DIR/other-2.txt" 0 1
[ "$(stat "${P[2]}" mode)" = ticket ] && [ "$(stat "${P[2]}" ticket_region)" = 0 ] &&
	[ "$(stat "${P[2]}" tickets_other_regions)" -gt 0 ] || fail "idserver 2: STATS do not show region 0's tickets"
grep -q "taking tickets from region 0's .* server: no server of this region's pair (region 1) is up" "$T_DIR/r1a.log" ||
	fail "idserver 2 did not log the switch to region 0"
grep -qE '^mark (- )?odd_r0 [1-9]' "$T_DIR/r1a.state" || fail "idserver 2's state file has no mark of region 0's odd server"
first=$(awk 'END { print $1 }' "$T_DIR/other-2.txt")
q "${P[2]}" "DECODE $first\n" | has -E "^ticket block=[0-9]+ server=(odd|even) region=0\$" ||
	fail "DECODE $first: '$(q "${P[2]}" "DECODE $first\n")', want region=0"
cat "$T_DIR/other-2.txt" >>"$IDS"
read -r errs top < <(mint_ids "${P[0]}" 200 "$T_DIR/after-0.txt")
[ "$errs" = 0 ] && [ "$top" -lt $((1 << 53)) ] || fail "region 0 stopped serving tickets (errors $errs, top $top)"
[ "$(stat "${P[0]}" mode)" = ticket ] || fail "region 0 left ticket mode"
cat "$T_DIR/after-0.txt" >>"$IDS"
log "3. region 1's pair down: one idserver of region 1 takes region 0's tickets, the other mints in workers 32..63, region 0 still serves tickets"

# 4. Region 1's pair back: r1a's tickets come from it again.
for r in odd even; do "$ROOT/scripts/dbpair.sh" start "$R1" "$r" >/dev/null; done
wait_for "idserver 2 uses region 1's pair again" 20 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 ${P[2]} | awk '\$2==\"odd_state\"{print \$3}')\" = up ]"
mint_until "${P[2]}" "$T_DIR/back-2.txt" 1 0
[ "$(stat "${P[2]}" ticket_region)" = 1 ] || fail "idserver 2: ticket_region is not 1 again"
grep -q "tickets come from this region's pair again (region 1)" "$T_DIR/r1a.log" ||
	fail "idserver 2 did not log the return to region 1"
cat "$T_DIR/back-2.txt" >>"$IDS"
log "4. region 1's pair back: idserver 2 takes its tickets from it again"

# 4b. At start, its own pair slower to answer than region 0's (delayproxy.py,
# 30 ms each way): an idserver of region 1 waits for its own pair's first
# answer and takes no ticket of region 0's on the way.
X_ODD=$((ODD_PORT + 20)) X_EVEN=$((EVEN_PORT + 20))
for x in "$X_ODD $R1_ODD" "$X_EVEN $R1_EVEN"; do
	# shellcheck disable=SC2086
	python3 "$ROOT/tests/integration/delayproxy.py" $x 30 >>"$T_DIR/proxy.log" 2>&1 &
	PIDS+=($!)
done
wait_for "the proxies listen" 10 bash -c "nc -z 127.0.0.1 $X_ODD && nc -z 127.0.0.1 $X_EVEN"
ODD_PORT=$X_ODD EVEN_PORT=$X_EVEN idserver_start r1c $((SVC_PORT + 5)) "${FLAGS[@]}" --region 1 \
	--other_regions "0=127.0.0.1:$ODD_PORT,127.0.0.1:$EVEN_PORT"
wait_for "idserver r1c sees its own pair up" 20 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $((SVC_PORT + 5)) | awk '\$2==\"odd_state\"{print \$3}')\" = up ]"
# Its first ticket crosses the proxy (refill_wait_ms is 50): IDs once one is banked.
wait_for "idserver r1c holds IDs" 10 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $((SVC_PORT + 5)) | awk '\$2==\"ids_buffered\"{print \$3}')\" -gt 0 ]"
read -r errs top < <(mint_ids $((SVC_PORT + 5)) 20 "$T_DIR/slow-own.txt")
[ "$errs" = 0 ] && [ "$top" -lt $((1 << 53)) ] || fail "idserver r1c: errors $errs, top $top: not tickets"
first=$(awk 'NR == 1 { print $1 }' "$T_DIR/slow-own.txt")
q $((SVC_PORT + 5)) "DECODE $first\n" | has -E "^ticket block=[0-9]+ server=(odd|even) region=1\$" ||
	fail "idserver r1c's first ID $first: '$(q $((SVC_PORT + 5)) "DECODE $first\n")', want region=1"
[ "$(stat $((SVC_PORT + 5)) tickets_other_regions)" = 0 ] ||
	fail "idserver r1c took $(stat $((SVC_PORT + 5)) tickets_other_regions) tickets of region 0 before its own pair's first answer"
cat "$T_DIR/slow-own.txt" >>"$IDS"
log "4b. its own pair slower than region 0's at start: no ticket of region 0 taken"

# 4. Region 1's idserver pointed at region 0's pair: refused, it names the offset.
rc=0
IDGEN_DB_PASSWORD=$IDGEN_DB_PASSWORD timeout 20 "$IDSERVER" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
	--listen_port $((SVC_PORT + 4)) --state_file "$T_DIR/wrong.state" "${FLAGS[@]}" --region 1 \
	>"$T_DIR/wrong.log" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "REFUSED: auto_increment_offset is 1, the odd server needs 3" "$T_DIR/wrong.log" ||
	fail "region 1's idserver on region 0's pair: rc $rc, $(tail -n 3 "$T_DIR/wrong.log")"
# other_regions naming region 0's pair as region 1's: those servers are checked
# as region 1's, and refused.
rc=0
IDGEN_DB_PASSWORD=$IDGEN_DB_PASSWORD timeout 20 "$IDSERVER" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
	--listen_port $((SVC_PORT + 4)) --state_file "$T_DIR/wrong2.state" "${FLAGS[@]}" --region 0 \
	--other_regions "1=127.0.0.1:$ODD_PORT,127.0.0.1:$EVEN_PORT" >"$T_DIR/wrong2.log" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "refusing to start: odd_r1 ticket server: auto_increment_offset is 1, the odd_r1 server needs 3" "$T_DIR/wrong2.log" ||
	fail "other_regions naming region 0's pair as region 1's: rc $rc, $(tail -n 3 "$T_DIR/wrong2.log")"
log "5. an idserver of region 1 on region 0's pair is refused, and other regions' servers are checked as theirs"

# 6. One B for every region (issue 30, finding 4). Region 1's live pair moved
# to B = 2^19: its idservers refuse both servers at the next recheck (every
# recheck_ms, 5 s), naming the rule.
RULE="but a tier of regions has region_bits 5 and B = 1048576 in every region"
for r in odd even; do
	"$ROOT/scripts/dbpair.sh" sql "$R1" "$r" "UPDATE idgen.idgen_meta SET block_size = 524288"
done
for r in odd even; do
	wait_for "r1b refuses region 1's $r server at a recheck" 15 \
		grep -q "$r ticket server.*idgen_meta has region_bits 5 and block_size 524288, $RULE" "$T_DIR/r1b.log"
done
# A fresh pair of region 1 set up with B = 2^19 and an idserver of region 1
# with other_regions empty: nothing it reads names region 0, so only the
# rule keeps their tickets apart. Region 0's even ticket 2 (IDs 2..3 x 2^20)
# and this pair's even ticket 4 at 2^19 start at the same ID.
R2=$T_DIR/db2 R2_ODD=$((ODD_PORT + 30)) R2_EVEN=$((EVEN_PORT + 30))
on_cleanup() {
	local d
	for d in "$R1" "$R2"; do [ -d "$d" ] && "$ROOT/scripts/dbpair.sh" down "$d" >/dev/null 2>&1; done
}
mkdir -p "$R2" && cp "$T_DIR/db/db_password" "$R2/db_password"
DBPAIR_INCREMENT=$M DBPAIR_REGION=1 DBPAIR_REGION_BITS=$BITS \
	"$ROOT/scripts/dbpair.sh" up "$R2" "$R2_ODD" "$R2_EVEN" >/dev/null
for r in odd even; do
	"$ROOT/scripts/dbpair.sh" sql "$R2" "$r" "UPDATE idgen.idgen_meta SET block_size = 524288"
done
X=$((SVC_PORT + 6))
IDGEN_DB_PASSWORD=$IDGEN_DB_PASSWORD "$IDSERVER" --odd_port "$R2_ODD" --even_port "$R2_EVEN" \
	--listen_port $X --state_file "$T_DIR/r1x.state" "${FLAGS[@]}" --region 1 >"$T_DIR/r1x.log" 2>&1 &
XPID=$!
PIDS+=($XPID)
x_settled() { ! alive "$XPID" || [ "$(q $X 'PING\n' 2>/dev/null)" = PONG ]; }
wait_for "r1x exits or answers" 20 x_settled
if alive "$XPID"; then
	# Running (a build that serves from whatever passes its checks): both
	# servers judged, and whatever it serves is no ticket ID.
	wait_for "r1x judged both its servers" 15 bash -c "printf 'STATS\n' | nc -N 127.0.0.1 $X | grep -qE '^STAT odd_state (up|refused)' && printf 'STATS\n' | nc -N 127.0.0.1 $X | grep -qE '^STAT even_state (up|refused)'"
	read -r errs top < <(mint_ids $X 50 "$T_DIR/r1x.txt")
	cat "$T_DIR/r1x.txt" >>"$IDS"
	tickets=$(awk '$1 < 9007199254740992 { n += $2 } END { print n + 0 }' "$T_DIR/r1x.txt")
	dups=ok; check_unique "$IDS" >/dev/null || dups="DUPLICATE IDs with region 0's"
	[ "$tickets" = 0 ] || fail "r1x served $tickets ticket IDs at B = 2^19 ($dups)"
	kill -TERM "$XPID"
else
	rc=0; wait "$XPID" || rc=$?
	[ $rc = 1 ] || fail "r1x exited $rc at start, want 1: $(tail -n 3 "$T_DIR/r1x.log")"
fi
for r in odd even; do
	grep -q "$r ticket server: idgen_meta has region_bits 5 and block_size 524288, $RULE" "$T_DIR/r1x.log" ||
		fail "r1x did not refuse its $r server naming the rule: $(tail -n 3 "$T_DIR/r1x.log")"
done
# tier check from region 0 with other_regions listing that pair: a violation per server.
rc=0; "$BUILD/idgenctl" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" --tier_increment $M \
	--region_bits $BITS --region 0 --other_regions "1=127.0.0.1:$R2_ODD,127.0.0.1:$R2_EVEN" \
	tier check >"$T_DIR/check-b.out" || rc=$?
[ $rc = 1 ] && [ "$(grep -c "^VIOLATION \(odd\|even\)_r1: idgen_meta has region_bits 5 and block_size 524288, $RULE" "$T_DIR/check-b.out")" = 2 ] ||
	fail "tier check with region 1's B = 2^19 pair listed: rc $rc, $(cat "$T_DIR/check-b.out")"
log "6. one B for every region: region 1's pair moved to B = 2^19 refused at a recheck; a region 1 pair set up with B = 2^19 refused at start, no ticket from it; tier check names both its servers"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the regions"
log "7. $n IDs in $(wc -l <"$IDS") ranges from both regions, tickets and Snowflake IDs: no duplicate"
log ok
