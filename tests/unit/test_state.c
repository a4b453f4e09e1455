/*
 * test_state.c - the state record (format, parse, checksum, marks in ID space,
 * the owner rule) and the state file (lock on the file itself, two slots, a
 * torn slot, a version 1 file, a corrupt file set aside), in a temp dir.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "layout.h"
#include "server.h"
#include "state.h"
#include "statefile.h"

static char tmpdir[256];

/* A record with every field set. */
static void
rec_fill(struct state_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->gen = 41;
	snprintf(r->host, sizeof(r->host), "host-1");
	snprintf(r->owner.machine, sizeof(r->owner.machine), "0123456789abcdef0123456789abcdef");
	snprintf(r->owner.boot, sizeof(r->owner.boot), "b0e1c2d3-0000-4000-8000-000000000001");
	r->owner.pidns = 4026531836u;
	r->owner.pid = 4242;
	r->owner.start = 987654;
	snprintf(r->servers, sizeof(r->servers), "odd=10.0.0.1:3306 even=10.0.0.2:3306 db=idgen");
	r->mark[SERVER_ODD].high_water = 12345;
	r->mark[SERVER_ODD].block_size = 1048576;
	snprintf(r->mark[SERVER_ODD].uuid, sizeof(r->mark[0].uuid), "a1b2");
	r->mark[SERVER_EVEN].high_water = 12346;
	r->mark[SERVER_EVEN].block_size = 1048576;
	r->lease.held = true;
	r->lease.worker = 7;
	r->lease.server = SERVER_ODD;
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
	a.mark[SERVER_ODD].uuid[0] = '\0';
	n = state_format(&a, buf, sizeof(buf));
	assert_true(state_parse(buf, n, &b, why, sizeof(why)));
	assert_false(b.lease.held);
	assert_string_equal(b.mark[SERVER_ODD].uuid, "");
	assert_true(b.mark[SERVER_EVEN].high_water == 12346);
}

/*
 * With six other regions configured, every server's mark is kept, the
 * largest record still fits one slot, and a file read under fewer other
 * regions keeps our pair's marks and the ones it still knows (docs/design.md
 * section 12.3).
 */
static void
test_other_regions_marks(void **state)
{
	unsigned others[SERVER_OTHER_MAX] = { 1, 2, 3, 4, 5, 6 }, fewer[] = { 3 };
	struct state_rec a, b;
	char buf[STATE_MAX_LEN], why[128];
	size_t n;

	(void)state;
	assert_true(server_shape_set(14, 0, 5));
	assert_true(server_others_set(others, SERVER_OTHER_MAX));
	rec_fill(&a);
	memset(a.host, 'h', sizeof(a.host) - 1);
	memset(a.servers, 's', sizeof(a.servers) - 1);
	memset(a.lease.holder, 'x', sizeof(a.lease.holder) - 1);
	a.gen = UINT64_MAX;
	a.owner.pidns = a.owner.pid = a.owner.start = UINT64_MAX;
	a.lease.window_start = a.lease.window_end = a.lease.reserved = UINT64_MAX;
	for (unsigned i = 0; i < server_count(); i++) {
		a.mark[i].high_water = (UINT64_C(1) << 53) - 1 - i;
		a.mark[i].block_size = LAYOUT_BLOCK_MAX;
		memset(a.mark[i].uuid, 'u', sizeof(a.mark[i].uuid) - 1);
	}
	n = state_format(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "\nmark even_r6 "));
	assert_true(state_parse(buf, n, &b, why, sizeof(why)));
	assert_memory_equal(&a, &b, sizeof(a));
	/* Read with only region 3 configured: region 3's marks move to its index. */
	assert_true(server_others_set(fewer, 1));
	assert_true(state_parse(buf, n, &b, why, sizeof(why)));
	assert_true(b.mark[SERVER_ODD].high_water == a.mark[SERVER_ODD].high_water);
	assert_true(b.mark[SERVER_EVEN].high_water == a.mark[SERVER_EVEN].high_water);
	assert_true(b.mark[2].high_water == a.mark[6].high_water);
	assert_true(b.mark[3].high_water == a.mark[7].high_water);
	assert_true(b.mark[4].high_water == 0);
	assert_true(server_others_set(NULL, 0));
	assert_true(server_shape_set(2, 0, 0));
}

/*
 * Servers beyond the pair (a tier of one region): every mark kept, the
 * longest record fits one slot (six other regions' pairs, the longest with
 * regions, is test_other_regions_marks); read back without the extras, our
 * pair's marks stay and the extras' lines are skipped.
 */
static void
test_extra_servers_marks(void **state)
{
	unsigned extras[SERVER_EXTRA_MAX] = { 64, 63 };
	struct state_rec a, b;
	char buf[STATE_MAX_LEN], why[128];
	size_t n;

	(void)state;
	assert_true(server_shape_set(64, 0, 0));
	assert_true(server_extras_set(extras, SERVER_EXTRA_MAX));
	assert_int_equal(server_count(), SERVER_PAIR + SERVER_EXTRA_MAX);
	rec_fill(&a);
	memset(a.host, 'h', sizeof(a.host) - 1);
	memset(a.servers, 's', sizeof(a.servers) - 1);
	memset(a.lease.holder, 'x', sizeof(a.lease.holder) - 1);
	for (unsigned i = 0; i < server_count(); i++) {
		a.mark[i].high_water = (UINT64_C(1) << 53) - 1 - i;
		a.mark[i].block_size = LAYOUT_BLOCK_MAX;
		memset(a.mark[i].uuid, 'u', sizeof(a.mark[i].uuid) - 1);
	}
	n = state_format(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "\nmark o63 "));
	assert_non_null(strstr(buf, "\nmark o64 "));
	assert_true(state_parse(buf, n, &b, why, sizeof(why)));
	assert_memory_equal(&a, &b, sizeof(a));
	assert_true(server_shape_set(64, 0, 0));	/* no extras */
	assert_true(state_parse(buf, n, &b, why, sizeof(why)));
	assert_true(b.mark[SERVER_EVEN].high_water == a.mark[SERVER_EVEN].high_water);
	assert_true(b.mark[2].high_water == 0);
	assert_true(server_shape_set(2, 0, 0));
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
		assert_true(b.mark[SERVER_ODD].high_water == 0 && !b.lease.held);
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
	/*
	 * A lease of another region still parses (its marks stay in force): the
	 * region is lease_resume's question, not the format's.
	 */
	rec_fill(&a);
	assert_true(server_shape_set(4, 1, 5));
	n = state_format(&a, buf, sizeof(buf));
	assert_true(state_parse(buf, n, &b, why, sizeof(why)));
	assert_true(b.lease.held && b.lease.worker == a.lease.worker);
	assert_false(server_owns_worker(b.lease.server, b.lease.worker));
	assert_true(server_shape_set(2, 0, 0));
}

/* Marks only go up; a new uuid is noted. */
static void
test_marks_only_rise(void **state)
{
	struct state_rec r;
	const uint64_t b = 1048576;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_true(state_raise_mark(&r, SERVER_ODD, 9, b, b, "u1"));
	assert_false(state_raise_mark(&r, SERVER_ODD, 3, b, b, "u1"));
	assert_true(r.mark[SERVER_ODD].high_water == 9 && r.mark[SERVER_ODD].block_size == b);
	assert_true(state_raise_mark(&r, SERVER_ODD, 3, b, b, "u2"));
	assert_true(r.mark[SERVER_ODD].high_water == 9);
	assert_string_equal(r.mark[SERVER_ODD].uuid, "u2");
	assert_true(state_raise_mark(&r, SERVER_EVEN, 10, 0, b, NULL));
	assert_true(r.mark[SERVER_EVEN].high_water == 10 && r.mark[SERVER_EVEN].block_size == b);
}

/*
 * A mark binds IDs, not tickets: ticket 29 at B = 2^19 starts inside the
 * blocks of tickets up to 29 at B = 2^20 (issue 16, finding 2), so under the
 * smaller B the mark is ticket 59, and a larger mark under another B is the
 * one kept.
 */
static void
test_marks_in_id_space(void **state)
{
	struct state_mark m = { 29, 1u << 20, "" }, unknown = { 29, 0, "" };
	struct state_rec r;

	(void)state;
	assert_true(state_mark_end(&m, 1u << 19) == UINT64_C(30) << 20);
	assert_true(state_mark_ticket(&m, 1u << 20) == 29);
	assert_true(state_mark_ticket(&m, 1u << 19) == 59);
	assert_true(state_mark_ticket(&m, 1u << 21) == 14);	/* block 14 holds ID 30*2^20-1 */
	assert_true(state_mark_ticket(&m, 3000000) == (UINT64_C(30) * 1048576 - 1) / 3000000);
	/* Unknown B is read as the server's. */
	assert_true(state_mark_ticket(&unknown, 1u << 19) == 29);
	/* A mark of no ticket binds nothing, whatever B. */
	memset(&m, 0, sizeof(m));
	assert_true(state_mark_ticket(&m, 4096) == 0);
	/* Raising compares covered IDs: 40 at 2^19 covers less than 29 at 2^20. */
	memset(&r, 0, sizeof(r));
	assert_true(state_raise_mark(&r, SERVER_ODD, 29, 1u << 20, 1u << 19, NULL));
	assert_false(state_raise_mark(&r, SERVER_ODD, 40, 1u << 19, 1u << 19, NULL));
	assert_true(r.mark[SERVER_ODD].high_water == 29);
	assert_true(state_raise_mark(&r, SERVER_ODD, 60, 1u << 19, 1u << 19, NULL));
	assert_true(r.mark[SERVER_ODD].high_water == 60 && r.mark[SERVER_ODD].block_size == 1u << 19);
	/* Huge values saturate instead of wrapping to a small mark. */
	m.high_water = UINT64_MAX / 2;
	m.block_size = 1u << 20;
	assert_true(state_mark_end(&m, 1u << 20) == UINT64_MAX);
}

static uint64_t fake_pid, fake_start;

/* The fake process table: exactly one process runs. */
static bool
fake_running(uint64_t pid, uint64_t start)
{
	return pid == fake_pid && start == fake_start;
}

/* The resume rule: only the same machine's provably dead previous owner. */
static void
test_owner_dead(void **state)
{
	struct state_rec r;
	struct state_owner me;
	char why[256];

	(void)state;
	rec_fill(&r);
	me = r.owner;
	me.pid = 5000;
	me.start = 999999;
	/* The previous owner still runs (a copy of a live process's file). */
	fake_pid = 4242;
	fake_start = 987654;
	assert_false(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
	assert_non_null(strstr(why, "still running"));
	/* Its pid now names another process: dead. */
	fake_start = 1;
	assert_true(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
	fake_pid = 0;
	assert_true(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
	/* Our own pid: its previous process is gone. */
	fake_pid = 4242;
	fake_start = 987654;
	me.pid = 4242;
	assert_true(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
	me.pid = 5000;
	/* Another machine: a copied file or volume. */
	me.machine[0] = 'f';
	assert_false(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
	assert_non_null(strstr(why, "another machine"));
	me.machine[0] = r.owner.machine[0];
	/* Another pid namespace this boot: a container whose twin may run. */
	me.pidns++;
	fake_pid = 0;
	assert_false(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
	assert_non_null(strstr(why, "pid namespace"));
	/* An earlier boot: every process of it is gone, whatever the namespace. */
	me.boot[0] = 'c';
	assert_true(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
	/* Unknown identities prove nothing. */
	me = r.owner;
	me.pid = 5000;
	r.owner.machine[0] = '\0';
	assert_false(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
	r.owner.machine[0] = '0';
	me.boot[0] = '\0';
	assert_false(state_owner_dead(&r.owner, &me, fake_running, why, sizeof(why)));
}

/* A version 1 record (no gen, no owner, marks without B) still gives its marks. */
static void
test_version1_read(void **state)
{
	static const char body[] = "idgen-state 1\nhost h\nservers odd=a even=b db=idgen\n"
	    "mark odd 77 u-1\nmark even 78 -\nlease 3 odd h:1:ab 3000000000 3000300000 "
	    "3000000100\n";
	char buf[STATE_MAX_LEN], why[128];
	struct state_rec r;
	uint64_t h = UINT64_C(14695981039346656037);
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(body) - 1; i++) {
		h ^= (unsigned char)body[i];
		h *= UINT64_C(1099511628211);
	}
	n = (size_t)snprintf(buf, sizeof(buf), "%scheck %016llx\n", body, (unsigned long long)h);
	assert_true(state_parse(buf, n, &r, why, sizeof(why)));
	assert_true(r.mark[SERVER_ODD].high_water == 77 && r.mark[SERVER_ODD].block_size == 0);
	assert_string_equal(r.mark[SERVER_ODD].uuid, "u-1");
	assert_true(r.lease.held && r.owner.pid == 0 && r.gen == 0);
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
	assert_non_null(strstr(err, "locked by another idserver (pid 4242)"));
	statefile_close(&g);
	statefile_close(&f);
	assert_true(statefile_open(&g, path, err, sizeof(err)));
	assert_int_equal(g.origin, STATEFILE_LOADED);
	assert_true(g.rec.mark[SERVER_ODD].high_water == 12345 && g.rec.lease.held);
	assert_true(g.rec.mark[SERVER_ODD].block_size == 1048576 && g.rec.gen == 42);
	statefile_close(&g);
}

/*
 * The lock is on the file, not on a side file a person could delete: no
 * <path>.lock exists, and renaming the file away keeps it locked.
 */
static void
test_file_lock_is_the_file(void **state)
{
	struct statefile f, g;
	char path[512], moved[600], side[600], err[512];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/c.state", tmpdir);
	snprintf(moved, sizeof(moved), "%s/c-moved.state", tmpdir);
	snprintf(side, sizeof(side), "%s.lock", path);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	rec_fill(&f.rec);
	assert_true(statefile_save(&f));
	assert_true(stat(side, &st) != 0);
	assert_true(rename(path, moved) == 0);
	assert_false(statefile_open(&g, moved, err, sizeof(err)));
	statefile_close(&g);
	statefile_close(&f);
}

/*
 * Saves alternate between two slots; a torn newest slot leaves the previous
 * record, never a mix, and the next save goes to the torn slot again.
 */
static void
test_file_torn_slot(void **state)
{
	struct statefile f;
	char path[512], err[512], junk[64];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/d.state", tmpdir);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	rec_fill(&f.rec);
	f.rec.gen = 0;
	f.rec.mark[SERVER_ODD].high_water = 100;
	assert_true(statefile_save(&f));	/* gen 1, slot 0 */
	f.rec.mark[SERVER_ODD].high_water = 200;
	assert_true(statefile_save(&f));	/* gen 2, slot 1 */
	statefile_close(&f);
	/* Tear slot 1 (the newest) in its middle. */
	memset(junk, 'x', sizeof(junk));
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_true(pwrite(fd, junk, sizeof(junk), STATE_MAX_LEN + 60) == (ssize_t)sizeof(junk));
	close(fd);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_true(f.rec.mark[SERVER_ODD].high_water == 100 && f.rec.gen == 1);
	f.rec.mark[SERVER_ODD].high_water = 300;
	assert_true(statefile_save(&f));	/* gen 2 again, over the torn slot */
	statefile_close(&f);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_true(f.rec.mark[SERVER_ODD].high_water == 300 && f.rec.gen == 2);
	statefile_close(&f);
}

/* A corrupt file is set aside and the record starts empty. */
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
	assert_true(f.rec.mark[SERVER_ODD].high_water == 0);
	snprintf(bad, sizeof(bad), "%s.corrupt", path);
	assert_true(stat(bad, &st) == 0 && st.st_size > 0);
	statefile_close(&f);
	/* Off: nothing written, saves succeed. */
	assert_true(statefile_open(&f, "", err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_OFF);
	assert_true(statefile_save(&f));
	statefile_close(&f);
}

/*
 * The real process table: a child that runs is alive by its recorded identity;
 * once it has exited and been reaped, it is provably dead.
 */
static void
test_owner_real_process(void **state)
{
	struct statefile f;
	struct state_owner child;
	char why[256], err[256];
	int up[2], hold[2], status;
	pid_t pid;

	(void)state;
	assert_true(statefile_open(&f, "", err, sizeof(err)));
	assert_true(f.me.pid == (uint64_t)getpid() && f.me.start > 0 && f.me.pidns > 0);
	if (f.me.machine[0] == '\0' || f.me.boot[0] == '\0')
		skip();		/* no machine-id here: nothing can be proven, tested above */
	assert_true(pipe(up) == 0 && pipe(hold) == 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;

		statefile_whoami(&child);
		if (write(up[1], &child, sizeof(child)) != (ssize_t)sizeof(child))
			_exit(1);
		close(hold[1]);
		(void)read(hold[0], &c, 1);	/* until the parent lets go */
		_exit(0);
	}
	close(hold[0]);
	assert_true(read(up[0], &child, sizeof(child)) == (ssize_t)sizeof(child));
	f.rec.owner = child;
	assert_false(statefile_owner_dead(&f, why, sizeof(why)));
	assert_non_null(strstr(why, "still running"));
	close(hold[1]);
	assert_true(waitpid(pid, &status, 0) == pid);
	assert_true(statefile_owner_dead(&f, why, sizeof(why)));
	close(up[0]);
	close(up[1]);
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
		cmocka_unit_test(test_other_regions_marks),
		cmocka_unit_test(test_extra_servers_marks),
		cmocka_unit_test(test_corruption_caught),
		cmocka_unit_test(test_bad_lease_refused),
		cmocka_unit_test(test_marks_only_rise),
		cmocka_unit_test(test_marks_in_id_space),
		cmocka_unit_test(test_owner_dead),
		cmocka_unit_test(test_version1_read),
		cmocka_unit_test(test_file_lock_and_reload),
		cmocka_unit_test(test_file_lock_is_the_file),
		cmocka_unit_test(test_file_torn_slot),
		cmocka_unit_test(test_file_corrupt_moved),
		cmocka_unit_test(test_owner_real_process),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
