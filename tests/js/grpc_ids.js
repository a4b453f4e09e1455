// gRPC with grpc-js: longs: String turns the int64 fields id and ids into
// exact decimal strings (longs: Number would round them above 2^53).
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const def = protoLoader.loadSync("proto/idgen.proto", { keepCase: true, longs: String });
const { IdGeneratorService } = grpc.loadPackageDefinition(def).hispeeddesign.idgen.v1;

async function grpcIds(address) {
  const client = new IdGeneratorService(address, grpc.credentials.createInsecure());
  const call = (method, req) => new Promise((resolve, reject) =>
    client[method](req, (err, res) => (err ? reject(err) : resolve(res))));
  const one = await call("GenerateId", { caller_service: "orders" });
  const batch = await call("GenerateIdBatch", { count: 1000, caller_service: "orders" });
  client.close();
  return [one.id, ...batch.ids];                    // strings: "1421869063", ...
}

module.exports = { grpcIds };
