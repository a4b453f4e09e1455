#!/usr/bin/env bash
# A namespace dropped and created again with another B_N while an idserver still
# holds its old view (its next namespace check up to recheck_ms away; here long,
# so the window is certain), found by a review (docs/design.md 13.6):
#   1. bn created with B=16; idserver a serves it and takes a few blocks;
#   2. idgenctl ns drop bn --force; idgenctl ns create bn --block-size 1;
#   3. the odd server down a moment; a (still B=16) asks the even server for
#      tickets: each reads the catalogue row under a shared lock, finds it created
#      again, and is not used (nor its marks raised); a falls back;
#   4. a fresh idserver b serves bn at B=1 and takes IDs past a's largest ticket
#      ID: none repeats one of a's. (Before the catalogue row was read, a's stale
#      tickets at B=16 were banked and b's B=1 tickets walked through them.)
. "$(dirname "$0")/lib.sh"

pair_up
ctl_env
OUT=$T_DIR/ids
mkdir -p "$OUT"
A_PORT=$SVC_PORT B_PORT=$((SVC_PORT + 10))
# blocks PORT N FILE: N x BLOCK 1 of bn (B=1 allows only 1), as "first count".
take_ids() {
	local port=$1 n=$2 cmd=$3 file=$4
	for _ in $(seq "$n"); do echo "$cmd bn"; done | timeout 60 nc -N 127.0.0.1 "$port" |
		python3 -c '
import sys
out = open(sys.argv[1], "a")
errs = 0
for line in sys.stdin:
    w = line.split()
    if not w or w[0] == "ERR":
        errs += 1
        continue
    for x in w:
        out.write("%d 1\n" % int(x))
print("errors", errs)
' "$file"
}

ctl ns create bn --block-size 16
# partner_wait_ms short: a namespace is served around a silent partner only
# after it (13.6, as the default sequence), and step 3 needs a on even alone.
idserver_start a "$A_PORT" --recheck_ms "${A_RECHECK_MS:-60000}" --refill_wait_ms 200 \
	--partner_wait_ms 300
wait_for "bn served by a" 10 ns_served "$A_PORT" bn
r=$(take_ids "$A_PORT" 5 "IDS 16" "$OUT/a.ids")
log "1. a took IDs of bn at B=16 ($r)"

ctl ns drop bn --force
ctl ns create bn --block-size 1
# The odd server goes down for a moment (an ordinary outage): a draws from even only.
kill -KILL "$(db_pid odd)"
odd_down() { [ "$(stat "$A_PORT" odd_state)" != up ]; }
wait_for "a sees odd down" 15 odd_down
sleep 1	# past a's partner_wait_ms: odd silent, bn is asked of even alone
r=$(take_ids "$A_PORT" 20 "IDS 16" "$OUT/a.ids")
db_start odd
log "3. a (stale view, B=16) took more IDs after drop+create ($r); a's max: $(sort -n "$OUT/a.ids" | tail -n 1)"

idserver_start b "$B_PORT" --recheck_ms 300 --refill_wait_ms 200
wait_for "bn served by b" 10 ns_served "$B_PORT" bn
# a's ticket IDs (its refused stale tickets sent it to the fallback, above 2^53).
amax=$(awk '$1 < 9007199254740992' "$OUT/a.ids" | sort -n | tail -n 1 | awk '{print $1}')
need=$((amax / 50 + 20))
r=$(take_ids "$B_PORT" "$need" "IDS 56" "$OUT/b.ids")
log "4. b (fresh, B=1) took IDs ($r); b's max: $(sort -n "$OUT/b.ids" | tail -n 1)"
c=$(check_unique "$OUT/a.ids" "$OUT/b.ids") || fail "duplicate IDs of bn across a (its old B=16 view) and b (B=1)"
grep -q "namespace bn REFUSED on the even ticket server: dropped or created again" "$T_DIR/a.log" ||
	fail "a's stale tickets were not refused"
log "PASS: no duplicate over $c IDs; a's stale tickets refused"
