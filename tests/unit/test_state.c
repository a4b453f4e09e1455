/*
 * test_state.c - the state record (format, parse, checksum, marks) and the
 * state file (lock, atomic save, a corrupt file moved aside), in a temp dir.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "statefile.h"

static char tmpdir[256];

/* A record with every field set. */
static void
rec_fill(struct state_rec *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->host, sizeof(r->host), "host-1");
	snprintf(r->servers, sizeof(r->servers), "odd=10.0.0.1:3306 even=10.0.0.2:3306 db=idgen");
	r->mark[STATE_ODD].high_water = 12345;
	snprintf(r->mark[STATE_ODD].uuid, sizeof(r->mark[0].uuid), "a1b2");
	r->mark[STATE_EVEN].high_water = 12346;
	r->lease.held = true;
	r->lease.worker = 7;
	r->lease.server = STATE_ODD;
	snprintf(r->lease.holder, sizeof(r->lease.holder), "host-1:42:00ff");
	r->lease.window_start = UINT64_C(3000000000);
	r->lease.window_end = UINT64_C(3000300000);
	r->lease.reserved = UINT64_C(3000000100);
}

static void
test_round_trip(void **state)
{
	struct state_rec a, b;
	char buf[STATE_MAX_LEN], why[128];
	size_t n;

	(void)state;
	rec_fill(&a);
	n = state_format(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_true(state_parse(buf, n, &b, why, sizeof(why)));
	assert_memory_equal(&a, &b, sizeof(a));
	/* No lease, no uuid. */
	a.lease.held = false;
	a.mark[STATE_ODD].uuid[0] = '\0';
	n = state_format(&a, buf, sizeof(buf));
	assert_true(state_parse(buf, n, &b, why, sizeof(why)));
	assert_false(b.lease.held);
	assert_string_equal(b.mark[STATE_ODD].uuid, "");
	assert_true(b.mark[STATE_EVEN].high_water == 12346);
}

/* Every single-byte change and every truncation is caught, never half-read. */
static void
test_corruption_caught(void **state)
{
	struct state_rec a, b;
	char buf[STATE_MAX_LEN], copy[STATE_MAX_LEN], why[128];
	size_t n, i;

	(void)state;
	rec_fill(&a);
	n = state_format(&a, buf, sizeof(buf));
	for (i = 0; i < n; i++) {
		memcpy(copy, buf, n);
		copy[i] ^= 0x01;
		assert_false(state_parse(copy, n, &b, why, sizeof(why)));
		assert_true(b.mark[STATE_ODD].high_water == 0 && !b.lease.held);
	}
	for (i = 0; i < n; i++)
		assert_false(state_parse(buf, i, &b, why, sizeof(why)));
	assert_false(state_parse("", 0, &b, why, sizeof(why)));
}

/* A well-checksummed record with an impossible lease is still refused. */
static void
test_bad_lease_refused(void **state)
{
	struct state_rec a, b;
	char buf[STATE_MAX_LEN], why[128];
	size_t n;

	(void)state;
	rec_fill(&a);
	a.lease.worker = 8;		/* even number on the odd server */
	n = state_format(&a, buf, sizeof(buf));
	assert_false(state_parse(buf, n, &b, why, sizeof(why)));
	rec_fill(&a);
	a.lease.reserved = a.lease.window_end + 1;
	n = state_format(&a, buf, sizeof(buf));
	assert_false(state_parse(buf, n, &b, why, sizeof(why)));
	/* Names that would break the line format do not format at all. */
	rec_fill(&a);
	snprintf(a.host, sizeof(a.host), "two words");
	assert_true(state_format(&a, buf, sizeof(buf)) == 0);
}

/* Marks only go up; a new uuid is noted. */
static void
test_marks_only_rise(void **state)
{
	struct state_rec r;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_true(state_raise_mark(&r, STATE_ODD, 9, "u1"));
	assert_false(state_raise_mark(&r, STATE_ODD, 3, "u1"));
	assert_true(r.mark[STATE_ODD].high_water == 9);
	assert_true(state_raise_mark(&r, STATE_ODD, 3, "u2"));
	assert_true(r.mark[STATE_ODD].high_water == 9);
	assert_string_equal(r.mark[STATE_ODD].uuid, "u2");
	assert_true(state_raise_mark(&r, STATE_EVEN, 10, NULL));
	assert_true(r.mark[STATE_EVEN].high_water == 10);
}

/* Save, reopen, and a second opener is refused while the first holds the lock. */
static void
test_file_lock_and_reload(void **state)
{
	struct statefile f, g;
	char path[512], err[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/a.state", tmpdir);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_NEW);
	rec_fill(&f.rec);
	assert_true(statefile_save(&f));
	assert_false(statefile_open(&g, path, err, sizeof(err)));
	assert_non_null(strstr(err, "locked by another idserver"));
	statefile_close(&g);
	statefile_close(&f);
	assert_true(statefile_open(&g, path, err, sizeof(err)));
	assert_int_equal(g.origin, STATEFILE_LOADED);
	assert_true(g.rec.mark[STATE_ODD].high_water == 12345 && g.rec.lease.held);
	statefile_close(&g);
}

/* A corrupt file is moved aside and the record starts empty. */
static void
test_file_corrupt_moved(void **state)
{
	struct statefile f;
	char path[512], bad[600], err[512];
	struct stat st;
	FILE *fp;

	(void)state;
	snprintf(path, sizeof(path), "%s/b.state", tmpdir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("idgen-state 1\nhost x\nmark odd 99999\n", fp);
	fclose(fp);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_CORRUPT);
	assert_true(f.rec.mark[STATE_ODD].high_water == 0);
	snprintf(bad, sizeof(bad), "%s.corrupt", path);
	assert_true(stat(bad, &st) == 0);
	statefile_close(&f);
	/* Off: nothing written, saves succeed. */
	assert_true(statefile_open(&f, "", err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_OFF);
	assert_true(statefile_save(&f));
	statefile_close(&f);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/idgen-test-state-XXXXXX");
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_corruption_caught),
		cmocka_unit_test(test_bad_lease_refused),
		cmocka_unit_test(test_marks_only_rise),
		cmocka_unit_test(test_file_lock_and_reload),
		cmocka_unit_test(test_file_corrupt_moved),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
