// TypeScript: the same three clients, typed, as tsc --strict checks them against
// the packages' own types. Every ID is a string; BigInt(id) to compute with one.
import Redis from "ioredis";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

export async function redisIds(host: string, port: number): Promise<string[]> {
  const redis = new Redis({ host, port, stringNumbers: true });
  const id = (await redis.call("ID")) as string;      // call() returns unknown
  const ids = (await redis.call("IDS", 1000)) as string[];
  redis.disconnect();
  return [id, ...ids];
}

interface IdsBody { ids?: number[]; ids_str: string[] }   // ids only below 2^53

export async function httpIds(base: string): Promise<string[]> {
  const batch = (await (await fetch(`${base}/v1/ids?count=1000`)).json()) as IdsBody;
  return batch.ids_str;
}

// proto-loader's output is untyped: the reply's shape is declared here.
interface Batch { ids: string[]; ids_str: string[] }       // longs: String
const def = protoLoader.loadSync("proto/idgen.proto", { keepCase: true, longs: String });
const IdGeneratorService = grpc.makeGenericClientConstructor(
  def["hispeeddesign.idgen.v1.IdGeneratorService"] as grpc.ServiceDefinition,
  "IdGeneratorService");

export function grpcIds(address: string): Promise<string[]> {
  const client = new IdGeneratorService(address, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) =>
    client.GenerateIdBatch({ count: 1000, caller_service: "orders" },
      (err: grpc.ServiceError | null, res: Batch) => {
        client.close();
        if (err) reject(err);
        else resolve(res.ids);
      }));
}
