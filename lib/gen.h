/*
 * gen.h - libidgen as a generator: a client opened on a mariadb:// address
 * leases a worker number from the tier itself and mints Snowflake IDs in
 * the process (docs/design.md section 11.8).
 *
 * The lease is idserver's own (src/lease.c on the database seam src/db.h),
 * run on a private event loop in the client's background thread; every
 * database callback of the lease runs under the client's mutex (genseam.c),
 * so the callers that mint (gen_take, mutex held) and the lease that moves
 * the window never race. There is no state file: a restarted process claims
 * a new window. A forked child drops its parent's generator and claims its own.
 */
#ifndef IDGEN_GEN_H
#define IDGEN_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "idgen.h"

#define GEN_SCHEME	"mariadb://"

struct gen;
struct idgen_client;

/* True when servers is a tier's address (mariadb://...), not a list of idservers. */
bool		 gen_is_url(const char *servers);

/*
 * A generator for c on url (mariadb://USER@HOST:PORT,HOST:PORT/DATABASE
 * [?setting=value&...]); the password is o->db_password, else
 * IDGEN_DB_PASSWORD. Nothing is connected yet. NULL with the reason in err.
 */
struct gen	*gen_new(struct idgen_client *c, const char *url, const struct idgen_options *o,
		    char *err, size_t errlen);

/* Frees it; the thread was joined (or never started). */
void		 gen_free(struct gen *g);

/* Sets up its loop and lease before the thread starts (c's mutex held). */
bool		 gen_start(struct gen *g) __attribute__((warn_unused_result));

/* The background thread: the lease's event loop, until gen_stop's release ends. */
void		*gen_main(void *arg);

/* Asks the thread to release the lease and end (c's mutex held). */
void		 gen_stop(struct gen *g);

/*
 * Mints up to want IDs of one millisecond (all of them, or none, with all)
 * into [*first, *first + count), c's mutex held: the count, or 0 with *rc
 * IDGEN_OK (no window now: wait for the lease with gen_wait) or an error
 * (errmsg set).
 */
unsigned	 gen_take(struct gen *g, unsigned want, bool all, uint64_t *first, int *rc);

/*
 * Waits for a lease change after a take found no window (c's mutex held,
 * the thread started by refill_start): IDGEN_OK to take again, or why not (the claim failed, the deadline passed).
 */
int		 gen_wait(struct gen *g, uint64_t *deadline);

/* In a forked child: the parent's lease and window are forgotten, never used. */
void		 gen_forked(struct gen *g);

/*
 * A list of idservers and a tier (docs/design.md 11.8), c's mutex held:
 * no idserver answered, so a thread claims and the callers mint
 * (gen_fallback_on; false when it cannot start), or one answered again, so
 * the lease is released and the thread ends (gen_fallback_off).
 */
bool		 gen_fallback_on(struct gen *g);
void		 gen_fallback_off(struct gen *g);

/* An episode runs and has not been told to end (c's mutex held). */
bool		 gen_fallback_live(const struct gen *g);

/* A claim round ended with no lease; why names the reason (c's mutex held). */
bool		 gen_failed(const struct gen *g, const char **why);

/* A count that moves at every lease callback and episode end (c's mutex held). */
uint64_t	 gen_events(const struct gen *g);

/* idgen_close of a list: its episode thread released and joined (no lock held). */
void		 gen_close(struct gen *g);

/* The lease's counters into st (c's mutex held). */
void		 gen_stats(const struct gen *g, struct idgen_stats *st);

#endif
