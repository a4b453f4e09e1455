"""tls_client.py - test_tls.sh's Python clients over TLS, on Debian's packages
(/usr/bin/python3: python3-redis, python3-grpcio). Each prints the IDs it got,
one per line, or exits 3 with the error when the connection is refused.

  tls_client.py redis PORT CA [CERT KEY]      redis-py, ssl=True: ID, IDS 1000
  tls_client.py grpc STUBS PORT CA [CERT KEY]  grpcio, ssl_channel_credentials:
                                              20 x GenerateId, GenerateIdBatch 1000
CERT and KEY: a client certificate (mTLS). IDGEN_TOKEN, when set, is sent as
redis-py's password (AUTH) and as gRPC's authorization metadata (Bearer).
"""
import os
import sys

TOKEN = os.environ.get("IDGEN_TOKEN")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def redis_ids(port, ca, cert=None, key=None):
    import redis
    r = redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=ca,
                    ssl_certfile=cert, ssl_keyfile=key, socket_timeout=5, password=TOKEN)
    try:
        ids = [r.execute_command("ID")] + r.execute_command("IDS", 1000)
    except (redis.ConnectionError, OSError) as e:
        print("refused: %r" % e)
        sys.exit(3)
    r.close()
    return ids


def grpc_ids(stubs, port, ca, cert=None, key=None):
    sys.path.insert(0, stubs)
    import grpc
    import idgen_pb2
    import idgen_pb2_grpc
    creds = grpc.ssl_channel_credentials(
        root_certificates=read(ca), private_key=read(key) if key else None,
        certificate_chain=read(cert) if cert else None)
    md = [("authorization", "Bearer " + TOKEN)] if TOKEN else None
    with grpc.secure_channel("127.0.0.1:%d" % port, creds) as ch:
        s = idgen_pb2_grpc.IdGeneratorServiceStub(ch)
        try:
            ids = [s.GenerateId(idgen_pb2.GenerateIdRequest(caller_service="tls"),
                                timeout=5, metadata=md).id for _ in range(20)]
            b = s.GenerateIdBatch(idgen_pb2.GenerateIdBatchRequest(count=1000), timeout=5,
                                  metadata=md)
        except grpc.RpcError as e:
            print("refused: %s %s" % (e.code(), e.details()))
            sys.exit(3)
    assert list(b.ids) == sorted(set(b.ids)) and len(b.ids) == 1000
    return ids + list(b.ids)


mode = sys.argv[1]
if mode == "redis":
    got = redis_ids(int(sys.argv[2]), *sys.argv[3:])
else:
    got = grpc_ids(sys.argv[2], int(sys.argv[3]), *sys.argv[4:])
assert all(isinstance(i, int) and i > 0 for i in got), got[:5]
print("\n".join(str(i) for i in got))
