/*
 * test_b58.c - the fixed-width base58 form: round trips, byte order equals
 * numeric order, and strict refusal of bad forms.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "b58.h"

static void
test_known_values(void **state)
{
	char buf[B58_LEN + 1];

	(void)state;
	b58_encode(0, buf);
	assert_string_equal(buf, "11111111111");
	b58_encode(57, buf);
	assert_string_equal(buf, "1111111111z");
	b58_encode(58, buf);
	assert_string_equal(buf, "11111111121");
	b58_encode(UINT64_C(9223372036854775807), buf);
	assert_string_equal(buf, "NQm6nKp8qFC");
}

/* Round trips and order across the whole range, sampled. */
static void
test_round_trip_and_order(void **state)
{
	char a[B58_LEN + 1], b[B58_LEN + 1];
	uint64_t x = 1, y, back;
	const char *why;
	unsigned i;

	(void)state;
	srand(7);
	for (i = 0; i < 200000; i++) {
		y = x + 1 + ((uint64_t)rand() << (i % 40));
		if (y > UINT64_C(9223372036854775807) || y <= x)
			y = x + 1;
		b58_encode(x, a);
		b58_encode(y, b);
		assert_true(strcmp(a, b) < 0);
		assert_true(b58_decode(a, B58_LEN, &back, &why));
		assert_true(back == x);
		x = y > UINT64_C(9000000000000000000) ? 1 + (uint64_t)i : y;
	}
}

static void
test_refusals(void **state)
{
	uint64_t v;
	const char *why = NULL;

	(void)state;
	assert_false(b58_decode("1111111111", 10, &v, &why));
	assert_non_null(strstr(why, "11 characters"));
	assert_false(b58_decode("111111111111", 12, &v, &why));
	assert_false(b58_decode("1111111111O", 11, &v, &why));
	assert_non_null(strstr(why, "not a base58 character"));
	assert_false(b58_decode("1111111111l", 11, &v, &why));
	assert_false(b58_decode("1111111111I", 11, &v, &why));
	assert_false(b58_decode("11111111110", 11, &v, &why));
	assert_false(b58_decode("111111111 1", 11, &v, &why));
	/* 2^63 and the largest 11-character form are above a BIGINT. */
	assert_false(b58_decode("NQm6nKp8qFD", 11, &v, &why));
	assert_non_null(strstr(why, "above 9223372036854775807"));
	assert_false(b58_decode("zzzzzzzzzzz", 11, &v, &why));
	assert_true(b58_is_form("1111111111z", 11));
	assert_false(b58_is_form("12345678901", 11));
	assert_false(b58_is_form("abc", 3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_round_trip_and_order),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
