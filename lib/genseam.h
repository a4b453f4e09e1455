/*
 * genseam.h - the database seam (src/db.h) as libidgen's generator gives it
 * to idserver's lease code: MariaDB's, with every callback run under the
 * client's mutex (docs/design.md section 11.8).
 *
 * lease.c changes the lease and the generator's window only in the callbacks
 * of its database operations (its timer only starts operations), so callers
 * that mint under the same mutex never see a window half moved.
 */
#ifndef IDGEN_GENSEAM_H
#define IDGEN_GENSEAM_H

#include <pthread.h>

#include "db.h"

struct genseam {
	struct db_ops		 ops;	/* first: db_params.ops points at the seam */
	pthread_mutex_t		*mu;
	void			(*after)(void *arg);	/* after each callback, mutex held */
	void			*arg;
};

/* Sets up the seam: pass &s->ops to lease_init as its database. */
void	genseam_init(struct genseam *s, pthread_mutex_t *mu, void (*after)(void *), void *arg);

#endif
