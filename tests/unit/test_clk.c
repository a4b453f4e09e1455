/*
 * test_clk.c - the clock module: intervals split into timeval fields,
 * condition-variable deadlines normalised, the units of each clock agree, a
 * descriptor's wait ends when it is ready or at its deadline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "clk.h"

static void
test_intervals(void **state)
{
	struct timeval tv;

	(void)state;
	tv = clk_tv_ms(0);
	assert_int_equal(tv.tv_sec, 0);
	assert_int_equal(tv.tv_usec, 0);
	tv = clk_tv_ms(999);
	assert_int_equal(tv.tv_sec, 0);
	assert_int_equal(tv.tv_usec, 999000);
	tv = clk_tv_ms(2500);
	assert_int_equal(tv.tv_sec, 2);
	assert_int_equal(tv.tv_usec, 500000);
	tv = clk_tv_us(1000001);
	assert_int_equal(tv.tv_sec, 1);
	assert_int_equal(tv.tv_usec, 1);
}

/* Deadlines lie ahead by the interval, with tv_nsec below one second. */
static void
test_deadline(void **state)
{
	struct timespec ts;
	int64_t before, at;
	uint64_t ms;

	(void)state;
	for (ms = 0; ms < 3000; ms += 7) {
		before = clk_mono_ns();
		ts = clk_mono_deadline(ms);
		assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
		at = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		assert_true(at >= before + (int64_t)ms * 1000000);
		assert_true(at <= clk_mono_ns() + (int64_t)ms * 1000000);
	}
}

/* ns, us and ms read one monotonic clock; real ms is Unix time. */
static void
test_units(void **state)
{
	int64_t ns, us, ms, ms2, real;

	(void)state;
	ns = clk_mono_ns();
	us = clk_mono_us();
	ms = clk_mono_ms();
	ms2 = clk_mono_ms();
	assert_true(us >= ns / 1000 && ms >= us / 1000 && ms2 >= ms);
	assert_true(ms - ns / 1000000 < 1000);
	real = clk_real_ms();
	assert_true(real / 1000 - (int64_t)time(NULL) <= 1);
	assert_true((int64_t)time(NULL) - real / 1000 <= 1);
	assert_true(clk_real_us() / 1000 >= real);
}

/* clk_wait_fd: 1 once readable, 0 at the deadline (and at once past it). */
static void
test_wait_fd(void **state)
{
	int p[2];
	int64_t before;

	(void)state;
	assert_int_equal(pipe(p), 0);
	before = clk_mono_ms();
	assert_int_equal(clk_wait_fd(p[0], POLLIN, (uint64_t)before + 30), 0);
	assert_true(clk_mono_ms() >= before + 30);
	assert_int_equal(clk_wait_fd(p[0], POLLIN, (uint64_t)before), 0);
	assert_int_equal(clk_wait_fd(p[1], POLLOUT, (uint64_t)clk_mono_ms() + 1000), 1);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(clk_wait_fd(p[0], POLLIN, (uint64_t)clk_mono_ms() + 1000), 1);
	close(p[0]);
	close(p[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_wait_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
