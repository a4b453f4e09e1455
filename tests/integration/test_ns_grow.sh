#!/usr/bin/env bash
# Growth with namespaces (docs/design.md section 13.8; issue 33, step 5): a pair
# serving the default sequence and two namespaces (big, B 1,024; small, B 16)
# under load from a running idserver is moved from M = 2 to M = 3 (a change
# where M does not divide M': each server's new residue holds tickets the other
# drew under M), then grows a third server at offset 3 (whose residue both
# drew under M). Every ID collected per sequence:
#   1. raise-increment refused while a namespace is 'creating' (a killed ns create);
#   2. raise-increment killed (SIGKILL) after its first open and run again: one
#      floor per namespace printed, the even server's (opened by the rerun)
#      tickets_N counter above it and its idgen_ns_marks rows at it; the
#      idserver follows, and every
#      namespace ticket above its floor has a residue 1 or 2 mod 3;
#   3. add-server 3 killed after making the first namespace and run again: o3
#      holds both namespaces ready, its counters above every mark, the copy
#      rows of its mark on the pair, and a row of a name the pair does not hold
#      (a killed run's, planted) 'dropped'; ns drop, create and raise refuse
#      while o3 is not in the config, a create with it made on the three; a
#      second idserver on the three takes namespace tickets of o3 (residue 0
#      mod 3) while the first goes on;
#   4. no ID twice within any sequence.
. "$(dirname "$0")/lib.sh"

M=3 P3=$((ODD_PORT + 40))
pair_up
for r in odd even; do db_sql "$r" "UPDATE idgen.idgen_meta SET block_size = 65536"; done
ctl_env
FLAGS=(--reprobe_max_ms 300 --refill_wait_ms 50 --recheck_ms 1000)
A=$SVC_PORT B=$((SVC_PORT + 1))
STOP=$T_DIR/stop
LOADS=()
# A failing test stops its loads too: they are bounded, but would outlive it.
on_cleanup() {
	touch "$STOP"
	for p in "${LOADS[@]}"; do kill "$p" 2>/dev/null; done
}
declare -A BS=([big]=1024 [small]=16) REQ=([default]='IDS 1000' [big]='IDS 1000 big' [small]='IDS 200 small')

# load PORT NAME SEQ: 20 requests of SEQ a batch from PORT into $T_DIR/NAME.SEQ
# until $STOP exists (at most 300 batches); errors counted in NAME.SEQ.err.
load() {
	local k errs
	for k in $(seq 1 300); do
		[ -e "$STOP" ] && return 0
		read -r errs _ < <(mint_ids "$1" 20 "$T_DIR/$2.$3" "${REQ[$3]}")
		echo "$errs" >>"$T_DIR/$2.$3.err"
	done
}
loads() {	# PORT NAME: one load per sequence; their PIDs in LOADS
	for seq in default big small; do load "$1" "$2" $seq & LOADS+=($!); done
}
# tickets FILE B FLOOR: "count residues" of the tickets above FLOOR in FILE (IDs below 2^53);
# complete lines only: a load still running may be mid-line in FILE.
tickets() {
	python3 - "$1" "$2" "$3" "$M" <<'PY'
import sys
path, b, floor, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
seen, n = set(), 0
for line in open(path):
    if not line.endswith("\n"):
        break  # a line still being written: its load runs on (read mid-write)
    first, count = map(int, line.split())
    if first + count > 1 << 53:
        continue
    for t in range(first // b, (first + count - 1) // b + 1):
        if t > floor:
            seen.add(t % m)
            n += 1
print(n, "".join(str(r) for r in sorted(seen)) or "-")
PY
}
# has_tickets FILE B FLOOR RESIDUE: true once FILE holds a ticket above FLOOR of
# RESIDUE mod M ('.': any); checked at most ~3 times a second.
has_tickets() {
	local n res
	read -r n res < <(tickets "$1" "$2" "$3" 2>/dev/null)
	[ "${n:-0}" -gt 0 ] && [[ $res == *$4* || $4 == . ]] || { sleep 0.3; return 1; }
}
counter() {	# ROLE NS
	db_sql "$1" "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'idgen' AND TABLE_NAME = 'tickets_$2'"
}

ctl ns create big --block-size 1024
ctl ns create small --block-size 16
idserver_start a "$A" "${FLAGS[@]}"
for ns in big small; do wait_for "a serves $ns" 15 ns_served "$A" $ns; wait_ns_buffered "$A" $ns; done
wait_buffered "$A"
loads "$A" a
sleep 2

# 1. A namespace half made refuses the change.
rc=0; { IDGENCTL_KILL_AT=rows "${CTL[@]}" ns create pending --block-size 8 >/dev/null; } 2>/dev/null || rc=$?
[ $rc = 137 ] || fail "ns create killed after its rows: exit $rc, want 137 (SIGKILL)"
expect_ctl 1 "tier raise-increment refuses while namespace pending is being created" tier raise-increment $M
ctl ns drop pending --force
log "1. raise-increment refused while namespace pending is 'creating'; dropped"

# 2. The change, killed after its first open and run again.
rc=0; { IDGENCTL_KILL_AT=open "${CTL[@]}" tier raise-increment $M >/dev/null; } 2>/dev/null || rc=$?
[ $rc = 137 ] || fail "raise-increment killed at open: exit $rc, want 137 (SIGKILL)"
expect_ctl 0 "^tier raise-increment: generation 1, M = $M \(was 2\)" tier raise-increment $M
declare -A FLOOR
for ns in big small; do
	FLOOR[$ns]=$(sed -n "s/^  namespace $ns: floor \([0-9]*\) (B=${BS[$ns]};.*/\1/p" "$T_DIR/ctl.out")
	[ -n "${FLOOR[$ns]}" ] || fail "no floor of $ns printed: $(cat "$T_DIR/ctl.out")"
	# The rerun's floor; odd, opened by the killed run, keeps that run's (lower) one.
	for r in even; do
		c=$(counter $r $ns)
		[ "$c" -gt "${FLOOR[$ns]}" ] || fail "the $r server's tickets_$ns counter $c is not above its floor ${FLOOR[$ns]}"
		low=$(db_sql $r "SELECT MIN((high_water + 1) * block_size) FROM idgen.idgen_ns_marks WHERE ns = '$ns'")
		[ "$low" -ge $(((FLOOR[$ns] + 1) * BS[$ns])) ] || fail "the $r server's marks of $ns end at $low, below the floor"
	done
done
wait_for "a in generation 1" 20 bash -c "[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 $A | awk '\$2==\"tier_generation\"{print \$3}')\" = 1 ]"
for ns in big small; do
	wait_for "a's tickets of $ns above its floor" 30 has_tickets "$T_DIR/a.$ns" "${BS[$ns]}" "${FLOOR[$ns]}" .
done
for ns in big small; do
	read -r n res < <(tickets "$T_DIR/a.$ns" "${BS[$ns]}" "${FLOOR[$ns]}")
	[ "$res" = 1 ] || [ "$res" = 2 ] || [ "$res" = 12 ] || fail "a's tickets of $ns above its floor have residues $res mod $M"
done
log "2. raise-increment $M (killed after an open, resumed): floors big ${FLOOR[big]}, small ${FLOOR[small]}; a follows, $n ticket(s) of small above its floor, residues 1-2 only"

# 3. A third server, killed after making its first namespace and run again.
export DBPAIR_INCREMENT=$M
"$ROOT/scripts/dbpair.sh" more "$T_DIR/db" 3 "$P3" >/dev/null
CTL+=(--tier_increment $M)
# The end of every mark of each namespace on the pair before the addition (they only rise).
declare -A TOP
for ns in big small; do
	TOP[$ns]=0
	for r in odd even; do
		e=$(db_sql $r "SELECT MAX((high_water + 1) * block_size) FROM idgen.idgen_ns_marks WHERE ns = '$ns'")
		[ "$e" -gt "${TOP[$ns]}" ] && TOP[$ns]=$e
	done
done
rc=0; { IDGENCTL_KILL_AT=new-ns "${CTL[@]}" tier add-server 3 "127.0.0.1:$P3" >/dev/null; } 2>/dev/null || rc=$?
[ $rc = 137 ] || fail "add-server killed at new-ns: exit $rc, want 137 (SIGKILL)"
# A killed run's row of a name the pair dropped since (idsim seed 138): taken off o3.
db_sql o3 "INSERT INTO idgen.idgen_namespaces (name, block_size, state) VALUES ('gone', 8, 'ready')"
expect_ctl 0 "^tier add-server: 2 namespaces made on o3" tier add-server 3 "127.0.0.1:$P3"
grep -q "^tier add-server: namespace gone taken off o3" "$T_DIR/ctl.out" || fail "no line of gone taken off o3: $(cat "$T_DIR/ctl.out")"
[ "$(db_sql o3 "SELECT state FROM idgen.idgen_namespaces WHERE name = 'gone'")" = dropped ] ||
	fail "o3 still serves gone, which the pair does not hold"
# o3 not in the config yet: ns refuses (a drop or create would miss it; idsim seed 7002).
expect_ctl 1 "idgen_marks names server o3, which the config does not list" ns drop small --force
for ns in big small; do
	[ "$(db_sql o3 "SELECT CONCAT(state, ' ', block_size) FROM idgen.idgen_namespaces WHERE name = '$ns'")" = "ready ${BS[$ns]}" ] ||
		fail "o3's catalogue row of $ns"
	for r in odd even; do
		[ "$(db_sql $r "SELECT COUNT(*) FROM idgen.idgen_ns_marks WHERE ns = '$ns' AND role = 'o3'")" = 1 ] ||
			fail "no copy row of o3's mark of $ns on the $r server"
	done
	c=$(counter o3 $ns)
	[ $((c * BS[$ns])) -ge "${TOP[$ns]}" ] || fail "o3's tickets_$ns counter $c: its block is below the marks' end ${TOP[$ns]} before the addition"
done
MORE="3=127.0.0.1:$P3"
# Create and raise refuse as drop does (idsim seed 13198, 13.3); with
# more_servers a create reaches the three.
expect_ctl 1 "idgen_marks names server o3, which the config does not list.*add it to more_servers" ns create late --block-size 8
expect_ctl 1 "idgen_marks names server o3" ns raise big --above 1000000000
[ "$(db_sql odd "SELECT state FROM idgen.idgen_namespaces WHERE name = 'small'")" = ready ] ||
	fail "a refused ns drop changed small's row on the odd server"
expect_ctl 0 "^ns create: late ready on 3 servers" --more_servers "$MORE" ns create late --block-size 8
[ "$(db_sql o3 "SELECT state FROM idgen.idgen_namespaces WHERE name = 'late'")" = ready ] ||
	fail "ns create with more_servers: late not ready on o3"
idserver_start b "$B" "${FLAGS[@]}" --tier_increment $M --more_servers "$MORE"
for ns in big small; do wait_for "b serves $ns" 15 ns_served "$B" $ns; wait_ns_buffered "$B" $ns; done
wait_buffered "$B"
loads "$B" b
for ns in big small; do
	wait_for "b's tickets of $ns from o3" 30 has_tickets "$T_DIR/b.$ns" "${BS[$ns]}" "${FLOOR[$ns]}" 0
done
sleep 1
touch "$STOP"
for p in "${LOADS[@]}"; do wait "$p" || true; done
read -r n res < <(tickets "$T_DIR/b.small" 16 "${FLOOR[small]}")
[[ $res == *0* ]] || fail "b took no ticket of small from o3: residues $res"
expect_ctl 0 "^tier check: ok \(3 servers" --more_servers "$MORE" tier check
log "3. o3 added (killed after its first namespace, resumed): both namespaces on it above their marks; ns drop/create/raise refused without o3 in the config, a create made on 3 servers with it; b's tickets of small above the floor: $n, residues $res"

# 4. No ID twice within a sequence.
errs=$(cat "$T_DIR"/*.err | awk '{ n += $1 } END { print n + 0 }')
for seq in default big small; do
	n=$(check_unique "$T_DIR/a.$seq" "$T_DIR/b.$seq") || fail "DUPLICATE IDs of $seq"
	log "4. $seq: $n IDs, no duplicate"
done
sealed=$(grep -c "namespace ticket: a change of the tier's increment sealed" "$T_DIR/a.log" || true)
log "($errs requests answered ERR across the change; $sealed namespace ticket(s) drawn on a sealed or moved server not used by a)"
log ok
