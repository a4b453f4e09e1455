/*
 * clk.c - wall and monotonic clocks, deadlines (and a wait on a descriptor
 * until one), timeval intervals.
 * clock_gettime cannot fail on Linux for these clocks: no error path.
 */
#include "clk.h"

#include <errno.h>
#include <poll.h>

int64_t
clk_real_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
clk_real_ms(void)
{
	return clk_real_us() / 1000;
}

int64_t
clk_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLK_MONO_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
clk_mono_us(void)
{
	return clk_mono_ns() / 1000;
}

int64_t
clk_mono_ms(void)
{
	return clk_mono_us() / 1000;
}

/* Now plus ms, normalised: pthread_cond_timedwait refuses tv_nsec >= 1e9. */
struct timespec
clk_mono_deadline(uint64_t ms)
{
	struct timespec ts;

	clock_gettime(CLK_MONO_ID, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

/* A blocking wait bounded by a deadline, restarted after a signal. */
int
clk_wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd	 pfd = { .fd = fd, .events = events };
	uint64_t	 now;
	int		 n;

	for (;;) {
		now = (uint64_t)clk_mono_ms();
		if (now >= deadline)
			return 0;
		n = poll(&pfd, 1, (int)(deadline - now));
		if (n > 0)
			return 1;
		if (n == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

struct timeval
clk_tv_ms(uint64_t ms)
{
	return clk_tv_us(ms * 1000);
}

struct timeval
clk_tv_us(uint64_t us)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(us / 1000000);
	tv.tv_usec = (suseconds_t)(us % 1000000);
	return tv;
}
