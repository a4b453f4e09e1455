/*
 * mono.h - the monotonic clock the client's waits and retry delays run on
 * (wall clock steps must not shorten or stretch them).
 */
#ifndef IDGEN_MONO_H
#define IDGEN_MONO_H

#include <stdint.h>
#include <time.h>

/* Monotonic milliseconds. */
uint64_t	mono_now_ms(void);

/* A CLOCK_MONOTONIC deadline ms from now, for the condition variables. */
void		mono_deadline(struct timespec *ts, uint64_t ms);

#endif
