#!/usr/bin/env bash
# The generator inside the process at scale (issue 35's first "Done when";
# docs/design.md 11.8): 16 library processes x 4 threads, each minting from a
# worker number it leases itself on a mariadb:// address (4 of them fork: the
# child claims its own), beside two idservers in ticket mode (their clients
# collected) and one idserver in fallback minting from its own lease (its pair
# partitioned). Two library processes are SIGKILLed and started again, one is
# SIGSTOPped past its 3 s window while another holder takes its number, then
# each ticket server is SIGSTOPped in turn for longer than the window.
# First, a claim made while another claim is open on each server takes another
# row (docs/design.md 3.3). Checked: every ID collected from every process and idserver, none twice; no
# library call failed; no worker number minted by two processes in one
# millisecond; no ID of a stopped
# server's worker numbers once every window granted before the stop ended;
# every process that lived through both stops minted on both servers' numbers;
# forked children detected the fork and claimed; the frozen process minted
# nothing after SIGCONT until it held a lease again.
. "$(dirname "$0")/lib.sh"
LOAD=$BUILD/idgen_load

pair_up
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password")
export IDGEN_DB_PASSWORD
EPOCH=1767225600000
WIN=3000
TIER=mariadb://idgen@127.0.0.1:$ODD_PORT,127.0.0.1:$EVEN_PORT/idgen
# A 3 s window extended every 500 ms; a stopped server costs 300 + 500 ms a try.
U="$TIER?lease_window_ms=$WIN&lease_extend_ms=500&connect_timeout_ms=300&query_timeout_ms=500&reprobe_max_ms=300"
D=$T_DIR/ids
mkdir -p "$D"
leases() { db_sql "$1" "SELECT worker, holder, window_start, window_end FROM idgen.idgen_leases WHERE holder <> ''"; }
now_ms() { date +%s%3N; }
STOPPED=()
# A failure with a ticket server or a library process stopped: both let go first.
on_cleanup() {
	local p
	for p in "${STOPPED[@]}"; do kill -CONT "$p" 2>/dev/null; done
}

log "a claim while another claim's transaction is open on each server: it takes another row"
OPEN=()
for role in odd even; do
	db_sql "$role" "START TRANSACTION; SELECT worker FROM idgen.idgen_leases WHERE window_end < 1 << 62 ORDER BY window_end, worker LIMIT 1 FOR UPDATE SKIP LOCKED; SELECT SLEEP(3); COMMIT" >"$T_DIR/open-$role.out" 2>&1 &
	OPEN[${#OPEN[@]}]=$!
done
sleep 0.5
"$BUILD/idgen" --server "$U" ids 100 >"$T_DIR/cli.out" 2>&1 || fail "a claim beside open claims: $(head -n 3 "$T_DIR/cli.out")"
sed 's/$/ 1/' "$T_DIR/cli.out" >"$D/cli"
wait "${OPEN[@]}"

S1=$SVC_PORT
S2=$((SVC_PORT + 1))
S3=$((SVC_PORT + 2))
PO=$((SVC_PORT + 10))
PE=$((SVC_PORT + 11))
idserver_start a "$S1" --query_timeout_ms 500 --connect_timeout_ms 300
idserver_start b "$S2" --query_timeout_ms 500 --connect_timeout_ms 300
wait_buffered "$S1"; wait_buffered "$S2"
python3 "$ROOT/tests/integration/delayproxy.py" "$PO" "$ODD_PORT" 0 >"$T_DIR/proxy-odd.log" 2>&1 &
PROXY_ODD=$!
PIDS+=("$PROXY_ODD")
python3 "$ROOT/tests/integration/delayproxy.py" "$PE" "$EVEN_PORT" 0 >"$T_DIR/proxy-even.log" 2>&1 &
PROXY_EVEN=$!
PIDS+=("$PROXY_EVEN")
wait_for "the proxies" 10 bash -c "nc -z 127.0.0.1 $PO && nc -z 127.0.0.1 $PE"
idserver_start c "$S3" --odd_port "$PO" --even_port "$PE" --lease_window_ms 60000 \
	--query_timeout_ms 800 --connect_timeout_ms 800 --reprobe_max_ms 500 \
	--prefetch_blocks 1 --prefetch_max_blocks 1
svc_is() { [ "$(stat "$S3" "$1")" = "$2" ]; }
wait_for "idserver c's lease" 10 svc_is lease_state held
kill -USR1 "$PROXY_ODD" "$PROXY_EVEN"
for _ in $(seq 1 60); do
	[ "$(stat "$S3" ids_fallback)" -gt 0 ] && break
	mint_ids "$S3" 100 "$D/svc-c" >/dev/null
done
[ "$(stat "$S3" ids_fallback)" -gt 0 ] || fail "idserver c hands out no Snowflake ID"
log "idservers a, b in ticket mode; c in fallback on worker $(stat "$S3" lease_worker)"

DUR=18
T0=$(now_ms)
log "16 library processes x 4 threads (l4, l8, l12, l16 fork; l1..l4 mix next/ids/block), 2 clients of a and b"
LP=()
for i in $(seq 1 16); do
	extra=()
	[ $((i % 4)) = 0 ] && extra+=(--fork)
	[ "$i" -le 4 ] && extra+=(--mix --pace 200000) || extra+=(--pace 20000)
	"$LOAD" -s "$U" -t 4 -d "$DUR" --allow-errors --stream "${extra[@]}" --dump "$D/l$i" \
		>"$T_DIR/l$i.out" 2>&1 &
	LP[i]=$!
	PIDS+=("$!")
done
for i in 1 2; do
	"$LOAD" -s "127.0.0.1:$S1,127.0.0.1:$S2" -t 2 -d "$DUR" --mix --pace 100000 --allow-errors \
		--stream --dump "$D/t$i" >"$T_DIR/t$i.out" 2>&1 &
	TP[i]=$!
	PIDS+=("$!")
done
( end=$((SECONDS + DUR)); while [ $SECONDS -lt $end ]; do mint_ids "$S3" 20 "$D/svc-c" >/dev/null; sleep 0.3; done ) &
SVC_LOAD=$!
sleep 3

K1=${LP[5]} K2=${LP[10]} P=${LP[7]}
kill -KILL "$K1" "$K2"
kill -STOP "$P"
STOPPED+=("$P")
log "SIGKILL l5 ($K1) and l10 ($K2); SIGSTOP l7 ($P)"
for i in 17 18; do
	"$LOAD" -s "$U" -t 4 -d $((DUR - 4)) --allow-errors --stream --pace 20000 --dump "$D/l$i" \
		>"$T_DIR/l$i.out" 2>&1 &
	LP[i]=$!
	PIDS+=("$!")
done
log "l17, l18 started in their place"
sleep 0.5
read -r PW PE_END < <(for role in odd even; do leases "$role"; done | awk -v p=":$P:" 'index($2, p) { print $1, $4 }')
[ -n "$PW" ] || fail "no lease row names the stopped process $P"
log "the stopped process holds worker $PW until $PE_END (layout ms)"
wait_for "its window to end" 10 bash -c "[ \$(( \$(date +%s%3N) - $EPOCH )) -gt $((PE_END + 100)) ]"
# Another holder takes the number, as a claim does (after the window's end).
PROLE=$([ $((PW % 2)) = 1 ] && echo odd || echo even)
took=$(db_sql "$PROLE" "UPDATE idgen.idgen_leases SET holder = 'test-thief', window_start = CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - $EPOCH, window_end = CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - $EPOCH + 60000, claims = claims + 1 WHERE worker = $PW AND window_end < CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - $EPOCH; SELECT ROW_COUNT()")
[ "$took" = 1 ] || fail "worker $PW could not be claimed after its window ($took)"
kill -CONT "$P"
STOPPED=()
log "SIGCONT l7 ($(( $(now_ms) - EPOCH - PE_END )) ms past its window; worker $PW taken)"

# Each ticket server stopped in turn for 4 s, longer than any window.
STOPS=()
for role in odd even; do
	sleep 0.5
	dp=$(db_pid "$role")
	STOPPED=("$dp")
	s=$(now_ms)
	kill -STOP "$dp"
	log "SIGSTOP the $role server"
	sleep 4
	kill -CONT "$dp"
	STOPPED=()
	e=$(now_ms)
	log "SIGCONT the $role server"
	STOPS+=("$role:$s:$e")
done

for i in $(seq 1 18); do
	[ "$i" = 5 ] || [ "$i" = 10 ] || wait "${LP[$i]}" || fail "l$i: $(cat "$T_DIR/l$i.out")"
done
for i in 1 2; do wait "${TP[$i]}" || fail "t$i: $(cat "$T_DIR/t$i.out")"; done
wait "$SVC_LOAD"
log "every process done"
cat "$T_DIR"/l*.out "$T_DIR"/t?.out >&2
for i in 4 8 12 16; do
	grep -q 'role=child.*forks=1 .*lease_claims=[1-9]' "$T_DIR/l$i.out" ||
		fail "l$i: the child did not detect the fork and claim its own number"
done
grep -qE 'lease_claims=([2-9]|[1-9][0-9])' "$T_DIR/l7.out" || fail "l7: no second lease after SIGCONT"
if grep 'RESULT' "$T_DIR"/l*.out "$T_DIR"/t?.out | grep -v ' bad=0 ' | has .; then fail "a bad reply"; fi
# A stopped ticket server costs a library process nothing: at half its window it
# claims on the other server (docs/design.md 3.4), and concurrent claims each
# find a free number (3.3). No call failed, the frozen process's included.
if grep -H 'RESULT' "$T_DIR"/l*.out | grep -v ' errors=0 ' | has .; then
	grep -H -A1 'RESULT' "$T_DIR"/l*.out | grep -v ' errors=0 ' >&2
	fail "a library call failed"
fi
[ "$(stat "$S3" ids_fallback)" -gt 0 ] || fail "idserver c handed out no Snowflake ID"
for role in odd even; do leases "$role"; done >"$T_DIR/leases.txt"

# The frozen process: worker PW only up to its window's end; after it only a
# worker whose row names it, from that window's start on.
python3 "$ROOT/tests/integration/frozen_check.py" "$PW" "$PE_END" ":$P:" "$T_DIR/leases.txt" "$D"/l7.t* || fail "the stopped process minted without a lease"

# Every Snowflake ID by (worker, ms) and process: a (worker, ms) minted by two
# processes means two held one number at once. A stopped server's numbers: no
# library ID after every window granted before the stop had ended (its start +
# the window), until it was back. A library process that lived through both
# stops minted on numbers of both servers (odd workers are the odd server's).
python3 - "$WIN" "$EPOCH" "${STOPS[*]}" "$D" <<'PY' || fail "a worker number minted by two processes at once, or without a lease"
import os, re, sys
from collections import defaultdict
win, epoch, stops, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
stops = [(r, int(s) - epoch, int(e) - epoch) for r, s, e in (x.split(":") for x in stops)]
B53 = 1 << 53
owner, bad, ms, procs = {}, 0, 0, defaultdict(set)
for name in sorted(os.listdir(d)):
    proc = re.sub(r"\.t[0-9]+$", "", name)
    lib = name.startswith("l")
    for line in open(os.path.join(d, name)):
        first, n = map(int, line.split())
        if first < B53:
            continue
        i, last = first, first + n - 1
        while i <= last:
            ts, w = i >> 22, (i >> 12) & 1023
            key = (w, ts)
            o = owner.get(key)
            if o is None:
                owner[key] = o = proc
                ms += 1
            if o != proc:
                bad += 1
                if bad <= 5:
                    print(f"worker {w} at ms {ts}: minted by {o} and by {proc}", file=sys.stderr)
            if lib:
                procs[proc].add(w % 2)
                for role, s, e in stops:
                    if (w % 2 == 1) == (role == "odd") and s + win < ts < e:
                        bad += 1
                        if bad <= 5:
                            print(f"{name}: worker {w} ({role}) minted at {ts}, the {role} server stopped {s}..{e}", file=sys.stderr)
            i = ((i >> 12) + 1) << 12
for p in sorted(procs):
    if p not in ("l5", "l10") and procs[p] != {0, 1}:
        bad += 1
        print(f"{p}: minted only on workers of parity {procs[p]}: never moved", file=sys.stderr)
print(f"{ms} (worker, ms) pairs, {len(procs)} library processes, each on both servers' numbers", file=sys.stderr)
sys.exit(1 if bad else 0)
PY

n=$(check_unique "$D"/*) || fail "duplicate IDs"
log "PASS: $n IDs, none twice"
