/*
 * client_impl.h - the state of one libidgen client, shared by the files that
 * make it up (docs/design.md section 11): client.c opens and closes it,
 * share.c hands its IDs out, refill.c and round.c fetch them, epoch.c finds
 * a forked child (client.c resets it there). Private to lib/.
 */
#ifndef IDGEN_CLIENT_IMPL_H
#define IDGEN_CLIENT_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "client.h"
#include "held.h"
#include "wire.h"

#define LIKELY(x)		__builtin_expect(!!(x), 1)

/* One idserver of the list, and when it may be tried again. */
struct client_ep {
	struct wire	 w;
	uint64_t	 down_until;	/* monotonic ms; 0: usable */
	unsigned	 backoff_ms;
};

struct idgen_client {
	uint64_t		 serial;	/* never reused: keys thread shares */
	struct idgen_options	 o;
	pthread_mutex_t		 mu;
	pthread_cond_t		 wake;		/* the refill thread waits here */
	pthread_cond_t		 filled;	/* callers wait here */
	struct held		 held;
	uint64_t		 epoch;		/* process the state belongs to */
	bool			 thread_on;
	bool			 stopping;
	pthread_t		 thread;
	uint64_t		 want_round;	/* a caller waits for rounds to reach this */
	uint64_t		 rounds;	/* refill rounds ended */
	bool			 all_down;	/* the last round found no idserver */
	uint64_t		 retry_at;	/* ... and none is due before this */
	char			 lasterr[IDGEN_ERR_LEN];
	unsigned		 trying;	/* endpoint of the exchange in flight */
	uint64_t		 trying_since;	/* its start (ms); 0: none in flight */
	uint64_t		 taken;		/* IDs taken since rate_t */
	uint64_t		 rate_t;
	double			 rate;		/* IDs/s, smoothed */
	uint64_t		 target;	/* refill below this many held */
	struct idgen_stats	 st;
	struct client_ep	*eps;
	unsigned		 neps;
	unsigned		 cur;		/* endpoint tried first */
	struct client_transport	 tr;
	char			*auth;		/* "AUTH <token>\n", or NULL */
	struct wiretls		*tls;		/* TLS context of every endpoint; NULL: off */
	size_t			 authlen;
	char			 ns[IDGEN_NS_MAX + 1];	/* options.ns, "" when none */
	bool			 nons;		/* the last failed round: an idserver
						   said the namespace is unknown */
	char			*req;		/* max_batch BLOCK lines */
	size_t			 reqline;
	struct held_range	*got;		/* one round's blocks */
	struct idgen_client	*next_client;	/* registry, for fork handling */
	struct gen		*gen;		/* a mariadb:// address: the generator
						   (gen.c); NULL: idservers' blocks */
	bool			 hybrid;	/* idservers and a tier: the generator
						   only while none answers (11.8) */
};

#endif
