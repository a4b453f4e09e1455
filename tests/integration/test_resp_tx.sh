#!/usr/bin/env bash
# Redis transactions and the connection commands on the RESP port, with real
# clients: Debian's redis-py (pipeline() is MULTI/EXEC by default; errors
# while queuing and when run; WATCH; the 22 MB reply of one EXEC; the
# resp_multi_max_commands bound; CLIENT, TIME, COMMAND, AUTH) and redis-cli
# (MULTI/EXEC typed by hand, CLIENT SETNAME/GETNAME, TIME, COMMAND COUNT,
# HELP from COMMAND DOCS). Every ID returned inside a transaction is collected:
# no duplicate, and none shared with the IDs taken outside.
. "$(dirname "$0")/lib.sh"

pair_up
idserver_start svc "$SVC_PORT" --resp_multi_max_commands 5000
wait_buffered "$SVC_PORT"
R=(redis-cli -p "$SVC_PORT")
IDS=$T_DIR/ids.txt
: >"$IDS"

# 1. redis-py: transactional pipelines from 8 threads, and the errors.
/usr/bin/python3 - "$SVC_PORT" "$IDS" <<'PY' || fail "redis-py"
import sys, threading, redis
port, out = int(sys.argv[1]), open(sys.argv[2], "a")
pool = redis.ConnectionPool(host="127.0.0.1", port=port, max_connections=8)
r = redis.Redis(connection_pool=pool)
got, lock = [], threading.Lock()
def keep(ids):
    with lock:
        got.extend(ids)
def work():
    c = redis.Redis(connection_pool=pool)
    mine = []
    for _ in range(40):
        p = c.pipeline()                      # transaction=True: MULTI ... EXEC
        for _ in range(100):
            p.execute_command("ID")
        p.execute_command("IDS", 1000)
        p.execute_command("BLOCK", 10)
        res = p.execute()
        assert len(res) == 102, len(res)
        mine += res[:100]
        assert res[100] == sorted(res[100]) and len(res[100]) == 1000
        mine += res[100]
        first, n = res[101]
        assert n == 10
        mine += range(first, first + n)
        # ... and the same without MULTI, on the same connections.
        p = c.pipeline(transaction=False)
        for _ in range(50):
            p.execute_command("ID")
        mine += p.execute()
    keep(mine)
ts = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
assert len(got) == 8 * 40 * 1160, len(got)

# A runtime error is returned in its place; the rest of EXEC runs.
p = r.pipeline()
p.execute_command("ID")
p.execute_command("IDS", 5000)
p.execute_command("ID")
res = p.execute(raise_on_error=False)
assert isinstance(res[1], redis.ResponseError) and str(res[1]) == "RANGE n must be 1..1000", res
keep([res[0], res[2]])
p = r.pipeline()
p.execute_command("ID")
p.execute_command("IDS", 5000)
try:
    p.execute()
    sys.exit("no error raised for IDS 5000 inside EXEC")
except redis.ResponseError as e:
    assert "RANGE n must be 1..1000" in str(e), str(e)

# An error while queuing aborts the EXEC: nothing runs.
p = r.pipeline()
p.execute_command("ID")
p.execute_command("IDS")                       # wrong arity
p.execute_command("NOPE")
try:
    p.execute()
    sys.exit("EXEC ran despite errors while queuing")
except redis.ResponseError as e:
    assert "wrong number of arguments for 'ids' command" in str(e), str(e)

# The bound on queued commands (--resp_multi_max_commands 5000 here).
p = r.pipeline()
for _ in range(5001):
    p.execute_command("ID")
try:
    p.execute()
    sys.exit("a MULTI of 5001 commands ran")
except redis.ResponseError as e:
    assert "too many commands in this MULTI (resp_multi_max_commands)" in str(e), str(e)
p = r.pipeline()
for _ in range(5000):
    p.execute_command("ID")
res = p.execute()
assert len(res) == 5000
keep(res)

# One EXEC of a million IDs (about 22 MB): streamed under max_output_bytes.
p = r.pipeline()
for _ in range(1000):
    p.execute_command("IDS", 1000)
res = p.execute()
assert len(res) == 1000 and all(len(x) == 1000 for x in res)
for x in res:
    keep(x)

# WATCH as redis-py uses it: WATCH at once, then MULTI ... EXEC, then UNWATCH.
with r.pipeline() as p:
    p.watch("k")
    p.multi()
    p.execute_command("ID")
    res = p.execute()
    keep(res)

# IDs handed out inside EXEC are counted as outside (INFO's ids_ticket); a
# DISCARDed or aborted transaction takes none. Nothing else runs meanwhile.
before = int(r.info("stats")["ids_ticket"])
p = r.pipeline()
for _ in range(100):
    p.execute_command("ID")
p.execute_command("IDS", 1000)
res = p.execute()
keep(res[:100])
keep(res[100])
c = redis.Redis(host="127.0.0.1", port=port)
c.execute_command("MULTI")
c.execute_command("IDS", 1000)
c.execute_command("DISCARD")
after = int(r.info("stats")["ids_ticket"])
assert after - before == 1100, (before, after)

# Redis's own errors, raw.
c = redis.Redis(host="127.0.0.1", port=port)
def err(*args):
    try:
        c.execute_command(*args)
    except redis.ResponseError as e:
        return str(e)
    sys.exit("no error for %r" % (args,))
assert err("EXEC") == "EXEC without MULTI"
assert err("DISCARD") == "DISCARD without MULTI"
assert c.execute_command("MULTI") == b"OK"
assert err("MULTI") == "MULTI calls can not be nested"
assert err("WATCH", "k") == "WATCH inside MULTI is not allowed"
assert c.execute_command("ID") == b"QUEUED"
assert c.execute_command("DISCARD") == b"OK"
assert c.execute_command("UNWATCH") in (True, b"OK")

# The connection's name and number, CLIENT INFO/LIST, TIME, COMMAND, RESET.
assert r.client_getname() is None
assert r.client_setname("app-1") is True
assert r.client_getname() == "app-1"
cid = r.client_id()
assert isinstance(cid, int) and cid > 0
info = r.client_info()
assert info["name"] == "app-1" and info["id"] == cid and info["multi"] == -1, info
assert info["addr"].startswith("127.0.0.1:") and info["laddr"] == "127.0.0.1:%d" % port, info
lst = r.client_list()
assert len(lst) == 1 and lst[0]["id"] == str(cid), lst
other = redis.Redis(host="127.0.0.1", port=port)
assert other.client_id() != cid
# CLIENT LIST's filters (this connection is the only one listed, a normal one).
assert [c["id"] for c in r.client_list(_type="normal")] == [str(cid)]
for t in ("pubsub", "replica", "master"):
    assert r.client_list(_type=t) == [], t
assert [c["id"] for c in r.client_list(client_id=[str(cid)])] == [str(cid)]
assert r.client_list(client_id=[str(other.client_id())]) == []
both = r.execute_command("CLIENT", "LIST", "ID", other.client_id(), cid, cid)
assert [l.split()[0] for l in both.decode().splitlines()] == ["id=%d" % cid] * 2, both
for args, want in ((("TYPE", "foo"), "Unknown client type 'foo'"),
                   (("ID", "x"), "Invalid client ID"), (("ID",), "syntax error"),
                   (("TYPE", "normal", "ID", cid), "syntax error")):
    try:
        r.execute_command("CLIENT", "LIST", *args)
        sys.exit("CLIENT LIST %r accepted" % (args,))
    except redis.ResponseError as e:
        assert str(e) == want, (args, str(e))
secs, us = r.time()
import time
assert abs(secs + us / 1e6 - time.time()) < 5 and 0 <= us < 1000000, (secs, us)
n = r.command_count()
table = r.command()
assert len(table) == n and "ids" in table and table["ids"]["arity"] == -2, table.get("ids")
assert table["client"]["arity"] == -1 and "multi" in table
assert r.execute_command("RESET") in ("RESET", b"RESET")
assert r.client_getname() is None
# AUTH: this server has no password.
try:
    r.auth("secret")
    sys.exit("AUTH accepted")
except redis.ResponseError as e:
    assert "without any password configured" in str(e), str(e)
try:
    redis.Redis(host="127.0.0.1", port=port, password="secret").ping()
    sys.exit("a client with a password connected")
except (redis.AuthenticationError, redis.ResponseError) as e:
    assert "without any password configured" in str(e), str(e)

for i in got:
    out.write("%d 1\n" % i)
print("redis-py: %d IDs from transactions and pipelines" % len(got), file=sys.stderr)
PY
log "redis-py: pipeline() transactions, errors, bounds, WATCH, CLIENT, TIME, COMMAND, AUTH"

# 2. redis-cli: a transaction by hand (one connection, commands on stdin).
out=$(printf 'MULTI\nID\nIDS 3\nBLOCK 5\nIDS 0\nEXEC\n' | "${R[@]}")
want='^OK
QUEUED
QUEUED
QUEUED
QUEUED
[0-9]+
[0-9]+
[0-9]+
[0-9]+
[0-9]+
5
RANGE n must be 1..1000$'
[[ "$out" =~ $want ]] || fail "redis-cli MULTI/EXEC: '$out'"
{
	sed -n 6p <<<"$out" | awk '{ print $1, 1 }'
	sed -n 7,9p <<<"$out" | awk '{ print $1, 1 }'
	echo "$(sed -n 10p <<<"$out") 5"
} >>"$IDS"
out=$(printf 'MULTI\nIDS\nEXEC\n' | "${R[@]}" | grep -v '^$')
[ "$out" = "$(printf "OK\nERR wrong number of arguments for 'ids' command\nEXECABORT Transaction discarded because of previous errors.")" ] ||
	fail "redis-cli EXECABORT: '$out'"
out=$(printf 'CLIENT SETNAME tool\nCLIENT GETNAME\nRESET\nCLIENT GETNAME\n' | "${R[@]}")
[ "$out" = "$(printf 'OK\ntool\nRESET\n')" ] || fail "redis-cli CLIENT SETNAME/GETNAME/RESET: '$out'"
read -r secs us <<<"$("${R[@]}" TIME | tr '\n' ' ')"
[[ "$secs" =~ ^[0-9]{10}$ && "$us" =~ ^[0-9]{1,6}$ ]] && [ $((secs - $(date +%s))) -le 5 ] ||
	fail "redis-cli TIME: $secs $us"
n=$("${R[@]}" COMMAND COUNT)
[ "$n" -gt 20 ] && [ "$("${R[@]}" COMMAND LIST | wc -l)" = "$n" ] || fail "COMMAND COUNT $n"
# redis-cli 7 builds its help and hints from COMMAND DOCS.
help=$("${R[@]}" help IDS | tr -d '\r' | sed 's/\x1b\[[0-9;]*m//g')
grep -q 'IDS n \[ns\]$' <<<"$help" && grep -q 'summary: n unique IDs' <<<"$help" ||
	fail "redis-cli help IDS: '$help'"
help=$("${R[@]}" help CLIENT SETNAME | tr -d '\r' | sed 's/\x1b\[[0-9;]*m//g')
grep -q 'CLIENT SETNAME connection-name$' <<<"$help" || fail "redis-cli help CLIENT SETNAME: '$help'"
[ "$("${R[@]}" AUTH x 2>&1)" = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?" ] ||
	fail "redis-cli AUTH: '$("${R[@]}" AUTH x 2>&1)'"
log "redis-cli: MULTI/EXEC, EXECABORT, CLIENT SETNAME/GETNAME, RESET, TIME, COMMAND COUNT, HELP, AUTH"

# 3. redis-cli interactive, on a pty: the transaction prompt and its replies.
# Each line is typed once the prompt for it came (pty_expect.py): input typed
# ahead was echoed before or after the replies depending on the machine's load
# (issue 36). The replies in order: OK and the (TX) prompt, QUEUED and the
# (TX) prompt, EXEC's array and the plain prompt.
P="127\\.0\\.0\\.1:$SVC_PORT"
out=$(printf '%s\n' "expect $P> " 'send MULTI' "expect \\nOK\\n$P\\(TX\\)> " 'send ID' \
	"expect \\nQUEUED\\n$P\\(TX\\)> " 'send EXEC' "expect \\n1\\) \\(integer\\) ([0-9]+)\\n$P> " \
	'send quit' 'eof' | /usr/bin/python3 "$(dirname "$0")/pty_expect.py" 10 redis-cli -p "$SVC_PORT") ||
	fail "interactive MULTI/EXEC: $out"
awk '$1 == "MATCH" { print $2, 1 }' <<<"$out" >>"$IDS"
log "redis-cli interactive: MULTI/EXEC, the (TX) prompt"

# The text protocol is untouched on the same port; the service still answers.
[ "$(q "$SVC_PORT" 'PING\n')" = PONG ] || fail "text PING"
n=$(check_unique "$IDS") || fail "DUPLICATE IDs from transactions"
log "ok: $n IDs from transactions and pipelines, no duplicate"
