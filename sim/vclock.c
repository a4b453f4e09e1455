/*
 * vclock.c - virtual time for every clock of the process (vclock.h), and the
 * loop's poll without a system call when it has nothing to poll: the
 * simulated servers are timers, not sockets, so the loop registers no file
 * descriptor and its every non-blocking poll would ask the kernel for
 * nothing; a registered descriptor (none today) goes to the kernel as before
 * (docs/design.md section 14: speed). And when a loop next has work: the
 * driver's and a region's run only at steps where a timer falls due.
 */
#include "vclock.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

/* 2026-06-01T00:00:00Z: after the Snowflake floor of docs/design.md section 1. */
#define VCLOCK_REAL_START_S	1780272000LL
#define VCLOCK_MONO_START_S	1000LL

static uint64_t vclock_us;
static long vclock_fds;	/* descriptors registered, over every epoll instance */

static int	vclock_due_cb(const struct event_base *base, const struct event *ev, void *arg);

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

/*
 * One event of a loop, for vclock_next_due: an event that waits on a file
 * descriptor or a signal cannot be foreseen (due now); a timer is due at its
 * deadline, which event_pending gives on libevent's wall clock: its monotonic
 * deadline plus the wall clock's offset, and both clocks are virtual time,
 * so that is the deadline on vclock_unix_us's clock.
 */
static int
vclock_due_cb(const struct event_base *base, const struct event *ev, void *arg)
{
	int64_t *due = arg;
	struct timeval tv;

	(void)base;
	/* Its mask, not event_pending: every event visited is added (speed, section 14). */
	if (event_get_fd(ev) >= 0 ||
	    (event_get_events(ev) & (EV_READ | EV_WRITE | EV_SIGNAL)) != 0) {
		*due = INT64_MIN;
		return 1;
	}
	if (event_pending(ev, EV_TIMEOUT, &tv) != 0) {
		int64_t at = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;

		if (at < *due)
			*due = at;
	}
	return 0;
}

int64_t
vclock_next_due(struct event_base *base)
{
	int64_t due = INT64_MAX;

	if (event_base_get_num_events(base, EVENT_BASE_COUNT_ACTIVE) > 0)
		return INT64_MIN;
	(void)event_base_foreach_event(base, vclock_due_cb, &due);
	return due;
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

struct event_base *
vclock_base_new(void)
{
	struct event_config *ec = event_config_new();
	struct event_base *base;

	if (ec == NULL)
		return NULL;
	event_config_set_flag(ec, EVENT_BASE_FLAG_IGNORE_ENV);
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	return base;
}
