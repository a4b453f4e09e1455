/*
 * round.h - one refill round: BLOCK requests to the endpoints in turn, each
 * with its share of timeout_ms, failed ones skipped with backoff, and the
 * message naming each failure (docs/design.md section 11.3).
 */
#ifndef IDGEN_ROUND_H
#define IDGEN_ROUND_H

struct idgen_client;

/*
 * One round, called without c's mutex: nblocks BLOCK requests to the first
 * usable endpoint, then the next ones on failure. Returns the blocks, in
 * c->got; records failures and the all-down state.
 */
unsigned	round_fetch(struct idgen_client *c, unsigned nblocks)
		    __attribute__((warn_unused_result));

#endif
