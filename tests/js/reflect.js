// reflect.js - gRPC server reflection with clients nobody here wrote, and
// without proto/: grpc-js-reflection-client (npm) lists the services over
// grpc.reflection.v1alpha and v1, fetches the descriptor of idgen's service by
// symbol and by file name, builds a grpc-js client from it alone and calls
// GenerateId and GenerateIdBatch. Then one bidi stream of the v1 protocol
// (grpc-js over the reflection client package's own copy of reflection.proto)
// carries several requests, each answered before the next is sent, as grpcurl
// does, and an unknown symbol gets NOT_FOUND without ending the stream.
//
// node tests/js/reflect.js HOST GRPC_PORT OUT: appends "id 1" lines to OUT.
"use strict";
const fs = require("fs");
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const { GrpcReflection } = require("grpc-js-reflection-client");
const { FileDescriptorProto } = require("protobufjs/ext/descriptor");

const [host, port, out] = process.argv.slice(2);
const address = `${host}:${port}`;
const SERVICE = "hispeeddesign.idgen.v1.IdGeneratorService";
const EXPECTED = [SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection"];

function check(cond, what) {
  if (!cond)
    throw new Error(what);
}

// The library's calls, each on a stream of its own (write, then end).
async function viaLibrary(version) {
  const r = new GrpcReflection(address, grpc.credentials.createInsecure(), {}, version);
  const services = await r.listServices();
  check(EXPECTED.every((s) => services.includes(s)) && services.length === EXPECTED.length,
    `${version} list_services: ${services}`);
  const methods = (await r.listMethods(SERVICE)).map((m) => m.name).sort();
  check(methods.join() === "GenerateId,GenerateIdBatch", `${version} methods: ${methods}`);
  const byFile = await r.getDescriptorByFileName("idgen.proto");
  check(byFile.getProtobufJsRoot().lookupService(SERVICE), `${version} file_by_filename`);
  // The client is built from the descriptor alone.
  const pkg = (await r.getDescriptorBySymbol(SERVICE)).getPackageObject({ keepCase: true,
    longs: String });
  const Client = pkg.hispeeddesign.idgen.v1.IdGeneratorService;
  const client = new Client(address, grpc.credentials.createInsecure());
  const call = (m, req) => new Promise((resolve, reject) =>
    client[m](req, (err, res) => (err ? reject(err) : resolve(res))));
  const one = await call("GenerateId", { caller_service: "reflect" });
  const batch = await call("GenerateIdBatch", { count: 5, caller_service: "reflect" });
  client.close();
  const ids = [one.id, ...batch.ids];
  check(ids.length === 6 && ids.every((s) => typeof s === "string" && /^[1-9][0-9]*$/.test(s)),
    `${version} ids: ${ids}`);
  check(one.id === one.id_str && batch.ids.join() === batch.ids_str.join(),
    `${version}: id and id_str differ`);
  fs.appendFileSync(out, ids.map((s) => `${s} 1\n`).join(""));
  return `${version}: ${services.length} services, GenerateId ${one.id}, GenerateIdBatch 5`;
}

// One stream, several requests, each answered before the next (grpcurl's way).
async function oneStream() {
  const proto = path.join(path.dirname(require.resolve("grpc-js-reflection-client")), "..",
    "proto", "v1.proto");
  const def = protoLoader.loadSync(proto, { keepCase: true });
  const { ServerReflection } = grpc.loadPackageDefinition(def).grpc.reflection.v1;
  const client = new ServerReflection(address, grpc.credentials.createInsecure());
  const stream = client.ServerReflectionInfo();
  const answers = [];
  let waiting = null;
  stream.on("data", (d) => { answers.push(d); if (waiting) waiting(); });
  const ended = new Promise((resolve, reject) => {
    stream.on("error", reject);
    stream.on("status", (s) => (s.code === 0 ? resolve() : reject(new Error(s.details))));
  });
  const ask = (req) => new Promise((resolve) => {
    const n = answers.length;
    waiting = () => { if (answers.length > n) resolve(answers[n]); };
    stream.write({ host: "x", ...req });
  });
  const ls = await ask({ list_services: "" });
  check(ls.list_services_response.service.length === EXPECTED.length, "stream: list_services");
  check(ls.original_request.list_services === "" && ls.valid_host === "x", "stream: echo");
  const sym = await ask({ file_containing_symbol: `${SERVICE}.GenerateId` });
  const files = sym.file_descriptor_response.file_descriptor_proto.map((b) =>
    FileDescriptorProto.decode(b).name);
  check(files.join() === "idgen.proto", `stream: method symbol in ${files}`);
  const msg = await ask({ file_containing_symbol: "grpc.health.v1.HealthCheckResponse.SERVING" });
  check(msg.file_descriptor_response.file_descriptor_proto.length === 1, "stream: enum value");
  const bad = await ask({ file_containing_symbol: "no.such.Service" });
  check(bad.error_response && bad.error_response.error_code === 5, "stream: NOT_FOUND");
  const none = await ask({ file_by_filename: "nope.proto" });
  check(none.error_response && none.error_response.error_code === 5, "stream: no file");
  stream.end();
  await ended;
  client.close();
  return `one v1 stream: ${answers.length} requests answered in turn, unknown names NOT_FOUND`;
}

(async () => {
  for (const v of ["v1alpha", "v1"])
    console.log(await viaLibrary(v));
  console.log(await oneStream());
})().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
