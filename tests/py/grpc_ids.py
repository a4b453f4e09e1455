# gRPC with grpcio (Debian: python3-grpcio python3-grpc-tools), stubs made from
# the contract:
#   python3 -m grpc_tools.protoc -I proto --python_out=. --grpc_python_out=. proto/idgen.proto
# Python ints are exact: the uint64 fields need no string form.
import grpc
import idgen_pb2
import idgen_pb2_grpc


def grpc_ids(target):
    with grpc.insecure_channel(target) as channel:
        stub = idgen_pb2_grpc.IdGeneratorServiceStub(channel)
        one = stub.GenerateId(idgen_pb2.GenerateIdRequest(caller_service="orders"), timeout=1)
        batch = stub.GenerateIdBatch(idgen_pb2.GenerateIdBatchRequest(count=1000), timeout=1)
    return [one.id, *batch.ids]                     # batch.ids ascending
