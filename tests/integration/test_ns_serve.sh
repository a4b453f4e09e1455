#!/usr/bin/env bash
# Namespaces served (docs/design.md section 13.5), every ID collected per
# namespace and checked for duplicates across two idservers, both protocols of
# the text port (text, RESP), a SIGKILL and restart:
#   1. namespaces created before and while two idservers serve (NS_COUNT in all,
#      100 by default) are picked up without a restart (recheck_ms);
#   2. text and RESP clients take ID, IDS and BLOCK of every namespace from both,
#      libidgen (the idgen command) and HTTP (?ns=) after the restart;
#   3. SIGKILL of one idserver and its restart on its state file, more IDs;
#   4. the 'refuse' namespace's IDs are all tickets (below 2^53), the 'snowflake'
#      one falls back above 2^53 with both servers down, the refuse one says
#      UNAVAILABLE; an unknown name is ERR RANGE;
#   5. one namespace's table truncated on the odd server: that namespace is refused
#      there with the repair line, the others (and it, from the even server) go on
#      without a duplicate;
#   5b. one namespace "restored from an old dump" on the even server (counter and own
#      mark row back): refused there by both idservers and by a fresh one (copies);
. "$(dirname "$0")/lib.sh"

NS_COUNT=${NS_COUNT:-100}
ROUNDS=${NS_ROUNDS:-3}
pair_up
ctl_env
OUT=$T_DIR/ids
mkdir -p "$OUT"
A_PORT=$SVC_PORT B_PORT=$((SVC_PORT + 10)) HP=$((SVC_PORT + 1))
FLAGS=(--recheck_ms 300 --refill_wait_ms 200)

# take PORT PROTO NS...: ROUNDS rounds of ID, IDS 7, BLOCK 3 of each namespace.
take() {
	local port=$1 proto=$2 r
	shift 2
	r=$(/usr/bin/python3 "$ROOT/tests/integration/ns_take.py" "$port" "$proto" "$OUT" \
		"$ROUNDS" "$@") || fail "ns_take $port $proto: $r"
	echo "$r"
}
# served PORT NS: the namespace answers ID (every idserver reads it within recheck_ms).

# 1. Three namespaces before the idservers start, the rest while they serve.
ctl ns create orders --block-size 10
ctl ns create dense --block-size 4 --fallback refuse
ctl ns create wide --block-size 10
idserver_start a "$A_PORT" "${FLAGS[@]}"
idserver_start b "$B_PORT" "${FLAGS[@]}" --http_port "$HP"
NAMES=(orders dense wide)
for k in $(seq 4 "$NS_COUNT"); do
	NAMES+=("t$k")
	ctl ns create "t$k" --block-size $((k * 7))
done
for n in orders dense "t$NS_COUNT"; do
	wait_for "$n served by a" 10 ns_served "$A_PORT" "$n"
	wait_for "$n served by b" 10 ns_served "$B_PORT" "$n"
done
[ "$(q "$A_PORT" 'ID nosuch\n')" = "ERR RANGE unknown namespace (idgenctl ns list)" ] ||
	fail "an unknown namespace: $(q "$A_PORT" 'ID nosuch\n')"
log "1. $NS_COUNT namespaces, $((NS_COUNT - 3)) created while serving, served by both; an unknown name is ERR RANGE"

# 2. Both protocols, both idservers, every namespace.
r1=$(take "$A_PORT" text "${NAMES[@]}")
r2=$(take "$B_PORT" resp "${NAMES[@]}")
log "2. text from a: $r1; RESP from b: $r2"
for r in "$r1" "$r2"; do [ "$(echo "$r" | awk '{print $4}')" = 0 ] || fail "errors: $r"; done
# b's view: every namespace served, counted per namespace in /metrics.
[ "$(stat "$B_PORT" namespaces)" = "$NS_COUNT" ] || fail "b serves $(stat "$B_PORT" namespaces) namespaces"
curl -sf "http://127.0.0.1:$HP/metrics" >"$T_DIR/metrics.txt" || fail "no /metrics"
lint=$(promtool check metrics <"$T_DIR/metrics.txt" 2>&1) && [ -z "$lint" ] || fail "promtool: $lint"
n=$(grep -c '^idgen_namespace_ids_total{ns="[a-z0-9]*",source="ticket"} [1-9]' "$T_DIR/metrics.txt")
[ "$n" = "$NS_COUNT" ] || fail "/metrics: $n namespaces with ticket IDs, want $NS_COUNT"

# What the even server's wide looks like now, to "restore" it to in 5b.
WIDE_C0=$(db_sql even "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'idgen' AND TABLE_NAME = 'tickets_wide'")
WIDE_M0=$(db_sql even "SELECT high_water FROM idgen.idgen_ns_marks WHERE ns = 'wide' AND role = 'even'")

# 3. SIGKILL a, restart it on its state file, take again from both.
kill -9 "$a_PID"
wait "$a_PID" 2>/dev/null || true
idserver_start a "$A_PORT" "${FLAGS[@]}"
wait_for "orders served by a again" 10 ns_served "$A_PORT" orders
wait_for "t$NS_COUNT served by a again" 10 ns_served "$A_PORT" "t$NS_COUNT"
r1=$(take "$A_PORT" resp "${NAMES[@]}")
r2=$(take "$B_PORT" text "${NAMES[@]}")
log "3. after SIGKILL and restart: RESP from a: $r1; text from b: $r2"
# libidgen (the idgen command, both idservers listed) and HTTP (b), every namespace.
for n in "${NAMES[@]}"; do
	"$BUILD/idgen" --server "127.0.0.1:$A_PORT,127.0.0.1:$B_PORT" --ns "$n" ids 3 |
		awk '{ print $1, 1 }' >>"$OUT/$n.ids" || fail "idgen --ns $n"
done
python3 - "$HP" "$OUT" "${NAMES[@]}" <<'PY' || fail "HTTP ?ns="
import json, sys, urllib.request
port, out = sys.argv[1], sys.argv[2]
for n in sys.argv[3:]:
    with urllib.request.urlopen("http://127.0.0.1:%s/v1/ids?count=5&ns=%s" % (port, n)) as r:
        ids = [int(x) for x in json.load(r)["ids_str"]]
    assert len(ids) == 5 and ids == sorted(ids), ids
    with open("%s/%s.ids" % (out, n), "a") as f:
        f.writelines("%d 1\n" % x for x in ids)
PY
log "3. libidgen (idgen --ns: 3) and HTTP (?ns=: 5) took IDs of each namespace"

# 5. tickets_orders truncated on the odd server (its counter back to 1; the marks stay).
db_sql odd "TRUNCATE TABLE idgen.tickets_orders"
wait_for "the odd server refuses orders" 10 grep -q "namespace orders REFUSED on the odd ticket server: counter regressed.*repair" "$T_DIR/a.log"
grep -q "namespace orders REFUSED on the odd ticket server: counter regressed.*repair" "$T_DIR/b.log" ||
	wait_for "b refuses orders on odd" 10 grep -q "namespace orders REFUSED on the odd" "$T_DIR/b.log"
r1=$(take "$A_PORT" text "${NAMES[@]}")
r2=$(take "$B_PORT" resp "${NAMES[@]}")
# Enough of orders that the odd server's old tickets would be drawn again.
r3=$(ROUNDS=20 take "$A_PORT" text orders)
r4=$(ROUNDS=20 take "$B_PORT" text orders)
log "5. orders truncated on odd: refused there with the repair line; text from a: $r1; RESP from b: $r2"
for r in "$r1" "$r2" "$r3" "$r4"; do [ "$(echo "$r" | awk '{print $4}')" = 0 ] || fail "errors: $r"; done
grep -q "REFUSED on the odd ticket server" <(grep -v "namespace orders" "$T_DIR/a.log") &&
	fail "another namespace or the default refused: $(grep REFUSED "$T_DIR/a.log" | grep -v 'namespace orders' | head -n 2)"

# 5b. The even server's tickets_wide and its own mark row of wide "restored from
#    an old dump" (the counter and the row back to what they were before 3.): the
#    server's own row no longer catches it; the odd server's copy and the state
#    files do, for a and b and for a fresh idserver c with no state file.
db_restored even "TRUNCATE TABLE idgen.tickets_wide; ALTER TABLE idgen.tickets_wide AUTO_INCREMENT = $WIDE_C0; UPDATE idgen.idgen_ns_marks SET high_water = $WIDE_M0 WHERE ns = 'wide' AND role = 'even'"
C_PORT=$((SVC_PORT + 20))
idserver_start c "$C_PORT" "${FLAGS[@]}" --ns_idle_ms 1000
wait_for "wide served by c" 10 ns_served "$C_PORT" wide
for p in "$A_PORT" "$B_PORT" "$C_PORT"; do
	r=$(ROUNDS=20 take "$p" text wide)
	[ "$(echo "$r" | awk '{print $4}')" = 0 ] || fail "wide from $p after the restore: $r"
done
for f in a b c; do
	grep -q "namespace wide REFUSED on the even ticket server" "$T_DIR/$f.log" ||
		fail "$f did not refuse wide on the restored even server"
done
# c's wide goes idle: its buffered IDs are let go (ns_idle_ms), a gap.
released() { [ "$(stat "$C_PORT" namespace_ids_released)" -gt 0 ]; }
wait_for "c lets go of idle wide's IDs" 10 released
log "5b. even's tickets_wide and its mark restored from before: refused there by a, b and a fresh c; c let go of $(stat "$C_PORT" namespace_ids_released) idle IDs"

# Uniqueness within each namespace, across everything taken.
# One process for every namespace (check_unique's rule: sorted ranges never overlap).
total=$(python3 - "$OUT" "${NAMES[@]}" <<'PY'
import sys
out, total, bad = sys.argv[1], 0, 0
for n in sys.argv[2:]:
    ranges = sorted(tuple(map(int, l.split())) for l in open("%s/%s.ids" % (out, n)))
    last = -1
    for first, c in ranges:
        if c < 1 or first <= last:
            bad += 1
            print("namespace %s: overlap: %d+%d after %d" % (n, first, c, last), file=sys.stderr)
        last = max(last, first + c - 1)
        total += c
print(total)
sys.exit(1 if bad else 0)
PY
) || fail "duplicate IDs within a namespace"
python3 - "$OUT/dense.ids" <<'PY' || fail "the refuse namespace handed out an ID above 2^53"
import sys
for line in open(sys.argv[1]):
    a, n = map(int, line.split())
    assert a + n <= 1 << 53, line
PY
log "unique: $total IDs over ${#NAMES[@]} namespaces, no duplicate within any; dense's all tickets"

# 4. Both servers down (SIGKILL): a snowflake namespace falls back above 2^53,
#    a refuse one says UNAVAILABLE once its buffered IDs are gone.
for r in odd even; do kill -KILL "$(db_pid "$r")"; done
wait_for "a sees no server up" 15 tier_down "$A_PORT"
got=$(q "$A_PORT" "$(printf 'IDS 7 orders\n%.0s' $(seq 60))" | tail -n 1)
python3 -c "import sys; assert all(int(x) >= 1 << 53 for x in sys.argv[1].split())" "$got" ||
	fail "orders with both servers down: '$got', want Snowflake IDs"
got=$(q "$A_PORT" "$(printf 'IDS 7 dense\n%.0s' $(seq 60))" | tail -n 1)
case $got in "ERR UNAVAILABLE "*) ;; *) fail "dense with both servers down: '$got'" ;; esac
log "4. both servers killed: orders falls back to Snowflake IDs, dense says UNAVAILABLE"
log "PASS"
