/*
 * test_state.c - the state record (format, parse, checksum, marks in ID space,
 * the owner rule) and the state file (lock on the file itself, two slots, a
 * torn slot, a version 1 file, a corrupt file set aside), in a temp dir; the
 * writer thread (a save queued until its write ended, coalesced writes, a
 * failed write, generations in order with synchronous saves between).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "gate.h"
#include "layout.h"
#include "server.h"
#include "state.h"
#include "rules.h"
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

/* A record as this machine's idserver stamps it (main.c): a file of its own. */
static void
file_fill(struct statefile *f)
{
	rec_fill(&f->rec);
	snprintf(f->rec.owner.machine, sizeof(f->rec.owner.machine), "%s", f->me.machine);
}

static void
test_round_trip(void **state)
{
	struct state_rec a, b;
	char buf[STATE_MAX_LEN], why[128];
	size_t n;

	(void)state;
	rec_fill(&a);
	n = state_format(&a, NULL, buf, sizeof(buf));
	assert_true(n > 0);
	assert_true(state_parse(buf, n, &b, NULL, why, sizeof(why)));
	assert_memory_equal(&a, &b, sizeof(a));
	/* No lease, no uuid. */
	a.lease.held = false;
	a.mark[SERVER_ODD].uuid[0] = '\0';
	n = state_format(&a, NULL, buf, sizeof(buf));
	assert_true(state_parse(buf, n, &b, NULL, why, sizeof(why)));
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
	n = state_format(&a, NULL, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "\nmark - even_r6 "));
	assert_true(state_parse(buf, n, &b, NULL, why, sizeof(why)));
	assert_memory_equal(&a, &b, sizeof(a));
	/* Read with only region 3 configured: region 3's marks move to its index. */
	assert_true(server_others_set(fewer, 1));
	assert_true(state_parse(buf, n, &b, NULL, why, sizeof(why)));
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
	unsigned extras[SERVER_EXTRA_MAX] = { 64, 63, 62, 61, 60, 59 };
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
	n = state_format(&a, NULL, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "\nmark - o63 "));
	assert_non_null(strstr(buf, "\nmark - o64 "));
	assert_non_null(strstr(buf, "\nmark - o59 "));
	assert_true(state_parse(buf, n, &b, NULL, why, sizeof(why)));
	assert_memory_equal(&a, &b, sizeof(a));
	assert_true(server_shape_set(64, 0, 0));	/* no extras */
	assert_true(state_parse(buf, n, &b, NULL, why, sizeof(why)));
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
	n = state_format(&a, NULL, buf, sizeof(buf));
	for (i = 0; i < n; i++) {
		memcpy(copy, buf, n);
		copy[i] ^= 0x01;
		assert_false(state_parse(copy, n, &b, NULL, why, sizeof(why)));
		assert_true(b.mark[SERVER_ODD].high_water == 0 && !b.lease.held);
	}
	for (i = 0; i < n; i++)
		assert_false(state_parse(buf, i, &b, NULL, why, sizeof(why)));
	assert_false(state_parse("", 0, &b, NULL, why, sizeof(why)));
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
	n = state_format(&a, NULL, buf, sizeof(buf));
	assert_false(state_parse(buf, n, &b, NULL, why, sizeof(why)));
	rec_fill(&a);
	a.lease.reserved = a.lease.window_end + 1;
	n = state_format(&a, NULL, buf, sizeof(buf));
	assert_false(state_parse(buf, n, &b, NULL, why, sizeof(why)));
	/* Names that would break the line format do not format at all. */
	rec_fill(&a);
	snprintf(a.host, sizeof(a.host), "two words");
	assert_true(state_format(&a, NULL, buf, sizeof(buf)) == 0);
	/*
	 * A lease of another region still parses (its marks stay in force): the
	 * region is lease_resume's question, not the format's.
	 */
	rec_fill(&a);
	assert_true(server_shape_set(4, 1, 5));
	n = state_format(&a, NULL, buf, sizeof(buf));
	assert_true(state_parse(buf, n, &b, NULL, why, sizeof(why)));
	assert_true(b.lease.held && b.lease.worker == a.lease.worker);
	assert_false(server_owns_worker(b.lease.server, b.lease.worker));
	assert_true(server_shape_set(2, 0, 0));
}

/*
 * The lease's worker number is read as strictly as the record's other numbers:
 * "lease 7abc odd ..." is refused, not worker 7 (a checksum made for each text).
 */
static void
test_lease_worker_strict(void **state)
{
	static const char *const worker[] = { "7", "7abc", "7x", "7.5", "7-", "+7", " " };
	struct state_rec a, b;
	char buf[STATE_MAX_LEN], body[STATE_MAX_LEN], why[128], *at;
	uint64_t h;
	size_t i, k, n;

	(void)state;
	rec_fill(&a);
	n = state_format(&a, NULL, buf, sizeof(buf));
	at = strstr(buf, "\nlease 7 ");
	assert_non_null(at);
	for (k = 0; k < sizeof(worker) / sizeof(worker[0]); k++) {
		snprintf(body, sizeof(body), "%.*s\nlease %s%s", (int)(at - buf), buf, worker[k],
		    at + 8);
		*strstr(body, "check ") = '\0';
		h = UINT64_C(14695981039346656037);
		for (i = 0; body[i] != '\0'; i++) {
			h ^= (unsigned char)body[i];
			h *= UINT64_C(1099511628211);
		}
		n = strlen(body);
		n += (size_t)snprintf(body + n, sizeof(body) - n, "check %016llx\n",
		    (unsigned long long)h);
		assert_int_equal(state_parse(body, n, &b, NULL, why, sizeof(why)), k == 0);
		assert_true(k > 0 || (b.lease.held && b.lease.worker == 7));
	}
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
	assert_true(state_parse(buf, n, &r, NULL, why, sizeof(why)));
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
	file_fill(&f);
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
	file_fill(&f);
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
	file_fill(&f);
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
	assert_true(pwrite(fd, junk, sizeof(junk), STATEFILE_SLOT + 60) == (ssize_t)sizeof(junk));
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

/* An fdatasync that fails as a failing disk's does. */
static int
sync_eio(int fd)
{
	(void)fd;
	errno = EIO;
	return -1;
}

/*
 * A write whose fdatasync failed is not durable (rule sync-checked, design
 * 6.9): the save fails, the snapshot is not counted durable, the slot is not
 * flipped (the next save writes the same slot again), and a save that waits
 * for nothing says failed too. With the rule off (the simulation only) the
 * result is ignored.
 */
static void
test_file_sync_failed(void **state)
{
	struct statefile f;
	char path[512], err[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/sync.state", tmpdir);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	file_fill(&f);
	f.rec.gen = 0;
	f.rec.mark[SERVER_ODD].high_water = 100;
	assert_true(statefile_save(&f));	/* gen 1, slot 0 */
	assert_int_equal(f.slot, 0);
	f.datasync = sync_eio;
	f.rec.mark[SERVER_ODD].high_water = 200;
	assert_false(statefile_save(&f));	/* gen 2 */
	assert_true(f.durable_gen == 1 && f.failed_gen == 2);
	assert_int_equal(f.slot, 0);
	assert_non_null(strstr(f.last_error, "Input/output error"));
	assert_int_equal(statefile_save_then(&f, NULL, NULL, 0, 0), STATEFILE_FAILED);
	assert_true(f.durable_gen == 1 && f.failed_gen == 3);
	rules_off |= 1u << RULE_SYNC_CHECKED;
	assert_true(statefile_save(&f));	/* the rule off: taken as durable */
	rules_off = 0;
	assert_true(f.durable_gen == 4 && f.slot == 1);
	f.datasync = fdatasync;
	f.rec.mark[SERVER_ODD].high_water = 300;
	assert_true(statefile_save(&f));
	statefile_close(&f);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_true(f.rec.mark[SERVER_ODD].high_water == 300 && f.rec.gen == 5);
	statefile_close(&f);
}

/*
 * The write stamp: read back as written; any changed byte unreadable; the
 * check refuses another save, another file, and a ctime outside the slack.
 */
static void
test_stamp_check(void **state)
{
	struct state_stamp a = { 42, 0x803, 1234567, 1800000000, 5000000 }, b;
	char buf[STATE_STAMP_LEN], why[256];

	(void)state;
	assert_true(state_stamp_format(&a, buf, sizeof(buf)));
	assert_true(state_stamp_parse(buf, sizeof(buf), &b));
	assert_memory_equal(&a, &b, sizeof(a));
	for (size_t i = 0; i < strlen(buf) - 1; i++) {
		char c = buf[i];

		buf[i] = c == '1' ? '2' : '1';
		assert_false(state_stamp_parse(buf, sizeof(buf), &b));
		buf[i] = c;
	}
	assert_true(state_stamp_check(&a, 42, 0x803, 1234567, 1800000000, 5000000, 200, why,
	    sizeof(why)));
	assert_true(state_stamp_check(&a, 42, 0x803, 1234567, 1800000000, 205000000, 200, why,
	    sizeof(why)));
	assert_false(state_stamp_check(&a, 43, 0x803, 1234567, 1800000000, 5000000, 200, why,
	    sizeof(why)));
	assert_false(state_stamp_check(&a, 42, 0x803, 7654321, 1800000000, 5000000, 200, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "it is a copy"));
	assert_false(state_stamp_check(&a, 42, 0x804, 1234567, 1800000000, 5000000, 200, why,
	    sizeof(why)));
	assert_false(state_stamp_check(&a, 42, 0x803, 1234567, 1800000000, 206000000, 200, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "changed after its last write"));
	assert_false(state_stamp_check(&a, 42, 0x803, 1234567, 1799999999, 999000000, 200, why,
	    sizeof(why)));
	memset(&b, 0, sizeof(b));
	assert_false(state_stamp_check(&b, 42, 0x803, 1234567, 1800000000, 5000000, 200, why,
	    sizeof(why)));
	assert_non_null(strstr(why, "no write stamp"));
}

/* Reads the whole file at path into buf (len bytes at most); returns the length. */
static size_t
slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len);
	assert_true(n > 0);
	close(fd);
	return (size_t)n;
}

/*
 * Only the very file at its latest write is stamped: reopened untouched it
 * is; a copy (another inode) is not; older contents put back into the same
 * file (same inode, a later ctime) are not (docs/design.md 6.8, rule 4).
 */
static void
test_file_stamp(void **state)
{
	struct statefile f;
	static char old[2 * STATEFILE_SLOT], now[2 * STATEFILE_SLOT];
	char path[512], copy[512], err[512];
	struct timespec pause = { 0, 300 * 1000 * 1000 };
	size_t n_old, n_now;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/s.state", tmpdir);
	snprintf(copy, sizeof(copy), "%s/s-copy.state", tmpdir);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	file_fill(&f);
	assert_true(statefile_save(&f));
	statefile_close(&f);
	n_old = slurp(path, old, sizeof(old));
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_true(f.stamped);
	f.rec.mark[SERVER_ODD].high_water += 10;
	assert_true(statefile_save(&f));
	statefile_close(&f);
	n_now = slurp(path, now, sizeof(now));
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	if (!f.stamped)
		fail_msg("untouched file not stamped: %s", f.stamp_why);
	statefile_close(&f);
	/* A copy: the same bytes in another inode. */
	fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && write(fd, now, n_now) == (ssize_t)n_now);
	close(fd);
	assert_true(statefile_open(&f, copy, err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_false(f.stamped);
	assert_non_null(strstr(f.stamp_why, "it is a copy"));
	statefile_close(&f);
	/* Older contents put back in place, later than the slack. */
	nanosleep(&pause, NULL);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0 && pwrite(fd, old, n_old, 0) == (ssize_t)n_old);
	close(fd);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_false(f.stamped);
	assert_non_null(strstr(f.stamp_why, "changed after its last write"));
	statefile_close(&f);
}

/*
 * A record written on another machine is foreign: set aside as .foreign, the
 * process starts fresh, its marks kept apart (they refuse, never copied or
 * saved) and its namespace marks and lease unused (docs/design.md 6.8).
 */
static void
test_file_foreign(void **state)
{
	struct statefile f;
	char path[512], aside[600], err[512];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/f.state", tmpdir);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	rec_fill(&f.rec);	/* another machine's id */
	assert_true(statefile_save(&f));
	statefile_close(&f);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_FOREIGN);
	assert_non_null(strstr(f.why, "written on another machine (machine-id "
	    "0123456789abcdef0123456789abcdef"));
	assert_true(f.foreign[SERVER_ODD].high_water == 12345 &&
	    f.foreign[SERVER_EVEN].high_water == 12346);
	assert_true(f.rec.mark[SERVER_ODD].high_water == 0 && !f.rec.lease.held);
	snprintf(aside, sizeof(aside), "%s.foreign", path);
	assert_true(stat(aside, &st) == 0 && st.st_size > 0);
	assert_true(stat(path, &st) == 0 && st.st_size == 0);
	/* What this process saves holds none of the foreign marks. */
	snprintf(f.rec.host, sizeof(f.rec.host), "test");
	f.rec.owner = f.me;
	assert_true(statefile_save(&f));
	statefile_close(&f);
	assert_true(statefile_open(&f, path, err, sizeof(err)));
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_true(f.rec.mark[SERVER_ODD].high_water == 0 && f.foreign[SERVER_ODD].high_water == 0);
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

/* What the writer called back, in order. */
static struct { uint64_t tag; bool ok; } done_log[16];
static unsigned ndone;

static void
on_done(void *arg, bool ok, uint64_t a, uint64_t b)
{
	(void)arg;
	(void)b;
	assert_true(ndone < 16);
	done_log[ndone].tag = a;
	done_log[ndone].ok = ok;
	ndone++;
}

/* Runs the loop until n callbacks arrived (bounded at 5 s). */
static void
loop_until_done(struct event_base *base, unsigned n)
{
	for (int k = 0; k < 5000 && ndone < n; k++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (ndone < n)
			usleep(1000);
	}
	assert_int_equal(ndone, n);
}

/* Opens path with the gate as its sync and the writer started on base. */
static void
writer_open(struct statefile *f, const char *name, struct event_base **base)
{
	char path[512], err[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	gate_reset();
	ndone = 0;
	*base = event_base_new();
	assert_non_null(*base);
	assert_true(statefile_open(f, path, err, sizeof(err)));
	file_fill(f);
	f->rec.gen = 0;
	f->datasync = gate_sync;
	assert_true(statefile_start(f, *base, err, sizeof(err)));
}

/* The newest record on disk, as a restart reads it. */
static void
writer_reopen(struct statefile *f, const char *name)
{
	char path[512], err[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_true(statefile_open(f, path, err, sizeof(err)));
	assert_int_equal(f->origin, STATEFILE_LOADED);
}

/*
 * Saves queued while a write is held are not called back until a write
 * covering them ended; the three are called back in order, by two writes
 * (the held one and the newest snapshot), and the file holds the newest.
 */
static void
test_writer_queued_and_coalesced(void **state)
{
	struct event_base *base;
	struct statefile f;

	(void)state;
	writer_open(&f, "w1.state", &base);
	gate_set(true, 0);
	f.rec.mark[SERVER_ODD].high_water = 101;
	assert_int_equal(statefile_save_then(&f, on_done, NULL, 1, 0), STATEFILE_QUEUED);
	gate_wait_entered(1);		/* the writer holds snapshot 1 */
	f.rec.mark[SERVER_ODD].high_water = 103;
	assert_int_equal(statefile_save_then(&f, on_done, NULL, 2, 0), STATEFILE_QUEUED);
	f.rec.mark[SERVER_ODD].high_water = 105;
	assert_int_equal(statefile_save_then(&f, on_done, NULL, 3, 0), STATEFILE_QUEUED);
	for (int k = 0; k < 50; k++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(200);
	}
	assert_int_equal(ndone, 0);	/* nothing durable yet: nothing called back */
	assert_int_equal(f.durable_gen, 0);
	gate_set(false, 0);
	loop_until_done(base, 3);
	for (unsigned k = 0; k < 3; k++) {
		assert_true(done_log[k].ok);
		assert_int_equal(done_log[k].tag, k + 1);
	}
	assert_int_equal(f.stats.snapshots, 3);
	assert_int_equal(f.stats.writes, 2);	/* snapshots 2 and 3: one write */
	assert_int_equal(gate_count(), 2);
	assert_int_equal(f.durable_gen, 3);
	statefile_close(&f);
	writer_reopen(&f, "w1.state");
	assert_true(f.rec.gen == 3 && f.rec.mark[SERVER_ODD].high_water == 105);
	statefile_close(&f);
	event_base_free(base);
}

/*
 * A failed write calls back failed every save it was meant to cover; a save
 * queued behind it is covered by the next write, which succeeds, and the
 * file never holds the failed snapshot as its newest.
 */
static void
test_writer_failed_write(void **state)
{
	struct event_base *base;
	struct statefile f;

	(void)state;
	writer_open(&f, "w2.state", &base);
	f.rec.mark[SERVER_ODD].high_water = 201;
	assert_true(statefile_save(&f));			/* gen 1, durable */
	gate_set(true, EIO);
	f.rec.mark[SERVER_ODD].high_water = 203;
	assert_int_equal(statefile_save_then(&f, on_done, NULL, 1, 0), STATEFILE_QUEUED);
	gate_wait_entered(2);		/* snapshot 2 is being written, and will fail */
	f.rec.mark[SERVER_ODD].high_water = 205;
	assert_int_equal(statefile_save_then(&f, on_done, NULL, 2, 0), STATEFILE_QUEUED);
	gate_set(false, 0);		/* ... and the next write (snapshot 3) succeeds */
	loop_until_done(base, 2);
	assert_true(done_log[0].tag == 1 && !done_log[0].ok);
	assert_true(done_log[1].tag == 2 && done_log[1].ok);
	assert_int_equal(f.stats.failures, 1);
	assert_int_equal(f.failed_gen, 2);
	assert_int_equal(f.durable_gen, 3);
	/* Now a failure of the newest snapshot: called back failed, with the reason. */
	gate_set(false, EIO);
	f.rec.mark[SERVER_ODD].high_water = 207;
	assert_int_equal(statefile_save_then(&f, on_done, NULL, 3, 0), STATEFILE_QUEUED);
	loop_until_done(base, 3);
	assert_false(done_log[2].ok);
	assert_int_equal(f.failed_gen, 4);
	assert_int_equal(f.durable_gen, 3);
	assert_non_null(strstr(f.last_error, "cannot write"));
	assert_false(statefile_save(&f));		/* a synchronous save fails too */
	gate_set(false, 0);
	statefile_close(&f);
	writer_reopen(&f, "w2.state");
	assert_true(f.rec.gen >= 3 && f.rec.mark[SERVER_ODD].high_water >= 205);
	statefile_close(&f);
	event_base_free(base);
}

/*
 * Generations in order, one writer: a synchronous save (the lease's) taken
 * while queued saves wait is written after them, numbered above them, and
 * covers them; the slots alternate, so the newest and the one before it are
 * both on disk.
 */
static void
test_writer_ordered_with_sync(void **state)
{
	struct event_base *base;
	struct statefile f;
	uint64_t last = 0;

	(void)state;
	writer_open(&f, "w3.state", &base);
	for (uint64_t k = 1; k <= 6; k++) {
		f.rec.mark[SERVER_EVEN].high_water = 300 + 2 * k;
		assert_int_equal(statefile_save_then(&f, on_done, NULL, k, 0), STATEFILE_QUEUED);
		if (k % 3 == 0) {
			f.rec.lease.reserved += 100;
			assert_true(statefile_save(&f));	/* waits for its own write */
			assert_true(f.durable_gen == f.rec.gen && f.durable_gen > last);
			last = f.durable_gen;
		}
	}
	loop_until_done(base, 6);
	for (unsigned k = 0; k < 6; k++)
		assert_true(done_log[k].ok && done_log[k].tag == k + 1);
	assert_int_equal(f.rec.gen, 8);
	assert_int_equal(f.durable_gen, 8);
	statefile_close(&f);
	writer_reopen(&f, "w3.state");
	assert_int_equal(f.rec.gen, 8);
	assert_true(f.rec.mark[SERVER_EVEN].high_water == 312);
	assert_true(f.rec.lease.reserved == UINT64_C(3000000300));
	statefile_close(&f);
	event_base_free(base);
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
		cmocka_unit_test(test_lease_worker_strict),
		cmocka_unit_test(test_marks_only_rise),
		cmocka_unit_test(test_marks_in_id_space),
		cmocka_unit_test(test_owner_dead),
		cmocka_unit_test(test_version1_read),
		cmocka_unit_test(test_file_lock_and_reload),
		cmocka_unit_test(test_file_lock_is_the_file),
		cmocka_unit_test(test_file_torn_slot),
		cmocka_unit_test(test_file_sync_failed),
		cmocka_unit_test(test_file_corrupt_moved),
		cmocka_unit_test(test_file_foreign),
		cmocka_unit_test(test_stamp_check),
		cmocka_unit_test(test_file_stamp),
		cmocka_unit_test(test_owner_real_process),
		cmocka_unit_test(test_writer_queued_and_coalesced),
		cmocka_unit_test(test_writer_failed_write),
		cmocka_unit_test(test_writer_ordered_with_sync),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
