// go-idpeer is the bench's gRPC peer (issue 22): the service of proto/idgen.proto
// as a Go shop would write it in an afternoon, on Debian's grpc-go, IDs from one
// atomic counter (no database, no lease, nothing durable: a floor for what an
// ID service in grpc-go costs per call). count outside 1..1000 is
// INVALID_ARGUMENT, as idserver answers it.
//
//	go-idpeer PORT    (listens on 127.0.0.1:PORT; SIGTERM or SIGINT ends it)
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"idgen/idgenv1"
)

// epochMs is the layout's epoch, which idserver sends as epoch_offset_ms.
const epochMs = 1767225600000

type counter struct {
	idgenv1.UnimplementedIdGeneratorServiceServer
	last atomic.Int64
}

// GenerateId hands out the next value of the counter.
func (s *counter) GenerateId(_ context.Context, _ *idgenv1.GenerateIdRequest) (*idgenv1.GenerateIdResponse, error) {
	id := s.last.Add(1)
	return &idgenv1.GenerateIdResponse{Id: id, IdStr: strconv.FormatInt(id, 10)}, nil
}

// GenerateIdBatch takes count values of the counter in one step.
func (s *counter) GenerateIdBatch(_ context.Context, in *idgenv1.GenerateIdBatchRequest) (*idgenv1.GenerateIdBatchResponse, error) {
	n := in.GetCount()
	if n < 1 || n > 1000 {
		return nil, status.Errorf(codes.InvalidArgument, "count must be 1..1000, got %d", n)
	}
	first := s.last.Add(int64(n)) - int64(n) + 1
	out := &idgenv1.GenerateIdBatchResponse{
		Ids:           make([]int64, n),
		IdsStr:        make([]string, n),
		EpochOffsetMs: epochMs,
	}
	for i := range out.Ids {
		out.Ids[i] = first + int64(i)
		out.IdsStr[i] = strconv.FormatInt(first+int64(i), 10)
	}
	return out, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go-idpeer PORT")
		os.Exit(2)
	}
	lis, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", os.Args[1]))
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-idpeer:", err)
		os.Exit(1)
	}
	s := grpc.NewServer()
	idgenv1.RegisterIdGeneratorServiceServer(s, &counter{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		s.Stop()
	}()
	if err := s.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "go-idpeer:", err)
		os.Exit(1)
	}
}
