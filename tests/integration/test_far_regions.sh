#!/usr/bin/env bash
# Two regions 50 ms apart (issue 18's two-region test). Each region is a pair
# of a tier (tier_increment 4, region_bits 5) and two idservers; each idserver
# has its own pair direct and the other region's pair through delayproxy.py
# (FAR_REGIONS_DELAY_MS each way, default 25: a 50 ms round trip), named in
# other_regions. libidgen clients (idgen_load, one per idserver) run across
# every fault; netcat and redis-cli check residues and DECODE. Every ID is
# collected:
#   a. both regions serve tickets of their own pairs' residues while the link
#      is idle (tickets_other_regions 0); DECODE (text, RESP) names the region;
#   b. the link cut (the proxies drop every byte, connections left open): both
#      regions keep serving their own tickets, no failed call; the link heals;
#   c. region 0's pair killed: region 0's idservers take tickets from region
#      1's pair across the link (ticket_region 1, DECODE region=1), no failed
#      call; the fetch across the link costs about one round trip;
#   d. region 1's pair killed too (no server anywhere): each region serves
#      Snowflake IDs of its own worker range (DECODE region, RESP datacenter_id),
#      no failed call;
#   e. no duplicate anywhere, counts by kind and region.
# FAR_REGIONS_LOAD_S: seconds of client load around each fault (default 4);
# FAR_REGIONS_REFILL_WAIT_MS: the idservers' refill_wait_ms (default 300).
. "$(dirname "$0")/lib.sh"

M=4 BITS=5
DELAY=${FAR_REGIONS_DELAY_MS:-25}
LOAD_S=${FAR_REGIONS_LOAD_S:-4}
REFILL_WAIT=${FAR_REGIONS_REFILL_WAIT_MS:-300}
LOAD=$BUILD/idgen_load
R1_ODD=$((ODD_PORT + 10)) R1_EVEN=$((EVEN_PORT + 10))
# The link: region 0's idservers reach region 1's pair on X1_*, region 1's
# reach region 0's on X0_*.
X1_ODD=$((ODD_PORT + 20)) X1_EVEN=$((EVEN_PORT + 20))
X0_ODD=$((ODD_PORT + 30)) X0_EVEN=$((EVEN_PORT + 30))
R1=$T_DIR/db1
D=$T_DIR/ids
P=("$SVC_PORT" $((SVC_PORT + 1)) $((SVC_PORT + 2)) $((SVC_PORT + 3)))
NAMES=(r0a r0b r1a r1b)
mkdir -p "$D"
# The idservers' STATS are kept with the logs: what each served, and from where.
on_cleanup() {
	local k
	for k in 0 1 2 3; do q "${P[$k]}" 'STATS\n' >"$T_DIR/stats-${NAMES[$k]}.txt" 2>/dev/null; done
	[ -d "$R1" ] && "$ROOT/scripts/dbpair.sh" down "$R1" >/dev/null 2>&1
}

DBPAIR_INCREMENT=$M DBPAIR_REGION=0 DBPAIR_REGION_BITS=$BITS pair_up
mkdir -p "$R1" && cp "$T_DIR/db/db_password" "$R1/db_password"	# one service password
DBPAIR_INCREMENT=$M DBPAIR_REGION=1 DBPAIR_REGION_BITS=$BITS \
	"$ROOT/scripts/dbpair.sh" up "$R1" "$R1_ODD" "$R1_EVEN" >/dev/null
# B is the schema's 2^20, the only B of a tier of regions (docs/design.md 12.3):
# the clients' few million IDs a phase take a few tickets from each server.

# proxy NAME LISTEN UPSTREAM: the link, DELAY ms each way.
PROXIES=()
proxy() {
	python3 "$ROOT/tests/integration/delayproxy.py" "$2" "$3" "$DELAY" >"$T_DIR/proxy-$1.log" 2>&1 &
	PIDS+=($!)
	PROXIES+=($!)
}
proxy x1-odd "$X1_ODD" "$R1_ODD"
proxy x1-even "$X1_EVEN" "$R1_EVEN"
proxy x0-odd "$X0_ODD" "$ODD_PORT"
proxy x0-even "$X0_EVEN" "$EVEN_PORT"
wait_for "the proxies" 10 bash -c "[ \$(ss -Hltn '( sport = :$X1_ODD or sport = :$X1_EVEN or sport = :$X0_ODD or sport = :$X0_EVEN )' | grep -c .) = 4 ]"

# A connect through the link is several round trips (greeting, auth, checks).
# refill_wait_ms 300 (REFILL_WAIT): a request that finds the pool empty right
# after a switch waits for the ticket in flight across the link (one round
# trip plus a commit) rather than getting a Snowflake ID after the default 50
# ms. recheck_ms 1000: a silent link is noticed within a second or two (a
# recheck times out).
FLAGS=(--tier_increment $M --region_bits $BITS --lease_extend_ms 500 --reprobe_max_ms 500
	--connect_timeout_ms 2000 --query_timeout_ms 1000 --recheck_ms 1000 --refill_wait_ms "$REFILL_WAIT")
for k in 0 1; do
	idserver_start "${NAMES[$k]}" "${P[$k]}" "${FLAGS[@]}" --region 0 \
		--other_regions "1=127.0.0.1:$X1_ODD,127.0.0.1:$X1_EVEN"
done
for k in 2 3; do
	ODD_PORT=$R1_ODD EVEN_PORT=$R1_EVEN idserver_start "${NAMES[$k]}" "${P[$k]}" "${FLAGS[@]}" \
		--region 1 --other_regions "0=127.0.0.1:$X0_ODD,127.0.0.1:$X0_EVEN"
done
OTHER=(r1 r1 r0 r0)	# the STATS prefix of each idserver's other region

# all_up PORT NAME...: every server NAME (odd, even_r1, ...) is up, and a lease held.
all_up() {
	local port=$1 out p
	shift
	out=$(q "$port" 'STATS\n')
	for p in "$@"; do grep -q "^STAT ${p}_state up" <<<"$out" || return 1; done
	grep -q '^STAT lease_state held' <<<"$out"
}
for k in 0 1 2 3; do
	wait_for "idserver ${NAMES[$k]}: its pair, the other region's and a lease" 30 \
		all_up "${P[$k]}" odd even "odd_${OTHER[$k]}" "even_${OTHER[$k]}"
done
for k in 0 1 2 3; do wait_buffered "${P[$k]}"; done
B=$(stat "${P[0]}" block_size)
log "set up: two pairs, the link ($DELAY ms each way), four idservers with their pairs, the other region's and a lease ($SECONDS s)"

# clients PHASE REGION...: a libidgen client per idserver of each region in
# the background, LOAD_S s each, every ID dumped. One idserver each, not the
# region's list: the library picks its first idserver by PID, so two clients
# given the list may load one idserver and leave the other idle. --pace keeps
# a client near 0.65 million IDs/s (a fraction of what the link carries: two
# fetches in flight of B IDs per round trip, about 2.6 million IDs/s);
# --lead-ms 200 makes it refill every fraction of a second, so it asks its
# idserver through every fault.
CLIENTS=()
clients() {
	local phase=$1 r k
	shift
	CLIENTS=()
	for r in "$@"; do
		for k in $((2 * r)) $((2 * r + 1)); do
			"$LOAD" -s "127.0.0.1:${P[$k]}" -t 1 -d "$LOAD_S" --mix --pace 100000 --lead-ms 200 \
				--allow-errors --dump "$D/lib-$phase-${NAMES[$k]}" >"$T_DIR/lib-$phase-${NAMES[$k]}.out" 2>&1 &
			CLIENTS+=($!)
		done
	done
	PIDS+=("${CLIENTS[@]}")
}
# clients_done PHASE: waits for them; fails on any failed call; logs their lines.
clients_done() {
	local c f ids=0 calls=0
	for c in "${CLIENTS[@]}"; do wait "$c" || true; done
	for f in "$T_DIR"/lib-"$1"-*.out; do
		grep -q '^RESULT ' "$f" || fail "$(basename "$f" .out): no RESULT: $(tail -n 2 "$f")"
		grep -q ' bad=0 ' "$f" || fail "$(basename "$f" .out): a bad reply: $(cat "$f")"
		grep -q ' errors=0 ' "$f" || fail "$(basename "$f" .out): failed calls: $(cat "$f")"
		ids=$((ids + $(sed -n 's/^RESULT.* ids=\([0-9]*\) .*/\1/p' "$f")))
		calls=$((calls + $(sed -n 's/^RESULT.* calls=\([0-9]*\) .*/\1/p' "$f")))
		log "  $(basename "$f" .out): $(grep '^RESULT' "$f" | grep -oE '(ids|calls|round_trips|failures|failovers|errors)=[0-9]+' | tr '\n' ' ')"
	done
	log "  $1: libidgen clients: $ids IDs in $calls calls, 0 failed"
}

# kinds FILE... : prints, for the ranges of the files, "ticket REGION" and
# "snowflake REGION" counts (every block of a ticket range, both ends of a
# Snowflake range, checked).
kinds() {
	python3 - "$B" "$M" "$BITS" "$@" <<'PY'
import collections, sys
b, m, bits = map(int, sys.argv[1:4])
c = collections.Counter()
for path in sys.argv[4:]:
    for line in open(path):
        first, n = map(int, line.split())
        last = first + n - 1
        if first >= 1 << 53:
            regs = {(x >> 12 & 0x3FF) >> (10 - bits) for x in (first, last)}
            assert len(regs) == 1, "a Snowflake range across regions: %d+%d" % (first, n)
            c["snowflake", regs.pop()] += n
            continue
        assert last < 1 << 53, "a range across 2^53"
        for t in range(first // b, last // b + 1):
            ids = min(last, t * b + b - 1) - max(first, t * b) + 1
            c["ticket", ((t % m) - 1) % m // 2] += ids
print(" ".join("%s:%d=%d" % (k, r, n) for (k, r), n in sorted(c.items())))
PY
}
# only FILES_GLOB WANT...: the kinds of the files are exactly the WANT words
# (e.g. "ticket:0"), each with at least one ID.
only() {
	local got want w
	got=$(kinds $1)
	shift
	want=" $* "
	for w in $got; do [[ $want == *" ${w%=*} "* ]] || { echo "$got"; return 1; }; done
	for w in "$@"; do [[ " $got" == *" $w="* ]] || { echo "$got"; return 1; }; done
	echo "$got"
}
# snap PORT: the counters that say how requests were served.
KEYS='refill_waits refill_late_fallbacks ids_fallback ids_ticket tickets_other_regions ticket_region mode'
snap() {
	q "$1" 'STATS\n' | awk -v keys="$KEYS" 'BEGIN { n = split(keys, k); for (i = 1; i <= n; i++) want[k[i]] = 1 }
		$1 == "STAT" && ($2 in want) { printf "%s=%s ", $2, $3 }'
}

# a. The link idle: each region's tickets from its own pair.
T0=$(date +%s)
clients a 0 1
for k in 0 1 2 3; do
	read -r errs top < <(mint_ids "${P[$k]}" 50 "$D/nc-a-$k")
	[ "$errs" = 0 ] && [ "$top" -lt $((1 << 53)) ] || fail "idserver ${NAMES[$k]}: errors $errs, top $top"
done
clients_done a
for r in 0 1; do
	got=$(only "$D/lib-a-r$r* $D/nc-a-$((2 * r)) $D/nc-a-$((2 * r + 1))" "ticket:$r") ||
		fail "a: region $r served other IDs than its own tickets: $got"
	log "a: region $r: $got"
done
for k in 0 1 2 3; do
	r=$((k / 2))
	[ "$(stat "${P[$k]}" tickets_other_regions)" = 0 ] && [ "$(stat "${P[$k]}" ticket_region)" = $r ] ||
		fail "a: ${NAMES[$k]}: $(snap "${P[$k]}")"
	first=$(awk 'NR == 1 { print $1 }' "$D/nc-a-$k")
	q "${P[$(( (k + 2) % 4 ))]}" "DECODE $first\n" | has -E "^ticket block=[0-9]+ server=(odd|even) region=$r\$" ||
		fail "a: DECODE $first in the other region: '$(q "${P[$(( (k + 2) % 4 ))]}" "DECODE $first\n")', want region=$r"
	redis-cli -p "${P[$(( (k + 2) % 4 ))]}" DECODE "$first" | tr '\n' ' ' |
		grep -qE "^source ticket block [0-9]+ server (odd|even) region $r " ||
		fail "a: RESP DECODE $first: $(redis-cli -p "${P[$(( (k + 2) % 4 ))]}" DECODE "$first" | tr '\n' ' ')"
done
log "a. link idle ($((2 * DELAY)) ms round trip): both regions serve their own pairs' tickets, tickets_other_regions 0, DECODE names the region in both ($(($(date +%s) - T0)) s)"

# b. The link cut both ways: the proxies drop every byte, connections stay open.
T0=$(date +%s)
clients b 0 1
sleep 1
kill -USR1 "${PROXIES[@]}"
for k in 0 1 2 3; do
	wait_for "${NAMES[$k]} sees the other region's pair down" 15 bash -c \
		"! printf 'STATS\n' | nc -N 127.0.0.1 ${P[$k]} | grep -qE '^STAT (odd|even)_${OTHER[$k]}_state up'"
done
for k in 0 1 2 3; do
	read -r errs top < <(mint_ids "${P[$k]}" 50 "$D/nc-b-$k")
	[ "$errs" = 0 ] && [ "$top" -lt $((1 << 53)) ] || fail "b: ${NAMES[$k]}: errors $errs, top $top while cut off"
	[ "$(stat "${P[$k]}" mode)" = ticket ] || fail "b: ${NAMES[$k]} left ticket mode: $(snap "${P[$k]}")"
done
clients_done b
for r in 0 1; do
	got=$(only "$D/lib-b-r$r* $D/nc-b-$((2 * r)) $D/nc-b-$((2 * r + 1))" "ticket:$r") ||
		fail "b: region $r served other IDs than its own tickets while cut off: $got"
	log "b: region $r: $got"
done
kill -USR2 "${PROXIES[@]}"
for k in 0 1 2 3; do
	wait_for "${NAMES[$k]}: the other region's pair back after the link healed" 20 \
		all_up "${P[$k]}" "odd_${OTHER[$k]}" "even_${OTHER[$k]}"
done
log "b. link cut: both regions kept serving their own tickets, no failed call; link healed, other pairs up again ($(($(date +%s) - T0)) s)"

# c. Region 0's pair down: region 0 takes region 1's tickets across the link.
T0=$(date +%s)
for k in 0 1; do snap "${P[$k]}" >"$T_DIR/c-before-$k"; done
# Region 0's idservers hold up to a few blocks of 2^20 IDs of their own pair
# when it dies, which its clients take first (about 0.65 million IDs/s each):
# the clients run LOAD_S + 3 s here, so that region 1's tickets follow.
LOAD_S=$((LOAD_S + 3)) clients c 0 1
sleep 1.5
for k in 0 1; do BUF[$k]=$(stat "${P[$k]}" ids_buffered); done
for r in odd even; do kill -KILL "$(db_pid "$r")"; done
T_KILL=$(date +%s%N)
log "c: region 0's pair killed with ${BUF[0]} and ${BUF[1]} IDs of it buffered in r0a and r0b"
for k in 0 1; do
	wait_for "${NAMES[$k]} takes region 1's tickets" 15 bash -c \
		"[ \"\$(printf 'STATS\n' | nc -N 127.0.0.1 ${P[$k]} | awk '\$2==\"ticket_region\"{print \$3}')\" = 1 ]"
	log "c: ${NAMES[$k]}: ticket_region 1 within $(( ($(date +%s%N) - T_KILL) / 1000000 )) ms of the kill"
done
clients_done c
for k in 0 1; do
	# Blocks of region 0's pair banked before the kill (2^20 IDs each) go
	# first: 100,000 IDs at a time until region 1's tickets come, all kept.
	for i in $(seq 1 40); do
		read -r errs top < <(mint_ids "${P[$k]}" 100 "$D/nc-c-$k")
		[ "$errs" = 0 ] && [ "$top" -lt $((1 << 53)) ] || fail "c: ${NAMES[$k]}: errors $errs, top $top"
		got=$(kinds "$D/nc-c-$k")
		[[ " $got" == *" ticket:1="* ]] && break
	done
	[[ " $got" == *" ticket:1="* && $got != *snowflake* ]] ||
		fail "c: ${NAMES[$k]}: no ticket of region 1 over netcat after the switch: $got"
	# An ID of region 1's residues (blocks of region 0's pair banked before the
	# kill may still be served).
	last=$(python3 -c 'import sys
b, m = int(sys.argv[2]), int(sys.argv[3])
for line in open(sys.argv[1]):
    first = int(line.split()[0])
    if first // b % m in (3, 0):
        print(first)
        break' "$D/nc-c-$k" "$B" "$M")
	q "${P[$k]}" "DECODE $last\n" | has -E "^ticket block=[0-9]+ server=(odd|even) region=1\$" ||
		fail "c: DECODE $last: '$(q "${P[$k]}" "DECODE $last\n")', want region=1"
	[ "$(stat "${P[$k]}" mode)" = ticket ] && [ "$(stat "${P[$k]}" tickets_other_regions)" -gt 0 ] ||
		fail "c: ${NAMES[$k]}: $(snap "${P[$k]}")"
	grep -q "taking tickets from region 1's .* server: no server of this region's pair (region 0) is up" "$T_DIR/${NAMES[$k]}.log" ||
		fail "c: ${NAMES[$k]} did not log the switch to region 1"
	grep -qE '^mark (- )?(odd|even)_r1 [1-9]' "$T_DIR/${NAMES[$k]}.state" ||
		fail "c: ${NAMES[$k]}'s state file has no mark of region 1's servers"
done
# What the clients of region 0 got: their own pair's tickets before the kill,
# region 1's after it, and (only if a request waited past refill_wait_ms) a
# Snowflake ID of region 0's workers.
got=$(kinds "$D"/lib-c-r0*)
[[ " $got" == *" ticket:1="* ]] || fail "c: region 0's libidgen clients got no ticket of region 1: $got"
for w in $got; do
	case ${w%=*} in ticket:0|ticket:1|snowflake:0) ;; *) fail "c: region 0's clients got $w";; esac
done
log "c: region 0's libidgen clients: $got"
got=$(only "$D/lib-c-r1*" "ticket:1") || fail "c: region 1 served other IDs than its own tickets: $got"
log "c: region 1's libidgen clients: $got"
for k in 0 1; do
	q "${P[$k]}" 'STATS\n' >"$T_DIR/c-after-$k"
	v() { awk -v n="$1" '$1 == "STAT" && $2 == n { print $3 }' "$T_DIR/c-after-$k"; }
	log "c: ${NAMES[$k]} before: $(cat "$T_DIR/c-before-$k")"
	log "c: ${NAMES[$k]} after:  $(snap "${P[$k]}")"
	log "c: ${NAMES[$k]}: fetch across the link: odd_r1 $(v odd_r1_fetch_us_avg) us avg ($(v odd_r1_tickets)" \
		"tickets, max $(v odd_r1_fetch_us_max)), even_r1 $(v even_r1_fetch_us_avg) us avg ($(v even_r1_tickets)" \
		"tickets, max $(v even_r1_fetch_us_max)); own pair before the kill: odd $(v odd_fetch_us_avg), even" \
		"$(v even_fetch_us_avg) us avg"
	# The delay was real: a fetch across the link is at least one round trip.
	for s in odd_r1 even_r1; do
		[ "$(v ${s}_tickets)" -eq 0 ] || [ "$(v ${s}_fetch_us_avg)" -ge $((2 * DELAY * 1000)) ] ||
			fail "c: ${NAMES[$k]}: ${s}_fetch_us_avg $(v ${s}_fetch_us_avg) us, under the link's round trip: the proxy did not apply"
	done
done
log "c. region 0's pair down: region 0 serves region 1's tickets across the link (ticket_region 1, DECODE region=1), no failed call ($(($(date +%s) - T0)) s)"

# d. Region 1's pair down too: no server anywhere; Snowflake IDs of each
# region's own workers. The clients run LOAD_S + 3 s, as in c, so that they
# go on past the buffered tickets into the fallback.
T0=$(date +%s)
LOAD_S=$((LOAD_S + 3)) clients d 0 1
sleep 1.5
for r in odd even; do kill -KILL "$(cat "$R1/$r/mariadbd.pid")"; done
# none_up PORT: no server of any region up (lib.sh's tier_down looks at the own pair).
none_up() { ! q "$1" 'STATS\n' | has -E '^STAT (odd|even)(_r[0-9]+)?_state up'; }
for k in 0 1 2 3; do wait_for "${NAMES[$k]} sees no server up" 15 none_up "${P[$k]}"; done
clients_done d
for k in 0 1 2 3; do
	r=$((k / 2))
	drain_all "${P[$k]}"
	read -r errs top < <(mint_ids "${P[$k]}" 20 "$D/nc-d-$k")
	[ "$errs" = 0 ] && [ "$top" -ge $((1 << 53)) ] || fail "d: ${NAMES[$k]}: errors $errs, top $top: no Snowflake ID"
	[ "$(stat "${P[$k]}" mode)" = fallback ] || fail "d: ${NAMES[$k]}: $(snap "${P[$k]}")"
	sf=$(awk '$1 >= 9007199254740992 { print $1; exit }' "$D/nc-d-$k")
	w0=$((32 * r)) w1=$((32 * r + 31))
	out=$(q "${P[$(( (k + 2) % 4 ))]}" "DECODE $sf\n")
	[[ $out =~ ^snowflake\ .*\ worker=([0-9]+)\ seq=[0-9]+\ region=$r$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge $w0 ] && [ "${BASH_REMATCH[1]}" -le $w1 ] ||
		fail "d: ${NAMES[$k]}: DECODE $sf: '$out', want a worker of $w0..$w1, region=$r"
	redis-cli -p "${P[$k]}" DECODE "$sf" | tr '\n' ' ' | has -E "datacenter_id $r worker_id [0-9]+ seq [0-9]+ region $r " ||
		fail "d: RESP DECODE $sf: $(redis-cli -p "${P[$k]}" DECODE "$sf" | tr '\n' ' ')"
	[ "$("$BUILD/idgen" --tier-increment $M --region-bits $BITS decode "$sf")" = "$sf $out" ] ||
		fail "d: idgen decode $sf: '$("$BUILD/idgen" --tier-increment $M --region-bits $BITS decode "$sf")'"
done
for r in 0 1; do
	got=$(kinds "$D"/lib-d-r$r* "$D/nc-d-$((2 * r))" "$D/nc-d-$((2 * r + 1))")
	[[ " $got" == *" snowflake:$r="* ]] || fail "d: region $r served no Snowflake ID of its own: $got"
	for w in $got; do
		# Region 0's tickets only in region 0 (a tail buffered before c).
		case ${w%=*} in ticket:$r|ticket:1|snowflake:$r) ;; *) fail "d: region $r served $w";; esac
	done
	log "d: region $r: $got"
done
log "d. no server anywhere: each region serves Snowflake IDs of its own workers (DECODE text, RESP and idgen agree), no failed call ($(($(date +%s) - T0)) s)"

# e. No duplicate anywhere.
n=$(check_unique "$D"/*) || fail "DUPLICATE IDs across the regions"
log "e. $n IDs in $(cat "$D"/* | wc -l) ranges, by kind and region: $(kinds "$D"/*); no duplicate"
log ok
