#!/usr/bin/env bash
# The HTTP/JSON API and /metrics with real tools: curl (every endpoint and
# error status, keep-alive), raw sockets (pipelined requests, an oversized
# header and body, a request trickled a byte at a time, garbage), h2load with
# 1,000 concurrent connections, promtool on /metrics, a real Prometheus
# scraping it, and the API in fallback (IDs above 2^53: strings only). The
# conventions tools expect: a JSON body on POST, HEAD, CORS (off by default, an
# allow-list when set), Accept: text/plain, and docs/openapi.json checked by a
# real OpenAPI validator with every operation in it called and every reply
# matched against its schema (tests/js/openapi_check.mjs) in ticket mode, in
# fallback, with no ID to serve, and with tokens (401, 403). IDs collected across HTTP, the text
# protocol and RESP never repeat.
. "$(dirname "$0")/lib.sh"

pair_up
HP=$((SVC_PORT + 1))
ORIGIN=https://app.example
idserver_start svc "$SVC_PORT" --http_port "$HP" --http_timeout_ms 3000 \
	--http_cors_origins "https://other.example, $ORIGIN"
wait_buffered "$SVC_PORT"
URL=http://127.0.0.1:$HP
IDS=$T_DIR/ids.txt
: >"$IDS"

# get PATH [curl args]: prints "STATUS BODY"; the body is also in $T_DIR/body.
get() {
	local p=$1
	shift
	curl -s -o "$T_DIR/body" -D "$T_DIR/headers" -w '%{http_code}' "$@" "$URL$p"
}
header() { tr -d '\r' <"$T_DIR/headers" | awk -v h="$1" 'tolower($1) == tolower(h) ":" { $1 = ""; sub(/^ /, ""); print }'; }
# check_json KIND: the body's IDs as numbers equal their strings, and a number
# only below 2^53 (for ids: only when every ID is); ranges to $IDS.
check_json() {
	python3 - "$1" "$T_DIR/body" "$IDS" <<'PY'
import json, sys
kind, body, out = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3], "a")
d = json.loads(body)
def exact(num, s):
    v = int(s)
    assert str(v) == s and (num in d) == (v < 2**53), d
    assert num not in d or d[num] == v, d
    return v
if kind == "id":
    out.write("%d 1\n" % exact("id", d["id_str"]))
elif kind == "ids":
    ids = [int(s) for s in d["ids_str"]]
    assert [str(i) for i in ids] == d["ids_str"] and ids == sorted(set(ids)), d
    assert ("ids" in d) == all(i < 2**53 for i in ids), d
    assert "ids" not in d or d["ids"] == ids, d
    for i in ids:
        out.write("%d 1\n" % i)
elif kind == "block":
    assert d["count"] > 0, d
    out.write("%d %d\n" % (exact("first", d["first_str"]), d["count"]))
PY
}

# 1. Every endpoint, GET and POST.
[ "$(get /v1/id)" = 200 ] && check_json id || fail "/v1/id: $(cat "$T_DIR/body")"
[ "$(header Content-Type)" = application/json ] || fail "Content-Type: $(header Content-Type)"
[ "$(header Cache-Control)" = no-store ] || fail "Cache-Control: $(header Cache-Control)"
[ "$(get /v1/id -X POST)" = 200 ] && check_json id || fail "POST /v1/id"
[ "$(get '/v1/ids?count=1000')" = 200 ] && check_json ids || fail "/v1/ids: $(head -c 200 "$T_DIR/body")"
[ "$(get '/v1/block?count=4096' -X POST)" = 200 ] && check_json block || fail "/v1/block"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["first"])' "$T_DIR/body")
[ "$(get "/v1/decode/$id")" = 200 ] || fail "/v1/decode/$id"
grep -q '"source":"ticket"' "$T_DIR/body" && grep -q "\"id_str\":\"$id\"" "$T_DIR/body" || fail "decode: $(cat "$T_DIR/body")"
b58=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["b58"])' "$T_DIR/body")
[ "$(get "/v1/decode/$b58")" = 200 ] && grep -q "\"id\":$id," "$T_DIR/body" || fail "decode $b58: $(cat "$T_DIR/body")"
[ "$(get "/v1/b58/$id")" = 200 ] && grep -q "\"b58\":\"$b58\"" "$T_DIR/body" || fail "/v1/b58"
[ "$(get /health)" = 200 ] && grep -q '"ok":true' "$T_DIR/body" || fail "/health"
[ "$(get /stats)" = 200 ] || fail "/stats"
python3 - "$T_DIR/body" <<'PY' || fail "/stats is not typed JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["requests"], int) and isinstance(d["mode"], str) and d["odd_state"] == "up", d
PY
log "endpoints: ok"

# openapi MODE URL: docs/openapi.json validated, every operation called and checked.
openapi() {
	[ -d "$ROOT/tests/js/node_modules/@seriousme/openapi-schema-validator" ] ||
		fail "tests/js/node_modules missing: run make deps"
	(cd "$ROOT" && timeout 120 node tests/js/openapi_check.mjs "$1" "$2" docs/openapi.json "$IDS") \
		>"$T_DIR/openapi-$1.out" 2>&1 || fail "openapi $1: $(tail -n 5 "$T_DIR/openapi-$1.out")"
	log "$(tail -n 1 "$T_DIR/openapi-$1.out")"
}
openapi ticket "$URL"

# 1b. POST with a JSON body; the query form unchanged; bad bodies refused.
[ "$(get /v1/ids -H 'Content-Type: application/json' -d '{"count":5}')" = 200 ] && check_json ids || fail "POST {count:5}: $(cat "$T_DIR/body")"
python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))["ids_str"]) == 5' "$T_DIR/body" || fail "POST count 5"
[ "$(get /v1/block -H 'Content-Type: application/json; charset=utf-8' -d '{"count":100}')" = 200 ] && check_json block || fail "POST block"
for bad in '{"count":5' '{"count":"5"}' '{"count":5.5}' '{"count":5,"extra":1}' '[5]' '{}'; do
	[ "$(get /v1/ids -H 'Content-Type: application/json' -d "$bad")" = 400 ] &&
		grep -q '^{"error":{"code":"BADREQ","message":"' "$T_DIR/body" || fail "POST $bad: $(cat "$T_DIR/body")"
done
[ "$(get /v1/ids -d count=5)" = 415 ] || fail "POST form body: $(cat "$T_DIR/body")"
[ "$(get '/v1/ids?count=3' -H 'Content-Type: application/json' -d '{"count":3}')" = 400 ] &&
	grep -q 'given twice' "$T_DIR/body" || fail "count twice"
[ "$(get '/v1/ids?count=5000' -X POST)" = 400 ] && grep -q '"code":"RANGE"' "$T_DIR/body" || fail "POST query RANGE"
head -c 5000 /dev/zero | tr '\0' ' ' >"$T_DIR/big.json"
[ "$(get /v1/ids -H 'Content-Type: application/json' --data-binary @"$T_DIR/big.json")" = 413 ] || fail "body over http_max_body_bytes"
log "POST: a JSON body {\"count\": N}; bad JSON, types, members 400; a form body 415; over the bound 413"

# 1c. HEAD: the GET reply's status and headers, no body.
for p in /health /stats /metrics /v1/openapi.json /v1/id '/v1/ids?count=3' '/v1/ids?count=0' /v1/nope; do
	g=$(curl -s -o "$T_DIR/gbody" -D "$T_DIR/gh" -w '%{http_code}' "$URL$p")
	h=$(curl -s -I -o /dev/null -D "$T_DIR/hh" -w '%{http_code} %{size_download}' "$URL$p")
	[ "$h" = "$g 0" ] || fail "HEAD $p: '$h', GET $g"
	[ "$(grep -i '^content-type' "$T_DIR/hh")" = "$(grep -i '^content-type' "$T_DIR/gh")" ] || fail "HEAD $p: Content-Type"
	clen() { tr -d '\r' <"$1" | awk 'tolower($1) == "content-length:" { print $2 }'; }
	case $p in
	/v1/id) cp "$T_DIR/gbody" "$T_DIR/body" && check_json id || fail "GET $p" ;;
	*count=3) cp "$T_DIR/gbody" "$T_DIR/body" && check_json ids || fail "GET $p" ;;
	/health | /stats | /metrics) [ -n "$(clen "$T_DIR/hh")" ] || fail "HEAD $p: no Content-Length" ;;
	*) [ "$(clen "$T_DIR/hh")" = "$(clen "$T_DIR/gh")" ] || fail "HEAD $p: Content-Length $(clen "$T_DIR/hh")" ;;
	esac
done
log "HEAD: the GET status and headers, no body, on every GET route"
# A monitor's HEAD takes no ID (issue 34): the IDs handed out do not move.
taken() { curl -s "$URL/stats" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["ids_ticket"] + d["ids_fallback"])'; }
before=$(taken)
for p in /v1/id '/v1/ids?count=1000' '/v1/block?count=4096'; do
	for _ in 1 2 3; do
		[ "$(curl -s -I -o /dev/null -w '%{http_code}' "$URL$p")" = 200 ] || fail "HEAD $p not 200"
	done
done
[ "$(taken)" = "$before" ] || fail "HEAD took IDs: $before before, $(taken) after"
for p in '/v1/id?ns=a-b' '/v1/id?ns=nosuchns' '/v1/ids?count=0'; do
	g=$(curl -s -o /dev/null -w '%{http_code}' "$URL$p")
	h=$(curl -s -I -o /dev/null -w '%{http_code}' "$URL$p")
	[ "$g" != 200 ] && [ "$h" = "$g" ] || fail "HEAD $p answered $h, GET $g"
done
log "HEAD on /v1/id, /v1/ids and /v1/block takes no ID (still $before handed out); a bad count or namespace gets GET's status"

# 1d. Accept: text/plain, the text protocol's lines; JSON stays the default.
[ "$(get '/v1/ids?count=4' -H 'Accept: text/plain')" = 200 ] && [ "$(header Content-Type)" = "text/plain; charset=utf-8" ] ||
	fail "text/plain ids: $(header Content-Type)"
[ "$(wc -l <"$T_DIR/body")" = 4 ] && grep -qxE '[1-9][0-9]*' "$T_DIR/body" || fail "text ids: $(cat "$T_DIR/body")"
awk '{ print $1, 1 }' "$T_DIR/body" >>"$IDS"
[ "$(get /v1/id -H 'Accept: text/plain')" = 200 ] && grep -qxE '[1-9][0-9]*' "$T_DIR/body" || fail "text id"
awk '{ print $1, 1 }' "$T_DIR/body" >>"$IDS"
[ "$(get '/v1/block?count=9' -H 'Accept: text/plain, application/json;q=0.5')" = 200 ] && grep -qxE '[1-9][0-9]* 9' "$T_DIR/body" || fail "text block: $(cat "$T_DIR/body")"
awk '{ print $1, $2 }' "$T_DIR/body" >>"$IDS"
tid=$(cut -d' ' -f1 "$T_DIR/body")
[ "$(get "/v1/decode/$tid" -H 'Accept: text/plain')" = 200 ] &&
	[ "$(cat "$T_DIR/body")" = "$(printf 'DECODE %s\n' "$tid" | nc -N 127.0.0.1 "$SVC_PORT")" ] || fail "text decode: $(cat "$T_DIR/body")"
[ "$(get '/v1/ids?count=0' -H 'Accept: text/plain')" = 400 ] && grep -qx 'ERR RANGE .*' "$T_DIR/body" || fail "text error: $(cat "$T_DIR/body")"
[ "$(get /v1/id -H 'Accept: text/plain, application/json')" = 200 ] && [ "$(header Content-Type)" = application/json ] && check_json id || fail "tie: JSON"
[ "$(get /v1/id -H 'Accept: */*')" = 200 ] && check_json id || fail "*/*: JSON"
log "Accept: text/plain: an ID per line, BLOCK and DECODE as the text protocol, ERR lines; JSON by default and on ties"

# 1e. CORS with an allow-list: the listed origin only; preflight 204.
[ "$(get /v1/id -H "Origin: $ORIGIN")" = 200 ] && check_json id && [ "$(header Access-Control-Allow-Origin)" = "$ORIGIN" ] &&
	[ "$(header Vary)" = Origin ] || fail "CORS on GET: '$(header Access-Control-Allow-Origin)'"
[ "$(get /v1/ids -X OPTIONS -H "Origin: $ORIGIN" -H 'Access-Control-Request-Method: POST' \
	-H 'Access-Control-Request-Headers: content-type')" = 204 ] && [ ! -s "$T_DIR/body" ] &&
	[ "$(header Access-Control-Allow-Origin)" = "$ORIGIN" ] &&
	[ "$(header Access-Control-Allow-Methods)" = "GET, HEAD, POST, OPTIONS" ] &&
	[ "$(header Access-Control-Allow-Headers)" = "Content-Type, Accept" ] &&
	[ "$(header Access-Control-Max-Age)" = 600 ] || fail "preflight: $(tr -d '\r' <"$T_DIR/headers" | tr '\n' '|')"
[ "$(get /v1/ids -X OPTIONS -H 'Origin: https://evil.example' -H 'Access-Control-Request-Method: POST')" = 204 ] &&
	! grep -qi '^access-control-' "$T_DIR/headers" && [ "$(header Allow)" = "GET, HEAD, POST, OPTIONS" ] || fail "preflight of another origin"
[ "$(get /v1/id -H 'Origin: https://evil.example')" = 200 ] && check_json id && ! grep -qi '^access-control-' "$T_DIR/headers" ||
	fail "CORS headers for another origin"
[ "$(get /v1/id)" = 200 ] && check_json id && ! grep -qi '^access-control-\|^vary' "$T_DIR/headers" || fail "CORS headers without Origin"
log "CORS: $ORIGIN allowed (Allow-Origin, Vary, preflight 204 with Allow-Methods/Headers/Max-Age); others get none"

# 2. Every error status.
[ "$(get '/v1/ids?count=5000')" = 400 ] && grep -q '"code":"RANGE"' "$T_DIR/body" || fail "RANGE: $(cat "$T_DIR/body")"
[ "$(get '/v1/ids?count=abc')" = 400 ] && grep -q '"code":"BADREQ"' "$T_DIR/body" || fail "BADREQ"
[ "$(get '/v1/ids')" = 400 ] || fail "no count"
[ "$(get '/v1/decode/0')" = 400 ] && grep -q '"code":"RANGE"' "$T_DIR/body" || fail "decode 0"
[ "$(get /v1/nope)" = 404 ] || fail "404"
[ "$(get /v1/id -X DELETE)" = 405 ] && [ "$(header Allow)" = "GET, HEAD, POST, OPTIONS" ] || fail "405 /v1/id: Allow '$(header Allow)'"
[ "$(get /metrics -X POST)" = 405 ] && [ "$(header Allow)" = "GET, HEAD, OPTIONS" ] || fail "405 /metrics"
# 503 with Retry-After: a second service whose servers do not exist.
idserver_start dead $((SVC_PORT + 2)) --http_port $((SVC_PORT + 3)) --odd_port 1 --even_port 2
code=$(curl -s -o "$T_DIR/body" -D "$T_DIR/headers" -w '%{http_code}' "http://127.0.0.1:$((SVC_PORT + 3))/v1/id")
[ "$code" = 503 ] && [ -n "$(header Retry-After)" ] && grep -q '"code":"UNAVAILABLE"' "$T_DIR/body" ||
	fail "503: $code $(cat "$T_DIR/body") Retry-After '$(header Retry-After)'"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((SVC_PORT + 3))/health")" = 503 ] || fail "/health of a down service"
# CORS is off by default: no CORS header, even for a preflight.
curl -s -o /dev/null -D "$T_DIR/headers" -X OPTIONS -H "Origin: $ORIGIN" -H 'Access-Control-Request-Method: GET' \
	"http://127.0.0.1:$((SVC_PORT + 3))/v1/id"
grep -q '^HTTP/1.1 204' "$T_DIR/headers" && ! grep -qi '^access-control-' "$T_DIR/headers" || fail "CORS not off by default"
openapi down "http://127.0.0.1:$((SVC_PORT + 3))"
# 401 and 403 as documented: a service with tokens (a read-only one too), metrics closed;
# wrong tokens answered at once (test_auth checks the held reply; ~45 of them here).
TOKEN=$(openssl rand -hex 16) RO_TOKEN=$(openssl rand -hex 16)
printf 'app:%s\nmon:%s:ro\n' "$TOKEN" "$RO_TOKEN" >"$T_DIR/tokens"
chmod 600 "$T_DIR/tokens"
AUTH_PORT=$((SVC_PORT + 6)) AUTH_HTTP=$((SVC_PORT + 7))
# (PING needs a token there: idserver_start's wait would not do; /v1/openapi.json is open.)
IDGEN_DB_PASSWORD=$(cat "$T_DIR/db/db_password") "$IDSERVER" --odd_port "$ODD_PORT" --even_port "$EVEN_PORT" \
	--listen_port "$AUTH_PORT" --http_port "$AUTH_HTTP" --state_file "$T_DIR/authsvc.state" \
	--auth_tokens_file "$T_DIR/tokens" --auth_open_metrics 0 --auth_fail_delay_ms 0 >"$T_DIR/authsvc.log" 2>&1 &
PIDS+=("$!")
wait_for "the service with tokens serving an ID" 10 bash -c \
	"curl -sf -H 'Authorization: Bearer $TOKEN' http://127.0.0.1:$AUTH_HTTP/v1/id >/dev/null"
OPENAPI_TOKEN=$TOKEN OPENAPI_RO_TOKEN=$RO_TOKEN openapi auth "http://127.0.0.1:$AUTH_HTTP"
log "errors: 400 RANGE/BADREQ, 404, 405 with Allow, 503 with Retry-After"

# 3. Keep-alive: three requests, one connection.
conns=$(curl -s -w '%{num_connects} ' -o /dev/null "$URL/v1/id" -o /dev/null "$URL/v1/id" -o /dev/null "$URL/health")
[ "$conns" = "1 0 0 " ] || fail "keep-alive: connects per request '$conns'"

# 4. Raw sockets: pipelining, bounds, a trickle, garbage.
python3 - "$HP" "$IDS" <<'PY' || fail "raw HTTP"
import json, re, socket, sys, time
port, out = int(sys.argv[1]), open(sys.argv[2], "a")
def conn():
    return socket.create_connection(("127.0.0.1", port), timeout=5)
def read_all(s):
    buf = b""
    while True:
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        if not b:
            break
        buf += b
    return buf
# Three pipelined requests in one write: three replies, in order.
s = conn()
s.sendall(b"GET /v1/id HTTP/1.1\r\nHost: x\r\n\r\n" * 2 + b"GET /v1/ids?count=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
buf = read_all(s)
assert buf.count(b"HTTP/1.1 200") == 3, buf[:300]
for body in re.findall(rb"\r\n\r\n(\{[^\n]*\})\n", buf):
    d = json.loads(body)
    for i in ([d["id"]] if "id" in d else d["ids"]):
        out.write("%d 1\n" % i)
# An oversized header, then an oversized body: refused, nothing served.
for req in (b"GET /v1/id HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n",
            b"POST /v1/id HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"b" * 100000):
    s = conn()
    try:
        s.sendall(req)
    except OSError:
        pass
    buf = read_all(s)
    assert b"200 OK" not in buf, buf[:200]
    assert buf == b"" or re.match(rb"HTTP/1\.[01] (4\d\d)", buf), buf[:200]
# A request trickled one byte at a time (well within http_timeout_ms).
s = conn()
for b in b"GET /v1/id HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n":
    s.sendall(bytes([b]))
    time.sleep(0.005)
buf = read_all(s)
assert buf.startswith(b"HTTP/1.1 200"), buf[:200]
out.write("%d 1\n" % json.loads(buf.split(b"\r\n\r\n", 1)[1])["id"])
# Garbage that is not HTTP: refused or closed, never an ID.
for junk in (b"\x00\x01\x02garbage\r\n\r\n", b"ID\n", b"*1\r\n$2\r\nID\r\n", b"GET\r\n\r\n"):
    s = conn()
    s.sendall(junk)
    buf = read_all(s)
    assert b"200 OK" not in buf, (junk, buf[:200])
# ... and the service still answers.
s = conn()
s.sendall(b"GET /health HTTP/1.0\r\n\r\n")
assert re.match(rb"HTTP/1\.[01] 200", read_all(s))
print("raw: pipelined, oversized header and body, trickle, garbage", file=sys.stderr)
PY

# 4b. Error replies: every one we can answer is our JSON error (an unknown method
# too: 501, which libevent 2.1 would answer with its HTML page); the ones libevent
# answers before any callback of ours are exactly those docs/protocols.md lists,
# each with Connection: close.
python3 - "$HP" <<'PY' || fail "error replies"
import json, socket, sys
port = int(sys.argv[1])
def ask(req):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(req)
    except OSError:
        pass
    buf = b""
    while b"\r\n\r\n" not in buf or len(buf.split(b"\r\n\r\n", 1)[1]) < clen(buf):
        b = s.recv(65536)
        if not b:
            break
        buf += b
    s.close()
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    hd = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    return int(lines[0].split()[1]), hd, body
def clen(buf):
    for l in buf.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        k, v = l.split(b":", 1)
        if k.lower() == b"content-length":
            return int(v)
    return 0
ours = [(b"FOO /v1/id HTTP/1.1\r\nHost: x\r\n\r\n", 501, "unknown method"),
        (b"PROPFIND /nope HTTP/1.1\r\nHost: x\r\n\r\n", 501, "unknown method"),
        (b"PUT /v1/id HTTP/1.1\r\nHost: x\r\n\r\n", 405, "use GET, HEAD or POST"),
        (b"DELETE /health HTTP/1.1\r\nHost: x\r\n\r\n", 405, "use GET or HEAD"),
        (b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", 404, "no such path")]
for req, want, text in ours:
    st, hd, body = ask(req)
    assert st == want and hd["content-type"] == "application/json", (req, st, hd, body)
    err = json.loads(body)["error"]
    assert err["code"] in ("BADREQ", "NOTFOUND") and text in err["message"], (req, body)
    assert (want == 405) == ("allow" in hd), (req, hd)
libevent = [(b"GET /v1/id\r\n\r\n", 400),
            (b"GET /v1/id HTTP/1.1\r\nno colon\r\n\r\n", 400),
            (b"POST /v1/ids HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
            (b"GET /v1/id HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", 400),
            (b"POST /v1/ids HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 413),
            (b"POST /v1/ids HTTP/1.1\r\nExpect: later\r\nContent-Length: 2\r\n\r\n{}", 417)]
for req, want in libevent:
    st, hd, body = ask(req)
    assert st == want and hd["connection"] == "close", (req[:60], st, hd)
print("errors: unknown method 501, wrong method 405, no path 404 in JSON; "
      "libevent's own 400/413/417 as documented", file=sys.stderr)
PY

# 5. 1,000 concurrent keep-alive connections (h2load, HTTP/1.1).
h2load --h1 -c 1000 -n 20000 -t 2 "$URL/v1/id" >"$T_DIR/h2load.txt" 2>&1 || fail "h2load: $(tail -n 3 "$T_DIR/h2load.txt")"
grep -q 'status codes: 20000 2xx' "$T_DIR/h2load.txt" || fail "h2load: $(grep -E 'status codes|requests:' "$T_DIR/h2load.txt")"
log "h2load: $(grep -E '^finished in' "$T_DIR/h2load.txt")"

# 6. /metrics: clean for promtool, with the capacity gauges.
curl -s "$URL/metrics" >"$T_DIR/metrics.txt"
lint=$(promtool check metrics <"$T_DIR/metrics.txt" 2>&1) || fail "promtool: $lint"
[ -z "$lint" ] || fail "promtool lint: $lint"
for m in idgen_ids_ticket_total idgen_layout_seconds_left idgen_lease_window_seconds_left \
	'idgen_ticket_region_tickets_left{server="odd"}' 'idgen_workers_leased{server="even"}' \
	'idgen_ticket_fetch_seconds_count{server="odd"}' 'idgen_mode{mode="ticket"} 1' \
	'idgen_ticket_server_state{server="odd",state="up"} 1'; do
	grep -qF "$m" "$T_DIR/metrics.txt" || fail "/metrics lacks $m"
done
# Request latency per protocol: h2load's 20,000 requests are in the HTTP histogram,
# whose buckets rise to its count.
n=$(awk '$1 == "idgen_request_duration_seconds_count{protocol=\"http\"}" { print $2 }' "$T_DIR/metrics.txt")
[ "${n:-0}" -ge 20000 ] || fail "idgen_request_duration_seconds_count{protocol=\"http\"} is '$n', want >= 20000"
inf=$(awk '$1 == "idgen_request_duration_seconds_bucket{protocol=\"http\",le=\"+Inf\"}" { print $2 }' "$T_DIR/metrics.txt")
[ "$inf" = "$n" ] || fail "the HTTP latency histogram's +Inf bucket ($inf) is not its count ($n)"
# The metrics table of docs/protocols.md names every family.
for fam in $(awk '$1 == "#" && $2 == "TYPE" { print $3 }' "$T_DIR/metrics.txt"); do
	grep -qF "\`$fam\`" "$ROOT/docs/protocols.md" || fail "docs/protocols.md does not document metric $fam"
done
log "promtool check metrics: clean; every family in docs/protocols.md"

# 7. A real Prometheus scrapes it every second; its query API sees the IDs grow.
PP=$((SVC_PORT + 4))
cat >"$T_DIR/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: idgen
    static_configs:
      - targets: ['127.0.0.1:$HP']
YML
prometheus --config.file="$T_DIR/prometheus.yml" --storage.tsdb.path="$T_DIR/prom" \
	--web.listen-address="127.0.0.1:$PP" >"$T_DIR/prometheus.log" 2>&1 &
PIDS+=($!)
query() {
	curl -s "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
wait_for "Prometheus to scrape idserver" 30 bash -c "[ -n \"\$(curl -s 'http://127.0.0.1:$PP/api/v1/query?query=idgen_ids_ticket_total' | grep -o '\"value\"')\" ]"
v1=$(query idgen_ids_ticket_total)
for _ in $(seq 200); do echo 'IDS 1000'; done | timeout 20 nc -N 127.0.0.1 "$SVC_PORT" | awk '{ for (i = 1; i <= NF; i++) print $i, 1 }' >>"$IDS"
wait_for "the scraped counter to grow" 15 bash -c "v=\$(curl -s 'http://127.0.0.1:$PP/api/v1/query?query=idgen_ids_ticket_total' | grep -oE '\"[0-9]+\"\]' | tr -dc 0-9); [ -n \"\$v\" ] && [ \"\$v\" -ge $((v1 + 200000)) ]"
log "Prometheus: idgen_ids_ticket_total $v1 -> $(query idgen_ids_ticket_total)"

# 8. RESP on the same service, then the fallback over HTTP.
redis-cli -p "$SVC_PORT" IDS 100 | awk '{ print $1, 1 }' >>"$IDS"
kill -KILL "$(db_pid odd)" "$(db_pid even)"
wait_for "both servers down" 10 tier_down "$SVC_PORT"
drain_all "$SVC_PORT"
[ "$(get '/v1/ids?count=1000')" = 200 ] && check_json ids || fail "fallback /v1/ids: $(head -c 200 "$T_DIR/body")"
python3 - "$T_DIR/body" <<'PY' || fail "fallback IDs are not Snowflake IDs, strings only"
import json, sys
d = json.load(open(sys.argv[1]))
assert "ids" not in d and len(d["ids_str"]) == 1000, d.keys()
assert all(int(s) >= 2**53 for s in d["ids_str"]), d["ids_str"][:3]
PY
[ "$(get /v1/id)" = 200 ] && check_json id && ! grep -q '"id":' "$T_DIR/body" || fail "fallback /v1/id: $(cat "$T_DIR/body")"
[ "$(get '/v1/block?count=10')" = 200 ] && check_json block && ! grep -q '"first":' "$T_DIR/body" || fail "fallback /v1/block: $(cat "$T_DIR/body")"
sf=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["first_str"])' "$T_DIR/body")
[ "$(get "/v1/decode/$sf")" = 200 ] && grep -q "^{\"id_str\":\"$sf\",\"b58\":" "$T_DIR/body" || fail "fallback decode: $(cat "$T_DIR/body")"
[ "$(get "/v1/b58/$sf")" = 200 ] && grep -q "^{\"id_str\":\"$sf\",\"b58\":" "$T_DIR/body" || fail "fallback b58: $(cat "$T_DIR/body")"
[ "$(get /health)" = 200 ] && grep -q '"mode":"fallback"' "$T_DIR/body" || fail "fallback /health: $(cat "$T_DIR/body")"
log "fallback: Snowflake IDs over HTTP as strings only (no numeric id, ids, first)"
openapi fallback "$URL"

n=$(check_unique "$IDS") || fail "DUPLICATE IDs across HTTP, text and RESP"
log "ok: $n IDs over HTTP, text and RESP, no duplicate"
