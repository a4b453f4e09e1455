/*
 * metrics.h - every counter and state of the service as one typed table
 * (docs/design.md section 7).
 *
 * Each row has a name, a type (counter, gauge, info), help text and a scope:
 * service-wide, one value per ticket server (label server="odd"/"even"), or
 * one per namespace (label ns).
 * STATS, RESP INFO and the HTTP /stats JSON are views of the same table, in
 * the same order.
 */
#ifndef IDGEN_METRICS_H
#define IDGEN_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum metric_type {
	METRIC_COUNTER,		/* only goes up */
	METRIC_GAUGE,		/* a number that moves both ways */
	METRIC_INFO,		/* a word: a state or a name */
};

enum metric_scope {
	METRIC_SERVICE,
	METRIC_PER_SERVER,	/* odd and even: "<role>_<name>" in STATS and INFO */
	METRIC_PER_NS,		/* each namespace known: "ns_<ns>_<name>" in STATS and
				 * INFO, label ns="<ns>" in /metrics */
};

/* How a value is shown in Prometheus: base units (seconds, unix time). */
enum metric_conv {
	METRIC_AS_IS,
	METRIC_MS,		/* milliseconds -> seconds */
	METRIC_LAYOUT_MS,	/* layout ms -> unix seconds (0 stays 0) */
};

struct metrics_src;
struct metric_value;

struct metric_def {
	const char		*name;
	enum metric_type	 type;
	enum metric_scope	 scope;
	const char		*section;	/* INFO section */
	const char		*help;
	const char		*prom;		/* family in /metrics (idgen_ prefix, _total
						 * for counters); NULL: not exported */
	enum metric_conv	 conv;
	const char		*states;	/* an info row's values (a state set), or NULL:
						 * exported as <prom>{value="..."} 1 */
	void			(*get)(const struct metrics_src *m, int server,
				    struct metric_value *v);	/* reads the value */
};

/* Where the values live; every pointer is read only. */
struct metrics_src {
	const struct listener_counters	*listener;
	const struct conn_counters	*conns;
	const struct grpc_counters	*grpc;		/* NULL while gRPC is off */
	const struct tls_counters	*tls;		/* NULL while no listener has TLS */
	struct core			*core;
	struct source			*source;
	const struct statefile		*sf;
	const struct trim		*trim;
	time_t				 started;
};

struct metric_value {
	bool		 is_text;
	uint64_t	 num;
	const char	*text;
	char		 buf[32];	/* backing store for a formatted text value */
	char		 reason[192];	/* ... and for the mode's reason */
};

/* The table, in STATS order. */
extern const struct metric_def metrics_table[];
extern const size_t metrics_count;

/*
 * One row's value; server is 0 (odd) or 1 (even) for per-server rows, the
 * namespace's index among those served for per-namespace rows.
 */
void	metrics_value(const struct metrics_src *m, size_t row, int server,
	    struct metric_value *v);

/*
 * Walks every value in order: per-server rows come as a run, all of the odd
 * server's, then all of the even server's; per-namespace rows likewise, a
 * namespace at a time. name is the flat name ("odd_tickets",
 * "ns_orders_ids_buffered"), section the INFO section.
 */
typedef void	(*metrics_fn)(const struct metric_def *def, const char *name, int server,
		    const struct metric_value *v, void *arg);
void	metrics_walk(const struct metrics_src *m, metrics_fn fn, void *arg);

/*
 * The Prometheus text exposition (0.0.4) of the table, plus the capacity
 * gauges and the ticket fetch-time histogram, into a malloc'd string (the
 * caller frees it); NULL when out of memory.
 */
char	*metrics_prometheus(const struct metrics_src *m, size_t *len);

#endif
