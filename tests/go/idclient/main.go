// The Go client of docs/clients.md (grpc_ids.go) run ROUNDS times, then the fields it
// leaves aside checked on calls of its own: id_str and ids_str equal the int64
// fields, a Snowflake ID's timestamp_ms is now, a ticket ID's is 0. Every ID must
// be positive and in the mode's region (below 2^53 for tickets, above for
// Snowflake), a batch ascending, none repeated; each is appended to DUMP as an
// "id 1" line for the test's duplicate check. One report line per part.
//
//	go-idclient MODE TARGET ROUNDS DUMP
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"

	"idgen/idgenv1"
)

const below = int64(1) << 53

// check is one mode's expectations and the IDs seen so far.
type check struct {
	ticket bool
	seen   map[int64]bool
	out    *bufio.Writer
}

// add checks one ID against the mode and the IDs before it, and records it.
func (k *check) add(who string, id int64) error {
	if id <= 0 || (id < below) != k.ticket {
		return fmt.Errorf("%s: %d is outside the region of this mode", who, id)
	}
	if k.seen[id] {
		return fmt.Errorf("%s: %d repeated", who, id)
	}
	k.seen[id] = true
	fmt.Fprintf(k.out, "%d 1\n", id)
	return nil
}

// ascending checks a batch's order, then adds its IDs.
func (k *check) batch(who string, ids []int64) error {
	for i, id := range ids {
		if i > 0 && id <= ids[i-1] {
			return fmt.Errorf("%s: batch not ascending at %d", who, i)
		}
		if err := k.add(who, id); err != nil {
			return err
		}
	}
	return nil
}

// fields calls both methods once and compares the string and time fields with
// the int64 ones.
func (k *check) fields(target string) error {
	conn, err := grpc.Dial(target, grpc.WithInsecure())
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c := idgenv1.NewIdGeneratorServiceClient(conn)
	one, err := c.GenerateId(ctx, &idgenv1.GenerateIdRequest{})
	if err != nil {
		return err
	}
	if one.GetIdStr() != strconv.FormatInt(one.GetId(), 10) {
		return fmt.Errorf("id_str %q differs from id %d", one.GetIdStr(), one.GetId())
	}
	ms, now := one.GetTimestampMs(), time.Now().UnixMilli()
	if k.ticket && ms != 0 {
		return fmt.Errorf("ticket ID %d has timestamp_ms %d", one.GetId(), ms)
	}
	if !k.ticket && (ms < now-10000 || ms > now+10000) {
		return fmt.Errorf("Snowflake ID %d has timestamp_ms %d, now is %d", one.GetId(), ms, now)
	}
	b, err := c.GenerateIdBatch(ctx, &idgenv1.GenerateIdBatchRequest{Count: 100})
	if err != nil {
		return err
	}
	if len(b.GetIds()) != 100 || len(b.GetIdsStr()) != 100 {
		return fmt.Errorf("%d ids and %d ids_str for 100", len(b.GetIds()), len(b.GetIdsStr()))
	}
	for i, id := range b.GetIds() {
		if b.GetIdsStr()[i] != strconv.FormatInt(id, 10) {
			return fmt.Errorf("ids_str[%d] %q differs from ids[%d] %d", i, b.GetIdsStr()[i], i, id)
		}
	}
	if err := k.add("GenerateId", one.GetId()); err != nil {
		return err
	}
	return k.batch("GenerateIdBatch", b.GetIds())
}

func run(mode, target string, rounds int, dump string) error {
	f, err := os.OpenFile(dump, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	k := &check{ticket: mode == "ticket", seen: map[int64]bool{}, out: bufio.NewWriter(f)}
	for r := 0; r < rounds; r++ {
		ids, err := grpcIDs(target)
		if err != nil {
			return fmt.Errorf("grpcIDs: %w", err)
		}
		if len(ids) != 1001 {
			return fmt.Errorf("grpcIDs: %d IDs, expected 1001", len(ids))
		}
		if err := k.add("grpcIDs", ids[0]); err != nil {
			return err
		}
		if err := k.batch("grpcIDs", ids[1:]); err != nil {
			return err
		}
	}
	n := len(k.seen)
	for r := 0; r < rounds; r++ {
		if err := k.fields(target); err != nil {
			return fmt.Errorf("fields: %w", err)
		}
	}
	side := "above"
	if k.ticket {
		side = "below"
	}
	fmt.Printf("%s: grpc-go: %d IDs, all %s 2^53\n", mode, n, side)
	fmt.Printf("%s: grpc-go: %d IDs, id_str/ids_str equal to the int64 fields, timestamp_ms as the mode says\n",
		mode, len(k.seen)-n)
	return k.out.Flush()
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: go-idclient MODE TARGET ROUNDS DUMP")
		os.Exit(2)
	}
	rounds, err := strconv.Atoi(os.Args[3])
	if err == nil {
		err = run(os.Args[1], os.Args[2], rounds, os.Args[4])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-idclient:", err)
		os.Exit(1)
	}
}
