#!/usr/bin/env bash
# idgenctl ns raise while two idservers take IDs of the namespace (docs/design.md
# 13.3): their ticket transactions lock the namespace's marks rows that the
# raise's UPDATEs raise (own row, then the copies); idgenctl raises one row a
# statement, so no deadlock cycle, and sends again a statement outside a
# transaction that still meets one, instead of stopping half-way. Checked:
#   1. six raises, each just above what was issued by then, all exit 0 (before,
#      under this load, each one stopped on "Deadlock found ... try restarting
#      transaction", exit 2);
#   2. after the last raise, both idservers' new IDs of the namespace are above
#      it once they have let go of their buffers (recheck_ms);
#   3. no ID twice across both idservers.
. "$(dirname "$0")/lib.sh"

pair_up
ctl_env
OUT=$T_DIR/ids
mkdir -p "$OUT"
A=$SVC_PORT B=$((SVC_PORT + 1))
# take PORT N REQUEST FILE: N requests, the IDs appended to FILE; prints the ERR count.
take() { for _ in $(seq "$2"); do echo "$3"; done | timeout 60 nc -N 127.0.0.1 "$1" | collect "$4"; }
ctl ns create n --block-size 64
idserver_start a "$A" --recheck_ms 300 --refill_wait_ms 200
idserver_start b "$B" --recheck_ms 300 --refill_wait_ms 200
wait_for "a serves n" 10 ns_served "$A" n
wait_for "b serves n" 10 ns_served "$B" n
load() {	# 40 rounds of 200 x IDS 50 n, bounded
	local k
	for k in $(seq 40); do take "$1" 200 'IDS 50 n' "$OUT/$2" >>"$T_DIR/$2.errs"; done
}
load "$A" a & LA=$!
load "$B" b & LB=$!
above=0
for k in 1 2 3 4 5 6; do
	sleep 1
	top=$(cat "$OUT"/a "$OUT"/b 2>/dev/null |
		awk '$1 < 9007199254740992 { e = $1 + $2 - 1; if (e > m) m = e } END { print m + 0 }')
	above=$((top + 40000))
	rc=0
	"${CTL[@]}" ns raise n --above "$above" >"$T_DIR/raise.$k" 2>&1 || rc=$?
	[ $rc = 0 ] || fail "ns raise $k (--above $above) under load: exit $rc: $(cat "$T_DIR/raise.$k")"
done
log "1. six ns raises under two idservers' load: all exit 0 (last --above $above)"
wait "$LA" "$LB"
sleep 1	# recheck_ms: both let go of buffered IDs at or below the raise
for p in "$A" "$B"; do
	first=$(q "$p" "IDS 1 n\n" | awk 'NR == 1 { print $1 }')
	[ -n "$first" ] && [ "$first" -gt "$above" ] ||
		fail "after ns raise --above $above, the idserver on $p issued $first"
done
log "2. after the last raise both idservers issue above $above"
n=$(check_unique "$OUT/a" "$OUT/b") || fail "DUPLICATE IDs of n"
log "3. $n IDs of n, no duplicate; ERR replies: a $(awk '{ s += $1 } END { print s + 0 }' "$T_DIR/a.errs"), b $(awk '{ s += $1 } END { print s + 0 }' "$T_DIR/b.errs")"
log ok
