#!/usr/bin/env bash
# libidgen given idservers AND a tier (docs/design.md 11.8): library processes
# (threads, a fork) take IDs from two idservers in ticket mode; every idserver
# is SIGKILLed and the clients go on minting from worker numbers they lease
# themselves (idgenctl tier status names them: libidgen, host, pid); one
# idserver restarted, they go back to its blocks and release their numbers.
# No call fails; every ID collected, none twice.
. "$(dirname "$0")/lib.sh"
LOAD=$BUILD/idgen_load
IDGEN=$BUILD/idgen

pair_up
ctl_env
S1=$SVC_PORT
S2=$((SVC_PORT + 1))
idserver_start a "$S1"
idserver_start b "$S2"
wait_buffered "$S1"; wait_buffered "$S2"
TIER="mariadb://idgen@127.0.0.1:$ODD_PORT,127.0.0.1:$EVEN_PORT/idgen?lease_window_ms=20000"
LIST="127.0.0.1:$S1,127.0.0.1:$S2,$TIER"
D=$T_DIR/ids
mkdir -p "$D"
status() { "${CTL[@]}" tier status >"$T_DIR/status.out" 2>&1 || { cat "$T_DIR/status.out" >&2; fail "tier status"; }; }
# lib_held: worker numbers a library holds now, by tier status.
lib_held() { status; awk '$1 == "held" && $4 == "libidgen"' "$T_DIR/status.out"; }
libs_hold() { [ "$(lib_held | wc -l)" -ge "$1" ]; }
libs_released() { [ -z "$(lib_held)" ]; }

# The tier's address comes last: idservers after it are a usage error, not ignored.
if "$IDGEN" -s "mariadb://idgen@127.0.0.1:$ODD_PORT,127.0.0.1:$EVEN_PORT/idgen,127.0.0.1:$S1" id >"$T_DIR/order.out" 2>&1; then
	fail "idservers after the tier's address were accepted: $(cat "$T_DIR/order.out")"
fi
has "idservers come first and the tier's address last" "$T_DIR/order.out" || fail "list order: $(cat "$T_DIR/order.out")"

log "4 processes (3 threads each, one forking) on the list: idservers, then the tier"
LPIDS=()
for p in 1 2 3 4; do
	extra=()
	[ "$p" = 4 ] && extra=(--fork)
	# Until the test says stop (after the release below), at most 60 s: a
	# fixed duration could end before idserver a is back on a slow machine.
	"$LOAD" -s "$LIST" -t 3 -d 60 --until "$T_DIR/stop" --mix --pace 15000 --stream \
		"${extra[@]}" --dump "$D/p$p" \
		>"$T_DIR/p$p.out" 2>&1 &
	LPIDS+=("$!")
	PIDS+=("$!")
done
sleep 3
[ -z "$(lib_held)" ] || { cat "$T_DIR/status.out" >&2; fail "a library leased a number while idservers answer"; }

KILL_MS=$(date +%s%3N)
kill -KILL "$a_PID" "$b_PID"
log "SIGKILL both idservers ($a_PID, $b_PID)"
wait_for "the libraries' own leases" 10 libs_hold 5
cat "$T_DIR/status.out" >&2
# Who holds what: each library process by its pid (the forked child has its own).
for p in 1 2 3; do
	awk -v pid="${LPIDS[$((p - 1))]}" '$1 == "held" && $4 == "libidgen" && $6 == pid' "$T_DIR/status.out" | has . ||
		fail "tier status names no number held by library process ${LPIDS[$((p - 1))]}"
done
awk '$1 == "held" && $4 == "idserver"' "$T_DIR/status.out" | has . ||
	fail "tier status names no idserver holder (the killed idservers' windows are open)"

log "the idgen command on the same list, no idserver up: minted from its own lease, released"
"$IDGEN" --server "$LIST" ids 100 >"$T_DIR/cli.out" 2>&1 || fail "idgen ids: $(head -n 3 "$T_DIR/cli.out")"
[ "$(sort -u "$T_DIR/cli.out" | wc -l)" = 100 ] || fail "idgen: not 100 distinct IDs"
awk '$1 >= 9007199254740992 { n++ } END { exit n != 100 }' "$T_DIR/cli.out" || fail "idgen: not Snowflake IDs"
sed 's/$/ 1/' "$T_DIR/cli.out" >"$D/cli"
log "no idserver and no lease (region 1 of a pair of region 0: refused): a clear error naming both"
if "$IDGEN" --server "127.0.0.1:$S1,$TIER&region_bits=5&region=1&tier_increment=4" ids 1 >"$T_DIR/none.out" 2>&1; then
	fail "minted with no idserver and no trusted server: $(cat "$T_DIR/none.out")"
fi
cat "$T_DIR/none.out" >&2
has -E 'no idserver could give any \(.*127\.0\.0\.1:'"$S1"'.*\) and no Snowflake lease: the (odd|even) server.s lease rows are not trusted: auto_increment_increment is 2, must be 4' "$T_DIR/none.out" ||
	fail "no clear error: $(cat "$T_DIR/none.out")"

sleep 2
idserver_start a "$S1"
log "idserver a restarted"
wait_for "the libraries to release their numbers" 10 libs_released
BACK_MS=$(date +%s%3N)
log "no number held by a library: they are back on idserver a"
sleep 2	# a's blocks for a while: every thread's last range a ticket range
touch "$T_DIR/stop"

for i in "${!LPIDS[@]}"; do
	wait "${LPIDS[$i]}" || fail "process $((i + 1)): $(cat "$T_DIR/p$((i + 1)).out")"
done
cat "$T_DIR"/p?.out >&2
for p in 1 2 3 4; do
	grep -c 'RESULT' "$T_DIR/p$p.out" | has -E '^[1-9]' || fail "p$p: no RESULT"
	if grep 'RESULT' "$T_DIR/p$p.out" | grep -vE 'bad=0 errors=0' | has .; then
		fail "p$p: errors reported: $(cat "$T_DIR/p$p.out")"
	fi
	grep 'RESULT' "$T_DIR/p$p.out" | has -E 'lease_claims=[1-9]' || fail "p$p: never leased"
done
grep -q 'role=child.*forks=1' "$T_DIR/p4.out" || fail "p4: the child did not detect the fork"

# Every thread minted Snowflake IDs in the outage (between the kill and the
# release) and ended on ticket IDs (a's blocks). Snowflake IDs outside the
# outage are reported, not failed: on a loaded machine a refill round may find
# no idserver answering in time and start a short episode of its own, which is
# the fallback doing its job (the IDs are still checked for duplicates below).
python3 - "$KILL_MS" "$BACK_MS" "$D"/p?*.t* <<'PY' || fail "a thread that minted no Snowflake ID in the outage or never came back to tickets"
import sys
B53, EPOCH = 1 << 53, 1767225600000
kill, back = int(sys.argv[1]), int(sys.argv[2])
bad = 0
for path in sys.argv[3:]:
    minted, outside, last = 0, 0, None
    for line in open(path):
        first, n = map(int, line.split())
        last = first
        if first < B53:
            continue
        ends = [(i >> 22) + EPOCH for i in (first, first + n - 1)]
        if kill <= ends[0] and ends[1] <= back:
            minted += n
        else:
            outside += n
    if outside:
        print(f"{path}: {outside} Snowflake IDs outside the outage {kill}..{back} "
              "(an episode of its own on a busy machine)", file=sys.stderr)
    if not minted or last is None or last >= B53:
        bad += 1
        print(f"{path}: minted {minted} in the outage, last range {last}", file=sys.stderr)
    else:
        print(f"{path}: {minted} Snowflake IDs minted in the outage", file=sys.stderr)
sys.exit(1 if bad else 0)
PY

n=$(check_unique "$D"/*) || fail "duplicate IDs"
log "PASS: $n IDs, none twice, no error across both switches"
