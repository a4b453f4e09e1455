/*
 * reqlat.h - request latency per protocol, as Prometheus histograms
 * (idgen_request_duration_seconds{protocol=...}; docs/protocols.md).
 *
 * A request's time runs from when idserver has it (read from the socket; for
 * gRPC its HEADERS) to when its reply is handed to the connection, waits for
 * a refill or the clock included. Text and RESP time a connection's batch
 * (one read event's requests) with one clock reading at each end, so the hot
 * path pays two clock reads per batch, not per request.
 */
#ifndef IDGEN_REQLAT_H
#define IDGEN_REQLAT_H

#include <stdint.h>

enum reqlat_proto {
	REQLAT_TEXT,
	REQLAT_RESP,
	REQLAT_HTTP,
	REQLAT_GRPC,
	REQLAT_PROTOS,
};

#define REQLAT_BUCKETS	14

/* The buckets' upper bounds in microseconds (Prometheus le, as seconds). */
extern const unsigned reqlat_bounds_us[REQLAT_BUCKETS];

/* Per protocol: requests per bucket (the last: over every bound) and their sum. */
struct reqlat {
	uint64_t	hist[REQLAT_PROTOS][REQLAT_BUCKETS + 1];
	uint64_t	sum_us[REQLAT_PROTOS];
};

/* Counts n requests of protocol p that each took us microseconds. */
void	reqlat_add(enum reqlat_proto p, uint64_t us, unsigned n);

/* The histograms so far (the event loop's; read on it). */
const struct reqlat *reqlat_get(void);

/* The protocol's label value: text, resp, http or grpc. */
const char *reqlat_name(enum reqlat_proto p);

#endif
