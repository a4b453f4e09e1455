#!/usr/bin/env bash
# The Redis protocol on the text port, with real clients: redis-cli (one-shot
# and interactive on a pty), redis-benchmark (pipelined; it exits non-zero on
# any error reply), Debian's redis-py (execute_command, a non-transactional
# pipeline, a pool shared by threads), hiredis from C (pipelined), and the
# nasty inputs of nasty_resp.txt. Every ID collected: no duplicate.
. "$(dirname "$0")/lib.sh"

pair_up
idserver_start svc "$SVC_PORT"
wait_buffered "$SVC_PORT"
R=(redis-cli -p "$SVC_PORT")
IDS=$T_DIR/ids.txt
: >"$IDS"

# 1. redis-cli one-shot.
id=$("${R[@]}" ID)
[[ "$id" =~ ^[0-9]+$ ]] || fail "redis-cli ID: '$id'"
echo "$id 1" >>"$IDS"
out=$("${R[@]}" IDS 5)
[ "$(wc -l <<<"$out")" = 5 ] && [ "$(sort -n <<<"$out")" = "$out" ] || fail "IDS 5: $out"
awk '{ print $1, 1 }' <<<"$out" >>"$IDS"
read -r first n <<<"$("${R[@]}" BLOCK 100 | tr '\n' ' ')"
[ "$n" = 100 ] || fail "BLOCK 100: $first $n"
echo "$first 100" >>"$IDS"
dec=$("${R[@]}" DECODE "$id" | tr '\n' ' ')
[[ "$dec" =~ ^source\ ticket\ block\ [0-9]+\ server\ (odd|even)\ id\ $id\ b58\ ([1-9A-HJ-NP-Za-km-z]{11})\ $ ]] ||
	fail "DECODE: '$dec'"
b58=${BASH_REMATCH[2]}
[ "$("${R[@]}" B58 "$id")" = "$b58" ] || fail "B58 $id is not $b58"
[ "$("${R[@]}" DECODE "$b58" | sed -n 8p)" = "$id" ] || fail "DECODE $b58 does not give $id back"
# ... and the text protocol decodes the base58 form too, naming the number.
[[ "$(q "$SVC_PORT" "DECODE $b58\n")" == "ticket block="*" id=$id" ]] || fail "text DECODE $b58"
info=$("${R[@]}" INFO)
grep -q '^# Tickets' <<<"$info" && grep -q '^odd_state:up' <<<"$info" || fail "INFO: $(head -5 <<<"$info")"
[ "$("${R[@]}" INFO tickets | grep -c '^# ')" = 1 ] || fail "INFO tickets shows other sections"
err=$("${R[@]}" IDS 5000)
[ "$err" = "RANGE n must be 1..1000" ] || fail "IDS 5000: '$err'"
[ "$("${R[@]}" PING)" = PONG ] || fail "PING"
log "redis-cli one-shot: ID, IDS, BLOCK, DECODE (both forms), B58, INFO, errors"

# 2. redis-cli interactive, on a pty (TERM=dumb: no terminal answers its
# cursor queries), each line typed once the prompt for it came (pty_expect.py:
# input typed ahead is echoed before or after the replies depending on the
# machine's load, issue 36); the replies in order, each then the prompt.
P="127\\.0\\.0\\.1:$SVC_PORT"
out=$(printf '%s\n' "expect $P> " 'send ID' "expect \\n\\(integer\\) ([0-9]+)\\n$P> " 'send IDS 3' \
	"expect \\n1\\) \\(integer\\) ([0-9]+)\\n2\\) \\(integer\\) ([0-9]+)\\n3\\) \\(integer\\) ([0-9]+)\\n$P> " \
	'send NOPE' "expect \\n\\(error\\) ERR unknown command 'NOPE'[^\\n]*\\n$P> " 'send quit' 'eof' |
	/usr/bin/python3 "$(dirname "$0")/pty_expect.py" 10 redis-cli -p "$SVC_PORT") ||
	fail "interactive ID, IDS 3, NOPE: $out"
awk '$1 == "MATCH" { for (i = 2; i <= NF; i++) print $i, 1 }' <<<"$out" >>"$IDS"
log "redis-cli interactive: ok"

# 3. redis-benchmark, pipelined: a check (non-zero on any error reply) and a load.
redis-benchmark -p "$SVC_PORT" -c 20 -n 200000 -P 16 -q ID >"$T_DIR/bench-id.txt" 2>&1 ||
	fail "redis-benchmark ID: $(tail -n 2 "$T_DIR/bench-id.txt")"
redis-benchmark -p "$SVC_PORT" -c 4 -n 4000 -P 8 -q IDS 1000 >"$T_DIR/bench-ids.txt" 2>&1 ||
	fail "redis-benchmark IDS 1000: $(tail -n 2 "$T_DIR/bench-ids.txt")"
! grep -q 'Error' "$T_DIR"/bench-*.txt || fail "redis-benchmark saw errors"
! grep -q 'WARNING' "$T_DIR"/bench-*.txt || fail "redis-benchmark warned: $(grep WARNING "$T_DIR"/bench-*.txt)"
# ... which can fail: an error reply makes it exit non-zero.
! redis-benchmark -p "$SVC_PORT" -c 1 -n 10 -q IDS 5000 >/dev/null 2>&1 || fail "redis-benchmark ignores errors"
log "redis-benchmark: $(tr '\r' '\n' <"$T_DIR/bench-id.txt" | grep -o 'ID: [0-9.]* requests per second' | tail -n 1)"

# 4. redis-py (Debian's python3-redis): commands, a pipeline, a pool shared by threads.
/usr/bin/python3 - "$SVC_PORT" "$IDS" <<'PY' || fail "redis-py"
import sys, threading, redis
port, out = int(sys.argv[1]), open(sys.argv[2], "a")
pool = redis.ConnectionPool(host="127.0.0.1", port=port, max_connections=8)
r = redis.Redis(connection_pool=pool)
assert r.ping() is True
assert r.execute_command("ID") > 0
got, lock = [], threading.Lock()
def work():
    c = redis.Redis(connection_pool=pool)
    mine = []
    for _ in range(50):
        ids = c.execute_command("IDS", 1000)
        assert ids == sorted(ids) and len(ids) == 1000
        mine += ids
        p = c.pipeline(transaction=False)
        for _ in range(100):
            p.execute_command("ID")
        mine += p.execute()
    with lock:
        got.extend(mine)
ts = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
assert len(got) == 8 * 50 * 1100, len(got)
try:
    r.execute_command("IDS", 5000)
    sys.exit("no error for IDS 5000")
except redis.ResponseError as e:
    assert str(e) == "RANGE n must be 1..1000", str(e)
d = r.execute_command("DECODE", got[0])
assert d[0] == b"source" and d[1] == b"ticket", d
info = r.info()
assert info["odd_state"] == "up", info
for i in got:
    out.write("%d 1\n" % i)
print("redis-py: %d IDs from 8 threads" % len(got), file=sys.stderr)
PY

# 5. hiredis from C: 2 x 500 pipelined requests on one connection.
cc -std=c11 -Wall -Wextra -Werror -o "$T_DIR/resp_hiredis" "$(dirname "$0")/resp_hiredis.c" \
	$(pkg-config --cflags --libs hiredis) || fail "cannot build the hiredis client"
"$T_DIR/resp_hiredis" "$SVC_PORT" 500 >"$T_DIR/hiredis.out" || fail "hiredis client failed"
[ "$(wc -l <"$T_DIR/hiredis.out")" = 50500 ] || fail "hiredis: $(wc -l <"$T_DIR/hiredis.out") IDs, want 50500"
awk '{ print $1, 1 }' "$T_DIR/hiredis.out" >>"$IDS"
log "hiredis: 50500 IDs pipelined"

# 6. The nasty inputs; another connection is answered throughout.
python3 - "$SVC_PORT" "$(dirname "$0")/nasty_resp.txt" "$IDS" <<'PY' || fail "nasty RESP inputs"
import re, socket, sys, time
port, path, out = int(sys.argv[1]), sys.argv[2], open(sys.argv[3], "a")
PING = b"*1\r\n$4\r\nPING\r\n"
def unescape(s):
    return s.encode("latin1").decode("unicode_escape").encode("latin1")
def talk(data, chunks=1):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    step = max(1, len(data) // chunks)
    for i in range(0, len(data), step):
        s.sendall(data[i:i + step])
        if chunks > 1:
            time.sleep(0.001)
    s.shutdown(socket.SHUT_WR)
    buf = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        buf += b
    s.close()
    return buf
def ids_of(buf):
    for m in re.finditer(rb"^:([0-9]+)\r$", buf, re.M):
        out.write("%d 1\n" % int(m.group(1)))
n = 0
for line in open(path):
    if line.startswith("#") or not line.strip():
        continue
    req, after, want = line.rstrip("\n").split("\t")
    data = unescape(req)
    buf = talk(data + (PING if after == "open" else b""))
    lines = buf.decode("latin1").split("\r\n")
    if not re.search(want, lines[0]):
        sys.exit("%r: first reply %r, want /%s/" % (req, lines[0], want))
    if after == "open" and "+PONG" not in lines:
        sys.exit("%r: closed before PING: %r" % (req, buf[:200]))
    if after == "close" and "+PONG" in lines[1:]:
        sys.exit("%r: a protocol error did not close" % req)
    # COMMAND's integers are arities and key positions, not IDs.
    if b"COMMAND" not in data:
        ids_of(buf)
    # Someone else is served meanwhile.
    assert talk(PING) == b"+PONG\r\n"
    n += 1
# A multibulk split into single bytes, and 10,000 requests in one write.
buf = talk(b"*2\r\n$3\r\nIDS\r\n$2\r\n10\r\n" * 3, chunks=75)
assert buf.count(b"*10\r\n") == 3, buf[:100]
ids_of(buf)
buf = talk(b"*1\r\n$2\r\nID\r\n" * 10000 + PING)
assert buf.count(b"\r\n:") + buf.startswith(b":") == 10000 and buf.endswith(b"+PONG\r\n")
ids_of(buf)
# Binary junk after a '*': one protocol error, then the service is still there.
import random
random.seed(5)
for _ in range(50):
    talk(b"*" + bytes(random.randrange(256) for _ in range(random.randrange(1, 300))))
assert talk(PING) == b"+PONG\r\n"
print("nasty RESP: %d cases, split frames, a 10,000-request pipeline, junk" % n, file=sys.stderr)
PY

# The text protocol is untouched on the same port.
[ "$(q "$SVC_PORT" 'PING\n')" = PONG ] || fail "text PING after RESP"
n=$(check_unique "$IDS") || fail "DUPLICATE IDs across the RESP clients"
log "ok: $n IDs over RESP, no duplicate"
