/*
 * test_seq.c - a sequence's demand (src/seq.c): the rate is a decaying peak
 * of the IDs taken, and the target lies between the floor and the ceiling in
 * blocks of the sequence's B, following rate * (lead + 2 fetch times).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "seq.h"

/* A burst raises the rate at once; idle samples let it decay by a tenth each. */
static void
test_rate_peak(void **state)
{
	struct seq_prefetch p = { 1, 1000, 1000 };
	struct seq q = { 0 };

	(void)state;
	q.taken = 1000;
	seq_sample(&q, &p, 100, 0, 1);
	assert_true(q.rate == 10000.0);
	assert_true(q.taken_mark == 1000);
	seq_sample(&q, &p, 100, 0, 1);
	assert_true(q.rate == 9000.0);
	q.taken += 2000;
	seq_sample(&q, &p, 100, 0, 1);
	assert_true(q.rate == 20000.0);
}

/* The target: the floor when idle, rate * (lead + 2F), the ceiling at most. */
static void
test_target_bounds(void **state)
{
	struct seq_prefetch p = { 2, 8, 1000 };
	struct seq q = { 0 };

	(void)state;
	seq_retarget(&q, &p, 5, 4096);
	assert_true(q.target == 2 * 4096);
	q.rate = 10000;
	seq_retarget(&q, &p, 5, 4096);
	assert_true(q.target == 10100);
	q.rate = 1e9;
	seq_retarget(&q, &p, 5, 4096);
	assert_true(q.target == 8 * 4096);
	/* A namespace's smaller B scales floor and ceiling alike. */
	seq_retarget(&q, &p, 5, 16);
	assert_true(q.target == 8 * 16);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_peak),
		cmocka_unit_test(test_target_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
