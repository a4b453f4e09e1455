/*
 * refill.h - a client's refill thread: it keeps the held IDs above a target
 * that follows the recent rate, one round trip at a time (docs/design.md
 * section 11.2).
 */
#ifndef IDGEN_REFILL_H
#define IDGEN_REFILL_H

#include <stdbool.h>

struct idgen_client;

/* Starts the refill thread if this process has none yet (c's mutex held). */
bool	refill_start(struct idgen_client *c) __attribute__((warn_unused_result));

#endif
