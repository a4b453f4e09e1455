/*
 * vclock.c - virtual time for every clock of the process (vclock.h), and the
 * loop's poll without a system call when it has nothing to poll: the
 * simulated servers are timers, not sockets, so the loop registers no file
 * descriptor and its every non-blocking poll would ask the kernel for
 * nothing; a registered descriptor (none today) goes to the kernel as before
 * (docs/design.md section 14: speed).
 */
#include "vclock.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* 2026-06-01T00:00:00Z: after the Snowflake floor of docs/design.md section 1. */
#define VCLOCK_REAL_START_S	1780272000LL
#define VCLOCK_MONO_START_S	1000LL

static uint64_t vclock_us;
static long vclock_fds;	/* descriptors registered, over every epoll instance */

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

/* Registers as the kernel does, counting what is registered. */
int
epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	long r = syscall(SYS_epoll_ctl, epfd, op, fd, ev);

	if (r == 0 && op == EPOLL_CTL_ADD)
		vclock_fds++;
	else if (r == 0 && op == EPOLL_CTL_DEL)
		vclock_fds--;
	return (int)r;
}

/* A poll that may not wait, with nothing registered, finds nothing. */
int
epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	if (timeout == 0 && vclock_fds == 0)
		return 0;
	return epoll_pwait(epfd, events, maxevents, timeout, NULL);
}
