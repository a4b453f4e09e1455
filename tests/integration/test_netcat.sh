#!/usr/bin/env bash
# The thin slice: a real MariaDB ticket through the event loop to the real netcat.
. "$(dirname "$0")/lib.sh"

pair_up
HTTP_PORT=$((SVC_PORT + 100))
idserver_start svc "$SVC_PORT" --http_port "$HTTP_PORT"
wait_buffered "$SVC_PORT"

# The README's example: echo ID | nc -N prints one ID and exits.
out=$(echo ID | timeout 10 nc -N 127.0.0.1 "$SVC_PORT")
[[ "$out" =~ ^[0-9]+$ ]] || fail "echo ID | nc printed '$out'"
[ "$out" -gt 0 ] && [ "$out" -lt 9007199254740992 ] || fail "ticket ID $out outside [1, 2^53)"
log "echo ID | nc -N -> $out"

# DECODE names the block and the server, consistent with B from the meta row.
b=$(stat "$SVC_PORT" block_size)
want=$(grep -oE 'VALUES \(1, 1, [0-9]+' "$ROOT/schema/20-odd.sql" | awk '{ print $4 }')
[ "$b" = "$want" ] || fail "block_size $b, schema says $want"
dec=$(q "$SVC_PORT" 'DECODE %s\n' "$out")
t=$((out / b))
par=$([ $((t % 2)) = 1 ] && echo odd || echo even)
[ "$dec" = "ticket block=$t server=$par" ] || fail "DECODE $out -> '$dec'"

# Pipelined, CRLF and LF, case-insensitive, replies in order, flushed before close.
out=$(q "$SVC_PORT" 'ping\r\nId\nIDS 3\r\nblock 5\nPING\n')
lines=$(printf '%s\n' "$out" | wc -l)
[ "$lines" = 5 ] || fail "5 pipelined requests gave $lines lines: $out"
[ "$(printf '%s\n' "$out" | sed -n 1p)" = PONG ] || fail "first reply not PONG"
[ "$(printf '%s\n' "$out" | sed -n 5p)" = PONG ] || fail "last reply not PONG"
read -r a b2 c <<<"$(printf '%s\n' "$out" | sed -n 3p)"
[ "$a" -lt "$b2" ] && [ "$b2" -lt "$c" ] || fail "IDS 3 not ascending: $a $b2 $c"
read -r first n <<<"$(printf '%s\n' "$out" | sed -n 4p)"
[ "$n" = 5 ] || fail "BLOCK 5 replied count $n"

# A last line without LF is still answered at EOF.
[ "$(printf 'PING' | timeout 5 nc -N 127.0.0.1 "$SVC_PORT")" = PONG ] || fail "unterminated last line"

# QUIT closes after earlier replies.
out=$(q "$SVC_PORT" 'PING\nQUIT\nPING\n')
[ "$out" = PONG ] || fail "QUIT: got '$out'"

# Errors keep the connection open; an overlong line closes it.
out=$(q "$SVC_PORT" 'NOPE\nIDS 1001\nBLOCK 0\nDECODE 0\nPING\n')
[ "$(printf '%s\n' "$out" | grep -c '^ERR BADREQ')" = 1 ] || fail "unknown command: $out"
[ "$(printf '%s\n' "$out" | grep -c '^ERR RANGE')" = 3 ] || fail "range errors: $out"
[ "$(printf '%s\n' "$out" | tail -n 1)" = PONG ] || fail "connection closed after an error"
long=$(head -c 1100 /dev/zero | tr '\0' 'A')
out=$(q "$SVC_PORT" "$long\nPING\n")
[ "$out" = "ERR BADREQ line too long" ] || fail "overlong line: '$out'"

# HELP lists every command.
for w in ID IDS BLOCK DECODE B58 STATS PING HELP QUIT; do
	q "$SVC_PORT" 'HELP\n' | has "^$w " || fail "HELP lacks $w"
done
# The same numbers over HTTP: /stats is JSON holding every STATS name; /health is 200.
http() { printf 'GET %s HTTP/1.0\r\n\r\n' "$1" | timeout 5 nc -N 127.0.0.1 "$HTTP_PORT"; }
[[ "$(http /health | head -n 1)" == "HTTP/1."?" 200"* ]] || fail "/health: $(http /health | head -n 1)"
http /health | has -E '"mode": ?"ticket"' || fail "/health body"
http /stats | sed '1,/^\r$/d' >"$T_DIR/stats.json"
q "$SVC_PORT" 'STATS\n' | awk '$1 == "STAT" { print $2 }' >"$T_DIR/stat-names.txt"
python3 - "$T_DIR/stats.json" "$T_DIR/stat-names.txt" <<'PY' || fail "/stats JSON does not match STATS"
import json, sys
d = json.load(open(sys.argv[1]))
names = open(sys.argv[2]).read().split()
missing = [n for n in names if n not in d]
assert not missing and len(d) == len(names), missing
assert d["mode"] == "ticket" and d["block_size"] == 1048576, d
PY
[[ "$(http /nope | head -n 1)" == "HTTP/1."?" 404"* ]] || fail "unknown path not 404"

# docs/protocols.md documents every STATS name (per-server ones as odd_*/even_*,
# per-namespace ones as ns_<ns>_*).
for n in $(sed 's/^\(odd\|even\)_//; s/^ns_.*_\(ids_buffered\)$/ns_<ns>_\1/' "$T_DIR/stat-names.txt" | sort -u); do
	grep -q "\`$n\`" "$ROOT/docs/protocols.md" || fail "docs/protocols.md does not document STAT $n"
done
log "ok"
