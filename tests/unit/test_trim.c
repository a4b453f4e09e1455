/*
 * test_trim.c - the rule of the memory timer (trim.c): when a tick gives the
 * free heap back, fed the free and in-use byte counts a real flood goes
 * through, without malloc.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "trim.h"

#define MB	(1024u * 1024u)

static struct trim
fresh(size_t free_bytes, size_t kept)
{
	struct trim t;

	assert_true(trim_init(&t, NULL, 0, free_bytes));	/* no timer, no mallopt */
	t.kept = kept;
	return t;
}

/* A flood whose connections close over three ticks gives back all of it. */
static void
test_flood_closing_over_ticks(void **state)
{
	struct trim t = fresh(4 * MB, 1 * MB);

	(void)state;
	assert_false(trim_due(&t, 3 * MB, 60 * MB));	/* the flood runs */
	assert_true(trim_due(&t, 30 * MB, 10 * MB));	/* most of it closed */
	trim_done(&t, 30 * MB, 100);
	/* The rest: 3 MB more, under trim_free_bytes, still trimmed. */
	assert_true(trim_due(&t, 33 * MB, 1 * MB));
	trim_done(&t, 33 * MB, 50);
	/* Nothing more freed: the follow-up ends, and 1 MB later is not a flood. */
	assert_false(trim_due(&t, 33 * MB, 1 * MB));
	assert_false(trim_due(&t, 34 * MB, 1 * MB));
	assert_int_equal(t.trims, 2);
	assert_int_equal(t.trim_us_max, 100);
}

/* A quiet service is never trimmed twice for the same free heap. */
static void
test_quiet_after_trim(void **state)
{
	struct trim t = fresh(4 * MB, 0);
	int i;

	(void)state;
	assert_true(trim_due(&t, 20 * MB, 1 * MB));
	trim_done(&t, 20 * MB, 10);
	for (i = 0; i < 100; i++)
		assert_false(trim_due(&t, 20 * MB + (size_t)i, 1 * MB));
	assert_int_equal(t.trims, 1);
}

/*
 * After a trim, buffers churning at the heap's top (the free heap grows, the
 * heap in use does not shrink) are not trimmed tick after tick.
 */
static void
test_churn_after_trim(void **state)
{
	struct trim t = fresh(4 * MB, 0);
	int i;

	(void)state;
	assert_true(trim_due(&t, 20 * MB, 1 * MB));
	trim_done(&t, 19 * MB, 10);		/* the top given back */
	for (i = 1; i <= 20; i++)
		assert_false(trim_due(&t, 19 * MB + (size_t)i * 100 * 1024, 1 * MB));
	assert_int_equal(t.trims, 1);
}

/* No trim while most of the heap is in use, even right after a trim. */
static void
test_not_during_a_flood(void **state)
{
	struct trim t = fresh(4 * MB, 0);

	(void)state;
	assert_true(trim_due(&t, 20 * MB, 5 * MB));
	trim_done(&t, 20 * MB, 10);
	assert_false(trim_due(&t, 25 * MB, 13 * MB));	/* a new flood's buffers */
	assert_false(trim_due(&t, 40 * MB, 30 * MB));
}

/* Reuse lowers the mark: the next flood's growth counts from there. */
static void
test_reuse_lowers_the_mark(void **state)
{
	struct trim t = fresh(4 * MB, 20 * MB);

	(void)state;
	assert_false(trim_due(&t, 2 * MB, 18 * MB));
	assert_int_equal(t.kept, 2 * MB);
	assert_false(trim_due(&t, 5 * MB, 1 * MB));	/* grew 3 MB: not yet */
	assert_true(trim_due(&t, 7 * MB, 1 * MB));	/* grew 5 MB */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flood_closing_over_ticks),
		cmocka_unit_test(test_quiet_after_trim),
		cmocka_unit_test(test_churn_after_trim),
		cmocka_unit_test(test_not_during_a_flood),
		cmocka_unit_test(test_reuse_lowers_the_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
