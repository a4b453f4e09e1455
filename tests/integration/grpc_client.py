"""grpc_client.py - test_grpc.sh's client: Debian's grpcio with stubs that
test_grpc.sh generates from the repo's proto/ (grpc_tools.protoc) into a
directory on sys.path. Each mode prints what the test checks, or exits 1.

  grpc_client.py DIR PORT calls IDS_OUT     both RPCs, thousands of calls
  grpc_client.py DIR PORT statuses          every status code
  grpc_client.py DIR PORT deadline          DEADLINE_EXCEEDED while waiting
  grpc_client.py DIR PORT fallback IDS_OUT  Snowflake IDs, exact id_str
  grpc_client.py DIR PORT few IDS_OUT [GO]  a few calls on a new channel, each
                                            bounded by 5 s (test_grpc_flood.sh);
                                            with GO, once the file GO exists
                                            (waited for at most 120 s): grpcio
                                            loaded before, the calls start at once,
                                            "first" printed after the first
  grpc_client.py DIR PORT stall SECONDS     a request that never ends is ended by
                                            the server within SECONDS
  grpc_client.py DIR PORT first IDS_OUT [TOKEN]  one GenerateId on a new channel
                                            (5 s deadline, Bearer TOKEN if given):
                                            "first OK MS" with the milliseconds it
                                            took (test_lockout.sh), else exit 1
  grpc_client.py DIR PORT ns NAME           GenerateId and GenerateIdBatch (count 3)
                                            with metadata idgen-namespace: NAME ("-":
                                            none); one line each: "ID|BATCH CODE what"
"""
import sys
import threading
import time

sys.path.insert(0, sys.argv[1])
import grpc                      # noqa: E402
import health_pb2                # noqa: E402
import health_pb2_grpc           # noqa: E402
import idgen_pb2                 # noqa: E402
import idgen_pb2_grpc            # noqa: E402

port, mode = int(sys.argv[2]), sys.argv[3]
target = "127.0.0.1:%d" % port
EPOCH = 1767225600000


def stub(ch=None):
    return idgen_pb2_grpc.IdGeneratorServiceStub(ch or grpc.insecure_channel(target))


def code_of(fn):
    try:
        fn()
    except grpc.RpcError as e:
        return e.code(), e.details()
    return grpc.StatusCode.OK, ""


def check_one(r):
    assert r.id > 0 and str(r.id) == r.id_str, r
    if r.id >= 2**53:
        ts = (r.id >> 22) + EPOCH
        assert r.timestamp_ms == ts, (r.timestamp_ms, ts)
        w = (r.id >> 12) & 1023
        assert r.datacenter_id == w >> 5 and r.worker_id == w & 31, r
    else:
        assert r.timestamp_ms == 0 and r.datacenter_id == 0 and r.worker_id == 0, r
    return r.id


def check_batch(r, n):
    assert len(r.ids) == n and len(r.ids_str) == n, (len(r.ids), n)
    assert list(r.ids) == sorted(set(r.ids)), "not ascending and unique"
    assert all(str(i) == s for i, s in zip(r.ids, r.ids_str))
    assert r.epoch_offset_ms == EPOCH, r.epoch_offset_ms
    return list(r.ids)


if mode in ("calls", "fallback"):
    out = open(sys.argv[4], "a")
    got, lock, errors = [], threading.Lock(), []

    def work(ch, n):
        s = stub(ch)
        mine = []
        try:
            futs = [s.GenerateId.future(idgen_pb2.GenerateIdRequest(caller_service="t"))
                    for _ in range(n)]
            mine += [check_one(f.result(timeout=30)) for f in futs]
            futs = [s.GenerateIdBatch.future(idgen_pb2.GenerateIdBatchRequest(count=100))
                    for _ in range(n // 10)]
            for f in futs:
                mine += check_batch(f.result(timeout=30), 100)
        except Exception as e:          # reported below, fails the run
            errors.append(repr(e))
        with lock:
            got.extend(mine)

    shared = grpc.insecure_channel(target)
    n = 2000 if mode == "calls" else 300
    threads = [threading.Thread(target=work, args=(shared, n)) for _ in range(4)]
    threads += [threading.Thread(target=work, args=(None, n)) for _ in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    if errors:
        sys.exit("errors: %s" % errors[:3])
    assert len(got) == 8 * (n + n // 10 * 100), len(got)
    if mode == "fallback":
        assert all(i >= 2**53 for i in got), "ticket IDs while both servers are down"
    for i in got:
        out.write("%d 1\n" % i)
    h = health_pb2_grpc.HealthStub(shared).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert h.status == health_pb2.HealthCheckResponse.SERVING, h
    print("%s: %d IDs on 1 shared and 4 own channels, health SERVING" % (mode, len(got)))
elif mode == "few":
    if len(sys.argv) > 5:
        import os
        for _ in range(12000):
            if os.path.exists(sys.argv[5]):
                break
            time.sleep(0.01)
        else:
            sys.exit("few: %s never appeared" % sys.argv[5])
    s, got = stub(), []
    for i in range(200):
        got.append(check_one(s.GenerateId(idgen_pb2.GenerateIdRequest(caller_service="f"),
                                           timeout=5)))
        if i == 0 and len(sys.argv) > 5:
            print("first", flush=True)
    for _ in range(20):
        got += check_batch(s.GenerateIdBatch(idgen_pb2.GenerateIdBatchRequest(count=100),
                                             timeout=5), 100)
    with open(sys.argv[4], "a") as out:
        for i in got:
            out.write("%d 1\n" % i)
    print("few: %d IDs" % len(got))
elif mode == "stall":
    # grpcio sends the HEADERS at once, then waits for a request message that
    # never comes: only the server can end the call.
    limit, release = float(sys.argv[4]), threading.Event()

    def never():
        release.wait(60)
        return
        yield

    call = grpc.insecure_channel(target).stream_unary(
        "/hispeeddesign.idgen.v1.IdGeneratorService/GenerateId")
    t0 = time.monotonic()
    got, details = code_of(lambda: call(never(), timeout=limit + 20))
    took = time.monotonic() - t0
    release.set()
    assert got == grpc.StatusCode.DEADLINE_EXCEEDED, (got, details)
    assert "grpc_request_timeout_ms" in details, details
    assert took < limit, (took, limit)
    print("stall: %s after %.1f s (%s)" % (got.name, took, details))
elif mode == "statuses":
    s = stub()
    C = grpc.StatusCode
    cases = [
        ("count 0", lambda: s.GenerateIdBatch(idgen_pb2.GenerateIdBatchRequest(count=0)),
         C.INVALID_ARGUMENT),
        ("count 1001", lambda: s.GenerateIdBatch(idgen_pb2.GenerateIdBatchRequest(count=1001)),
         C.INVALID_ARGUMENT),
        ("count -5", lambda: s.GenerateIdBatch(idgen_pb2.GenerateIdBatchRequest(count=-5)),
         C.INVALID_ARGUMENT),
        ("unknown method", lambda: grpc.insecure_channel(target).unary_unary(
            "/hispeeddesign.idgen.v1.IdGeneratorService/Nope")(b""), C.UNIMPLEMENTED,
         "unknown method /hispeeddesign.idgen.v1.IdGeneratorService/Nope: "
         "hispeeddesign.idgen.v1.IdGeneratorService has GenerateId and GenerateIdBatch"),
        ("unknown service", lambda: grpc.insecure_channel(target).unary_unary(
            "/x.Y/Z")(b""), C.UNIMPLEMENTED,
         "unknown service x.Y: this server has hispeeddesign.idgen.v1.IdGeneratorService, "
         "grpc.health.v1.Health and reflection"),
        ("not a gRPC path", lambda: grpc.insecure_channel(target).unary_unary(
            "/GenerateId")(b""), C.UNIMPLEMENTED,
         "unknown method /GenerateId: a gRPC path is /package.Service/Method"),
        ("health Watch", lambda: list(grpc.insecure_channel(target).unary_stream(
            "/grpc.health.v1.Health/Watch")(b"")), C.UNIMPLEMENTED,
         "method /grpc.health.v1.Health/Watch is not implemented: "
         "poll /grpc.health.v1.Health/Check"),
        ("bad message", lambda: grpc.insecure_channel(target).unary_unary(
            "/hispeeddesign.idgen.v1.IdGeneratorService/GenerateIdBatch")(b"\xff\xff\xff"),
         C.INVALID_ARGUMENT),
        ("oversized message", lambda: s.GenerateId(
            idgen_pb2.GenerateIdRequest(caller_service="x" * 10000)), C.RESOURCE_EXHAUSTED),
        ("unknown health service", lambda: health_pb2_grpc.HealthStub(
            grpc.insecure_channel(target)).Check(health_pb2.HealthCheckRequest(service="x")),
         C.NOT_FOUND),
    ]
    for name, fn, want, *text in cases:
        got, details = code_of(fn)
        assert got == want, (name, got, details)
        assert not text or details == text[0], (name, details)
        print("%s: %s (%s)" % (name, got.name, details))
    r = s.GenerateIdBatch(idgen_pb2.GenerateIdBatchRequest(count=1000))
    check_batch(r, 1000)
    print("count 1000: OK")
elif mode == "ns":
    name = sys.argv[4]
    md = None if name == "-" else [("idgen-namespace", name)]
    s = stub()
    for what, fn in (("ID", lambda: [check_one(s.GenerateId(
            idgen_pb2.GenerateIdRequest(caller_service="ns"), metadata=md, timeout=5))]),
            ("BATCH", lambda: check_batch(s.GenerateIdBatch(
                idgen_pb2.GenerateIdBatchRequest(count=3, caller_service="ns"), metadata=md,
                timeout=5), 3))):
        try:
            got = fn()
            print("%s OK %s" % (what, ",".join(str(i) for i in got)))
        except grpc.RpcError as e:
            print("%s %s %s" % (what, e.code().name, e.details()))
elif mode == "first":
    md = [("authorization", "Bearer " + sys.argv[5])] if len(sys.argv) > 5 else None
    t0 = time.monotonic()
    try:
        i = check_one(stub().GenerateId(idgen_pb2.GenerateIdRequest(caller_service="first"),
                                        metadata=md, timeout=5))
    except grpc.RpcError as e:
        sys.exit("first %s %s %.0f" % (e.code().name, e.details(), (time.monotonic() - t0) * 1000))
    with open(sys.argv[4], "a") as f:
        f.write("%d 1\n" % i)
    print("first OK %.0f" % ((time.monotonic() - t0) * 1000))
elif mode == "deadline":
    got, details = code_of(lambda: stub().GenerateId(idgen_pb2.GenerateIdRequest(), timeout=0.2))
    assert got == grpc.StatusCode.DEADLINE_EXCEEDED, (got, details)
    print("deadline: %s" % got.name)
elif mode == "unavailable":
    got, details = code_of(lambda: stub().GenerateId(idgen_pb2.GenerateIdRequest(), timeout=5))
    assert got == grpc.StatusCode.UNAVAILABLE and "lease" in details, (got, details)
    h, call = health_pb2_grpc.HealthStub(grpc.insecure_channel(target)).Check.with_call(
        health_pb2.HealthCheckRequest(), timeout=5)
    assert h.status == health_pb2.HealthCheckResponse.NOT_SERVING, h
    # The response has no text field: the mode's reason rides in grpc-message.
    assert "no Snowflake lease" in (call.details() or ""), call.details()
    print("unavailable: %s (%s); health NOT_SERVING (%s)" % (got.name, details, call.details()))
else:
    sys.exit("unknown mode %s" % mode)
