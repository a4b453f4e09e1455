/*
 * clk.c - wall and monotonic clocks, and timeval intervals.
 */
#include "clk.h"

#include <time.h>

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
clk_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
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
