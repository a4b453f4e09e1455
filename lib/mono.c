/*
 * mono.c - monotonic time for the client: now, and condition-variable deadlines.
 */
#include "mono.h"

/* CLOCK_MONOTONIC in ms: cannot fail on Linux, so no error path. */
uint64_t
mono_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Now plus ms, normalised: pthread_cond_timedwait refuses tv_nsec >= 1e9. */
void
mono_deadline(struct timespec *ts, uint64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}
