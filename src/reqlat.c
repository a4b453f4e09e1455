/*
 * reqlat.c - request latency histograms per protocol (reqlat.h).
 */
#include "reqlat.h"

/*
 * From 50 us (a buffered ID on loopback takes a few) to 1 s (clock_wait_ms):
 * refill_wait_ms (50 ms) and a ticket fetch (ms) fall inside.
 */
const unsigned reqlat_bounds_us[REQLAT_BUCKETS] = {
	50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000,
	500000, 1000000,
};

static const char *const reqlat_names[REQLAT_PROTOS] = { "text", "resp", "http", "grpc" };

/* One event loop serves every protocol: a process-wide table needs no lock. */
static struct reqlat reqlat_all;

void
reqlat_add(enum reqlat_proto p, uint64_t us, unsigned n)
{
	unsigned k;

	for (k = 0; k < REQLAT_BUCKETS && us > reqlat_bounds_us[k]; k++)
		;
	reqlat_all.hist[p][k] += n;
	reqlat_all.sum_us[p] += us * n;
}

const struct reqlat *
reqlat_get(void)
{
	return &reqlat_all;
}

const char *
reqlat_name(enum reqlat_proto p)
{
	return reqlat_names[p];
}
