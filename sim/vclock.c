/*
 * vclock.c - virtual time for every clock of the process (vclock.h).
 */
#include "vclock.h"

#include <sys/time.h>
#include <time.h>

/* 2026-06-01T00:00:00Z: after the Snowflake floor of docs/design.md section 1. */
#define VCLOCK_REAL_START_S	1780272000LL
#define VCLOCK_MONO_START_S	1000LL

static uint64_t vclock_us;

void
vclock_reset(void)
{
	vclock_us = 0;
}

void
vclock_advance_us(uint64_t us)
{
	vclock_us += us;
}

uint64_t
vclock_now_us(void)
{
	return vclock_us;
}

int64_t
vclock_unix_us(void)
{
	return VCLOCK_REAL_START_S * 1000000LL + (int64_t)vclock_us;
}

/* Every clock reads virtual time: realtime from a fixed date, the rest from boot. */
int
clock_gettime(clockid_t id, struct timespec *ts)
{
	long long base = id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE ?
	    VCLOCK_REAL_START_S : VCLOCK_MONO_START_S;

	ts->tv_sec = (time_t)(base + (long long)(vclock_us / 1000000));
	ts->tv_nsec = (long)(vclock_us % 1000000) * 1000;
	return 0;
}

/* libevent's wall clock, from the same virtual time. */
int
gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	(void)tz;
	tv->tv_sec = (time_t)(VCLOCK_REAL_START_S + (long long)(vclock_us / 1000000));
	tv->tv_usec = (suseconds_t)(vclock_us % 1000000);
	return 0;
}
