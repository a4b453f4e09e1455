/*
 * gencheck.h - the check libidgen's generator runs on each server of its
 * pair before the lease may claim there: the connect-time checks of
 * idserver's ticket tier that its lease relies on (src/check.c), so the
 * library takes a worker number only from the one lease table of its region
 * (docs/design.md sections 3.2 and 11.8).
 */
#ifndef IDGEN_GENCHECK_H
#define IDGEN_GENCHECK_H

#include <stdbool.h>

#include <event2/event.h>

#include "config.h"
#include "db.h"
#include "lease.h"
#include "server.h"

struct gencheck;

/* One server of the pair: a connection per check (the lease's stay the lease's). */
struct gencheck_server {
	struct gencheck		*k;
	unsigned		 index;
	struct db_conn		*db;
	enum lease_trust	 trust;		/* LEASE_AWAY until a check answered */
	bool			 busy;		/* a check in flight */
	bool			 answered;	/* the first check is over */
	char			 why[384];	/* a refusal's reason ("" when none) */
};

struct gencheck {
	struct gencheck_server	 s[SERVER_PAIR];
	struct config		*cfg;
	bool			 adopt;		/* the address gave no shape: the tier's */
	bool			 adopted;
	void			(*ready)(void *arg);	/* both first checks are over */
	void			*arg;
	bool			 ready_told;
};

/*
 * Sets up a connection per server (ops: the generator's seam). adopt: the
 * address named none of tier_increment, region, region_bits, so the first
 * server checked gives the shape (both must then agree with it).
 */
bool	gencheck_init(struct gencheck *k, struct event_base *base, struct config *cfg,
	    const struct db_ops *ops, bool adopt, void (*ready)(void *), void *arg);

/* Checks both servers; ready is called once both answered (or failed to). */
void	gencheck_start(struct gencheck *k);

/*
 * What the lease may do with a server's rows: trusted once its check passed,
 * distrusted after a refusal, away otherwise. A server not trusted is checked
 * again (its answer seen at the lease's next claim).
 */
enum lease_trust gencheck_trust(struct gencheck *k, unsigned server);

/* The reason a server is not trusted ("" when it is, or none is known). */
const char *gencheck_why(const struct gencheck *k, unsigned server);

void	gencheck_free(struct gencheck *k);

#endif
