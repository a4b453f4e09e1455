// gRPC with grpc-go (Debian: golang-google-grpc-dev), stubs made from the contract:
//   protoc -I proto --go_out=. --go-grpc_out=. --go_opt=Midgen.proto=idgen/idgenv1 \
//       --go-grpc_opt=Midgen.proto=idgen/idgenv1 proto/idgen.proto
// Go's int64 is exact: the int64 fields need no string form (ids_str is for JavaScript).

package main

import (
	"context"
	"time"

	"google.golang.org/grpc"

	"idgen/idgenv1"
)

func grpcIDs(target string) ([]int64, error) {
	conn, err := grpc.Dial(target, grpc.WithInsecure()) // newer grpc-go: grpc.NewClient
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c := idgenv1.NewIdGeneratorServiceClient(conn)
	one, err := c.GenerateId(ctx, &idgenv1.GenerateIdRequest{CallerService: "orders"})
	if err != nil {
		return nil, err
	}
	batch, err := c.GenerateIdBatch(ctx, &idgenv1.GenerateIdBatchRequest{Count: 1000})
	if err != nil {
		return nil, err
	}
	return append([]int64{one.GetId()}, batch.GetIds()...), nil // batch ascending
}
