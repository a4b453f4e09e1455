/*
 * test_state_ns.c - namespace marks in the one record (docs/design.md
 * sections 13.5 and 6.10): format and parse, marks raised in ID space, a full
 * set refused, every kind of bad input refused (the version 3 lines and the
 * earlier idgen-ns record); and in the state file: saved and reopened, a
 * torn newest slot, a corrupt file set aside, files of the earlier format
 * read with every mark (and the first save leaving them whole), a version 3
 * file that the earlier code's rules refuse, and saves through the writer
 * thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "gate.h"
#include "server.h"
#include "state.h"
#include "statefile.h"

/* The earlier format: two main slots, then the namespace marks' two (6.10). */
#define OLD_SLOT	2048
#define NS_AT		(2 * OLD_SLOT)

static char tmpdir[256];

/* A set of cap marks, empty. */
static struct state_ns
ns_new(unsigned cap)
{
	struct state_ns r = { 0, cap, calloc(cap, sizeof(struct state_ns_mark)) };

	assert_non_null(r.m);
	return r;
}

/* Raises and says whether it changed anything; fails the test when refused. */
static bool
ns_raise(struct state_ns *r, const char *ns, unsigned server, uint64_t h, uint64_t b)
{
	bool changed;

	assert_true(state_ns_raise(r, ns, server, h, b, &changed));
	return changed;
}

static uint64_t
fnv(const char *s, size_t n)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* A record of body with a right checksum line, into buf. */
static size_t
ns_sealed(const char *body, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%scheck %016" PRIx64 "\n", body, fnv(body, strlen(body)));

	assert_true(n > 0 && (size_t)n < len);
	return (size_t)n;
}

/* The body parsed with a cap of 4: false with the reason, which must hold want. */
static void
ns_refused(const char *body, const char *want)
{
	struct state_ns r = ns_new(4);
	char buf[1024], why[128] = "";
	uint64_t gen = 99;
	size_t n = ns_sealed(body, buf, sizeof(buf));

	assert_false(state_ns_parse(buf, n, &r, &gen, why, sizeof(why)));
	if (strstr(why, want) == NULL)
		fail_msg("'%s': reason '%s', want '%s'", body, why, want);
	assert_true(r.n == 0 && gen == 0);
	free(r.m);
}

/* Two records, equal mark by mark. */
static void
ns_equal(const struct state_ns *a, const struct state_ns *b)
{
	assert_int_equal(a->n, b->n);
	for (unsigned i = 0; i < a->n; i++) {
		assert_string_equal(a->m[i].ns, b->m[i].ns);
		assert_int_equal(a->m[i].server, b->m[i].server);
		assert_true(a->m[i].high_water == b->m[i].high_water);
		assert_true(a->m[i].block_size == b->m[i].block_size);
	}
}

/* A record with nothing but a host and gen, as the format requires. */
static struct state_rec
rec_min(uint64_t gen)
{
	struct state_rec r;

	memset(&r, 0, sizeof(r));
	snprintf(r.host, sizeof(r.host), "h");
	r.gen = gen;
	return r;
}

/*
 * The namespaces' marks are lines of the one record, after the default's
 * ("-"); formatted and parsed back; stale bytes after the record are ignored.
 */
static void
test_ns_round_trip(void **state)
{
	struct state_ns a = ns_new(8), b = ns_new(8);
	struct state_rec r = rec_min(41), got;
	char buf[4096], why[128];
	size_t n, longer;

	(void)state;
	r.mark[SERVER_ODD].high_water = 3;
	r.mark[SERVER_ODD].block_size = 1024;
	(void)ns_raise(&a, "orders", SERVER_ODD, 12345, 1048576);
	(void)ns_raise(&a, "orders", SERVER_EVEN, 12346, 1048576);
	(void)ns_raise(&a, "Dense_1", SERVER_ODD, 7, 1);
	n = state_format(&r, &a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "idgen-state 3\ngen 41\n"));
	assert_non_null(strstr(buf, "\nmark - odd 3 1024 -\nmark - even 0 0 -\n"));
	assert_non_null(strstr(buf, "\nmark orders even 12346 1048576 -\n"));
	assert_non_null(strstr(buf, "\nmark Dense_1 odd 7 1 -\nlease none\ncheck "));
	assert_true(state_parse(buf, n, &got, &b, why, sizeof(why)));
	assert_memory_equal(&r, &got, sizeof(r));
	ns_equal(&a, &b);
	/* Not kept (NULL): still checked, the default's marks read. */
	assert_true(state_parse(buf, n, &got, NULL, why, sizeof(why)));
	assert_true(got.mark[SERVER_ODD].high_water == 3);
	/* A shorter record over a longer one: what follows its checksum line is not read. */
	longer = n;
	a.n = 1;
	r.gen = 42;
	n = state_format(&r, &a, buf, sizeof(buf));
	assert_true(n < longer);
	assert_true(state_parse(buf, longer, &got, &b, why, sizeof(why)));
	assert_true(got.gen == 42 && b.n == 1);
	assert_int_equal(state_end(buf, longer), n);
	/* No namespace marks: the default's lines alone. */
	a.n = 0;
	n = state_format(&r, &a, buf, sizeof(buf));
	assert_true(n > 0 && state_parse(buf, n, &got, &b, why, sizeof(why)) && b.n == 0);
	assert_int_equal(state_format(&r, NULL, buf, sizeof(buf)), n);
	/* Too small a buffer: 0, never a cut record. */
	assert_int_equal(state_format(&r, &a, buf, 10), 0);
	free(a.m);
	free(b.m);
}

/*
 * Marks compare in ID space: (h, b) covers IDs below (h + 1) * b. A mark
 * under another B replaces one only when it covers more; nothing lowers a
 * mark; the arithmetic saturates; each (namespace, server) is its own.
 */
static void
test_ns_raise_id_space(void **state)
{
	struct state_ns r = ns_new(8);
	const struct state_ns_mark *m;
	bool changed;

	(void)state;
	assert_null(state_ns_get(&r, "a", SERVER_ODD));
	assert_false(ns_raise(&r, "a", SERVER_ODD, 0, 1024));	/* ticket 0: no mark */
	assert_int_equal(r.n, 0);
	assert_true(ns_raise(&r, "a", SERVER_ODD, 10, 1024));	/* IDs below 11264 */
	assert_false(ns_raise(&r, "a", SERVER_ODD, 5, 1024));	/* never lowers */
	assert_false(ns_raise(&r, "a", SERVER_ODD, 10, 1024));
	assert_true(ns_raise(&r, "a", SERVER_ODD, 5, 4096));	/* 24576 > 11264 */
	m = state_ns_get(&r, "a", SERVER_ODD);
	assert_non_null(m);
	assert_true(m->high_water == 5 && m->block_size == 4096 && state_ns_end(m) == 24576);
	assert_false(ns_raise(&r, "a", SERVER_ODD, 20, 1024));	/* 21504: fewer IDs */
	assert_false(ns_raise(&r, "a", SERVER_ODD, 23, 1024));	/* 24576: the same IDs */
	assert_true(m->high_water == 5 && m->block_size == 4096);
	assert_true(ns_raise(&r, "a", SERVER_ODD, 24, 1024));	/* 25600 */
	assert_true(m->high_water == 24 && m->block_size == 1024);
	/* Other servers and namespaces are marks of their own. */
	assert_null(state_ns_get(&r, "a", SERVER_EVEN));
	assert_null(state_ns_get(&r, "b", SERVER_ODD));
	assert_null(state_ns_get(&r, "A", SERVER_ODD));
	assert_true(ns_raise(&r, "a", SERVER_EVEN, 3, 1));
	assert_true(state_ns_get(&r, "a", SERVER_ODD)->high_water == 24);
	assert_int_equal(r.n, 2);
	/* Saturation: an end past 2^64 - 1 is 2^64 - 1, and nothing covers more. */
	assert_true(ns_raise(&r, "a", SERVER_ODD, UINT64_MAX - 1, UINT64_MAX));
	m = state_ns_get(&r, "a", SERVER_ODD);
	assert_true(state_ns_end(m) == UINT64_MAX);
	assert_false(ns_raise(&r, "a", SERVER_ODD, UINT64_MAX, UINT64_MAX));
	assert_false(ns_raise(&r, "a", SERVER_ODD, UINT64_MAX / 2, 2));
	assert_true(m->high_water == UINT64_MAX - 1);
	/* Bad arguments: refused, nothing changed. */
	assert_false(state_ns_raise(&r, "a", SERVER_EVEN, 9, 0, &changed));
	assert_false(changed);
	assert_false(state_ns_raise(&r, "a-b", SERVER_ODD, 9, 1, &changed));
	assert_false(state_ns_raise(&r, "", SERVER_ODD, 9, 1, &changed));
	assert_false(state_ns_raise(&r, NULL, SERVER_ODD, 9, 1, &changed));
	assert_false(state_ns_raise(&r, "a", server_count(), 9, 1, &changed));
	assert_false(state_ns_raise(&r, "x234567890123456789012345678901234567890123456789",
	    SERVER_ODD, 9, 1, &changed));				/* 49 bytes */
	assert_true(state_ns_raise(&r, "x23456789012345678901234567890123456789012345678",
	    SERVER_ODD, 9, 1, &changed) && changed);		/* 48 */
	assert_int_equal(r.n, 3);
	assert_null(state_ns_get(&r, NULL, SERVER_ODD));
	free(r.m);
}

/*
 * A full set refuses a new mark (the caller refuses the ticket) and still
 * raises the marks it has; a record of every mark at its longest fits.
 */
static void
test_ns_full(void **state)
{
	unsigned others[] = { 30, 31 };
	struct state_ns r = ns_new(3), a, b;
	struct state_rec rec = rec_min(UINT64_MAX), got;
	char *buf, why[128], name[NS_NAME_MAX + 1];
	bool changed;
	size_t n;

	(void)state;
	assert_true(ns_raise(&r, "a", SERVER_ODD, 1, 1));
	assert_true(ns_raise(&r, "b", SERVER_ODD, 1, 1));
	assert_true(ns_raise(&r, "c", SERVER_ODD, 1, 1));
	changed = true;
	assert_false(state_ns_raise(&r, "d", SERVER_ODD, 1, 1, &changed));
	assert_false(changed);
	assert_int_equal(r.n, 3);
	assert_null(state_ns_get(&r, "d", SERVER_ODD));
	assert_true(ns_raise(&r, "b", SERVER_ODD, 2, 1));
	free(r.m);
	/* NS_MARKS_MAX marks, 48-byte names, the longest server names, 20-digit numbers. */
	assert_true(server_shape_set(64, 0, 5));
	assert_true(server_others_set(others, 2));
	memset(rec.host, 'h', sizeof(rec.host) - 1);
	memset(rec.servers, 's', sizeof(rec.servers) - 1);
	for (unsigned i = 0; i < server_count(); i++) {
		rec.mark[i].high_water = UINT64_MAX - i;
		rec.mark[i].block_size = UINT64_MAX;
		memset(rec.mark[i].uuid, 'u', sizeof(rec.mark[i].uuid) - 1);
	}
	a = ns_new(NS_MARKS_MAX + 1);
	b = ns_new(NS_MARKS_MAX + 1);
	buf = malloc(2 * STATE_MAX_LEN);
	assert_non_null(buf);
	for (unsigned i = 0; i < NS_MARKS_MAX; i++) {
		snprintf(name, sizeof(name), "%048u", i / 2);
		assert_true(ns_raise(&a, name, server_count() - 1 - i % 2, UINT64_MAX - i,
		    UINT64_MAX));
	}
	assert_false(state_ns_raise(&a, "more", SERVER_ODD, 1, 1, &changed));
	assert_true(strlen(server_name(server_count() - 1)) == 8);	/* even_r31 */
	n = state_format(&rec, &a, buf, STATE_MAX_LEN);
	assert_true(n > 0 && n < STATE_MAX_LEN);
	assert_true(state_parse(buf, n, &got, &b, why, sizeof(why)));
	assert_true(got.gen == UINT64_MAX);
	assert_memory_equal(&rec, &got, sizeof(rec));
	ns_equal(&a, &b);
	/* One more line than a record may hold is refused, whatever the caller's cap. */
	a.m[a.n] = a.m[0];
	a.m[a.n].server = SERVER_ODD;
	a.n++;
	n = state_format(&rec, &a, buf, 2 * STATE_MAX_LEN);
	assert_true(n > 0);
	assert_false(state_parse(buf, n, &got, &b, why, sizeof(why)));
	assert_non_null(strstr(why, "too many marks"));
	assert_true(b.n == 0 && got.mark[SERVER_ODD].high_water == 0);
	free(a.m);
	free(b.m);
	free(buf);
	assert_true(server_others_set(NULL, 0));
	assert_true(server_shape_set(2, 0, 0));
}

/* A version 3 record of these mark lines: refused with a reason holding want. */
static void
v3_refused(const char *marks, const char *want)
{
	struct state_ns r = ns_new(4);
	struct state_rec got;
	char body[1024], buf[1200], why[128] = "";
	size_t n;

	snprintf(body, sizeof(body), "idgen-state 3\ngen 1\nhost h\nowner - - 0 0 0\n"
	    "servers s\nmark - odd 0 0 -\nmark - even 0 0 -\n%slease none\n", marks);
	n = ns_sealed(body, buf, sizeof(buf));
	assert_false(state_parse(buf, n, &got, &r, why, sizeof(why)));
	if (strstr(why, want) == NULL)
		fail_msg("'%s': reason '%s', want '%s'", marks, why, want);
	assert_true(r.n == 0);
	free(r.m);
}

/* The version 3 mark lines refuse what the idgen-ns lines refused, and a bad sequence. */
static void
test_v3_marks_refused(void **state)
{
	(void)state;
	v3_refused("mark a-b odd 1 1 -\n", "bad namespace name near line 8");
	v3_refused("mark a foo 1 1 -\n", "unknown server name");
	v3_refused("mark a odd 1 1 u\n", "bad numbers");
	v3_refused("mark a odd 1 1\n", "bad numbers");
	v3_refused("mark a odd 0 1 -\n", "a zero mark");
	v3_refused("mark a odd 1 1 -\nmark a odd 2 1 -\n", "a second mark");
	v3_refused("mark a odd 1 1 -\nmark b odd 1 1 -\nmark c odd 1 1 -\nmark d odd 1 1 -\n"
	    "mark e odd 1 1 -\n", "too many marks");
	v3_refused("mark - odd 1 1 -\n", "malformed");	/* a second default mark of odd */
	v3_refused("nsmark a odd 1 1\n", "malformed");
	/* The pair's default marks come first: a namespace line before them is refused. */
	{
		struct state_rec got;
		char buf[512], why[128];
		size_t n = ns_sealed("idgen-state 3\ngen 1\nhost h\nowner - - 0 0 0\n"
		    "servers s\nmark a odd 1 1 -\nmark - odd 0 0 -\nmark - even 0 0 -\n"
		    "lease none\n", buf, sizeof(buf));

		assert_false(state_parse(buf, n, &got, NULL, why, sizeof(why)));
	}
}

/* Every kind of bad input is refused with a reason; nothing is half-read. */
static void
test_ns_parse_refuses(void **state)
{
	struct state_ns r = ns_new(4);
	char buf[1024], why[128];
	uint64_t gen;
	size_t n;

	(void)state;
	ns_refused("idgen-ns 1\ngen 1\nnsmark a-b odd 1 1\n", "bad namespace name on line 3");
	ns_refused("idgen-ns 1\ngen 1\nnsmark x234567890123456789012345678901234567890123456789"
	    " odd 1 1\n", "bad namespace name");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a foo 1 1\n", "unknown server name");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a o0 1 1\n", "unknown server name");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd_r32 1 1\n", "unknown server name");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd x 1\n", "bad numbers");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd -1 1\n", "bad numbers");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd 1 18446744073709551616\n", "bad numbers");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd 1 1 1\n", "bad numbers");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd 1\n", "bad numbers");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd 0 1\n", "a zero mark");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd 1 0\n", "a zero mark");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd 1 1\nnsmark a odd 2 1\n",
	    "a second mark of one namespace and server on line 4");
	ns_refused("idgen-ns 1\ngen 1\nnsmark a odd 1 1\nnsmark b odd 1 1\nnsmark c odd 1 1\n"
	    "nsmark d odd 1 1\nnsmark e odd 1 1\n", "more than 4 namespace marks (line 7)");
	ns_refused("idgen-ns 1\ngen 1\nmark odd 1 1 -\n", "malformed on line 3");
	ns_refused("idgen-ns 2\ngen 1\n", "version 2, this build reads 1");
	ns_refused("idgen-state 2\ngen 1\n", "not an idgen namespace marks record");
	ns_refused("idgen-ns 1\n", "malformed near line 2");
	ns_refused("idgen-ns 1\ngen x\n", "malformed near line 2");
	/* Checksums: missing, malformed, not matching. */
	assert_false(state_ns_parse("idgen-ns 1\ngen 1\n", 17, &r, &gen, why, sizeof(why)));
	assert_non_null(strstr(why, "no checksum line"));
	n = ns_sealed("idgen-ns 1\ngen 1\nnsmark a odd 1 1\n", buf, sizeof(buf));
	assert_true(state_ns_parse(buf, n, &r, &gen, why, sizeof(why)) && r.n == 1);
	buf[n - 2] = 'G';
	assert_false(state_ns_parse(buf, n, &r, &gen, why, sizeof(why)));
	assert_non_null(strstr(why, "bad checksum line"));
	assert_true(r.n == 0);
	assert_false(state_ns_parse(buf, n - 1, &r, &gen, why, sizeof(why)));
	assert_non_null(strstr(why, "bad checksum line"));
	n = ns_sealed("idgen-ns 1\ngen 1\nnsmark a odd 1 1\n", buf, sizeof(buf));
	for (size_t i = 0; i + 24 < n; i++) {
		buf[i] ^= 0x01;
		assert_false(state_ns_parse(buf, n, &r, &gen, why, sizeof(why)));
		buf[i] ^= 0x01;
	}
	for (size_t k = 0; k < n; k++)
		assert_false(state_ns_parse(buf, k, &r, &gen, why, sizeof(why)));
	free(r.m);
}

/*
 * A mark of a server this idserver no longer configures (a well-formed name)
 * is skipped, as the main record does (docs/design.md section 12.3); a
 * configured one is read.
 */
static void
test_ns_parse_unconfigured_server(void **state)
{
	unsigned extras[] = { 5 };
	struct state_ns r = ns_new(4);
	char buf[1024], why[128];
	uint64_t gen;
	size_t n;

	(void)state;
	n = ns_sealed("idgen-ns 1\ngen 3\nnsmark a o5 9 1\nnsmark a even_r1 9 1\n"
	    "nsmark a even 8 2\n", buf, sizeof(buf));
	assert_true(state_ns_parse(buf, n, &r, &gen, why, sizeof(why)));
	assert_true(r.n == 1 && r.m[0].server == SERVER_EVEN && gen == 3);
	assert_true(server_shape_set(8, 0, 0));
	assert_true(server_extras_set(extras, 1));
	assert_true(state_ns_parse(buf, n, &r, &gen, why, sizeof(why)));
	assert_int_equal(r.n, 2);
	assert_true(state_ns_get(&r, "a", 2)->high_water == 9);
	assert_true(server_extras_set(NULL, 0));
	assert_true(server_shape_set(2, 0, 0));
	free(r.m);
}

/* The test's path for a file name. */
static void
path_of(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", tmpdir, name);
}

/* Opens name, which must load (or be new), with a pid in the record. */
static void
sf_open(struct statefile *f, const char *name)
{
	char path[512], err[512];

	path_of(path, sizeof(path), name);
	if (!statefile_open(f, path, err, sizeof(err)))
		fail_msg("open %s: %s", path, err);
	snprintf(f->rec.host, sizeof(f->rec.host), "host-1");
	f->rec.owner.pid = 4242;
}

static off_t
size_of(const char *name)
{
	char path[512];
	struct stat st;

	path_of(path, sizeof(path), name);
	assert_true(stat(path, &st) == 0);
	return st.st_size;
}

/* Writes junk over n bytes at off. */
static void
tear(const char *name, off_t off, size_t n)
{
	char path[512], junk[256];
	int fd;

	path_of(path, sizeof(path), name);
	memset(junk, 'x', sizeof(junk));
	assert_true(n <= sizeof(junk));
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_true(pwrite(fd, junk, n, off) == (ssize_t)n);
	close(fd);
}

/* The whole file, into a buffer of the caller's (freed by it); its length in *n. */
static char *
slurp(const char *name, size_t *n)
{
	char path[512], *buf = malloc(2 * STATEFILE_SLOT + 1);
	FILE *fp;

	path_of(path, sizeof(path), name);
	fp = fopen(path, "r");
	assert_true(buf != NULL && fp != NULL);
	*n = fread(buf, 1, 2 * STATEFILE_SLOT + 1, fp);
	fclose(fp);
	return buf;
}

/*
 * Saved marks, the default's and the namespaces', come back at the next open
 * from the one record; the first save writes slot 0 (a small file), the
 * second slot 1, at STATEFILE_SLOT.
 */
static void
test_ns_file_reopen(void **state)
{
	struct statefile f;

	(void)state;
	sf_open(&f, "n1.state");
	assert_int_equal(f.origin, STATEFILE_NEW);
	assert_int_equal(f.ns_origin, STATEFILE_NEW);
	f.rec.mark[SERVER_ODD].high_water = 77;
	assert_true(statefile_save(&f));
	statefile_close(&f);
	assert_true(size_of("n1.state") < OLD_SLOT);	/* the record and its stamp */
	sf_open(&f, "n1.state");
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_int_equal(f.ns_origin, STATEFILE_NEW);
	assert_true(f.stamped);
	assert_true(f.ns.n == 0 && f.ns.cap == NS_MARKS_MAX);
	assert_true(ns_raise(&f.ns, "orders", SERVER_EVEN, 500, 1024));
	assert_true(ns_raise(&f.ns, "users", SERVER_ODD, 9, 1));
	assert_true(statefile_save(&f));
	statefile_close(&f);
	assert_true(size_of("n1.state") > STATEFILE_SLOT &&
	    size_of("n1.state") < STATEFILE_SLOT + OLD_SLOT);
	sf_open(&f, "n1.state");
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_int_equal(f.ns_origin, STATEFILE_LOADED);
	assert_true(f.stamped);
	assert_true(f.rec.mark[SERVER_ODD].high_water == 77 && f.rec.gen == 2 && f.slot == 1);
	assert_true(f.ns.n == 2);
	assert_true(state_ns_get(&f.ns, "orders", SERVER_EVEN)->high_water == 500);
	assert_true(state_ns_get(&f.ns, "users", SERVER_ODD)->block_size == 1);
	statefile_close(&f);
	/* Off: marks are kept in memory, saves write nothing and succeed. */
	assert_true(statefile_open(&f, "", (char[64]){ 0 }, 64));
	assert_int_equal(f.ns_origin, STATEFILE_OFF);
	assert_true(ns_raise(&f.ns, "orders", SERVER_EVEN, 5, 1));
	assert_true(statefile_save(&f));
	statefile_close(&f);
}

/*
 * A torn newest slot falls back to the other, the default's and the
 * namespaces' marks together; the next save goes over the torn slot, never
 * over the only valid record: tear that one too and the older record loads.
 */
static void
test_ns_file_torn_slot(void **state)
{
	struct statefile f;

	(void)state;
	sf_open(&f, "n2.state");
	f.rec.mark[SERVER_ODD].high_water = 1;
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 100, 8));
	assert_true(statefile_save(&f));			/* gen 1, slot 0 */
	f.rec.mark[SERVER_ODD].high_water = 2;
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 200, 8));
	assert_true(statefile_save(&f));			/* gen 2, slot 1 */
	statefile_close(&f);
	tear("n2.state", STATEFILE_SLOT + 30, 40);
	sf_open(&f, "n2.state");
	assert_int_equal(f.ns_origin, STATEFILE_LOADED);
	assert_true(f.rec.gen == 1 && f.slot == 0 && f.rec.mark[SERVER_ODD].high_water == 1);
	assert_true(state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 100);
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 300, 8));
	assert_true(statefile_save(&f));			/* gen 2 again, over the torn slot */
	statefile_close(&f);
	sf_open(&f, "n2.state");
	assert_true(f.rec.gen == 2 && f.slot == 1);
	assert_true(state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 300);
	statefile_close(&f);
	/* Slot 0 still holds record 1: the save did not write over it. */
	tear("n2.state", STATEFILE_SLOT + 30, 40);
	sf_open(&f, "n2.state");
	assert_true(f.rec.gen == 1 && state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 100);
	statefile_close(&f);
}

/* Neither slot valid: the file is set aside and emptied; nothing is half-read. */
static void
test_ns_file_corrupt(void **state)
{
	struct statefile f;
	char path[512], bad[600];
	struct stat st;

	(void)state;
	sf_open(&f, "n3.state");
	f.rec.mark[SERVER_EVEN].high_water = 66;
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 100, 8));
	assert_true(statefile_save(&f));
	assert_true(statefile_save(&f));
	statefile_close(&f);
	tear("n3.state", 20, 10);
	tear("n3.state", STATEFILE_SLOT + 20, 10);
	sf_open(&f, "n3.state");
	assert_int_equal(f.origin, STATEFILE_CORRUPT);
	/* Nor is there an earlier format's idgen-ns record where it would be. */
	assert_int_equal(f.ns_origin, STATEFILE_CORRUPT);
	assert_non_null(strstr(f.why, "checksum mismatch"));
	assert_true(f.rec.mark[SERVER_EVEN].high_water == 0 && f.ns.n == 0);
	path_of(path, sizeof(path), "n3.state");
	snprintf(bad, sizeof(bad), "%s.corrupt", path);
	assert_true(stat(bad, &st) == 0 && st.st_size > STATEFILE_SLOT);
	statefile_close(&f);
	assert_int_equal(size_of("n3.state"), 0);
}

/* A record of the earlier format, body and checksum, at off of buf. */
static void
old_put(char *buf, size_t off, const char *body)
{
	(void)ns_sealed(body, buf + off, OLD_SLOT);
}

/*
 * What today's idserver (before version 3) reads of a file (docs/design.md
 * section 6.10): nothing when the file is longer than its largest (266,240
 * bytes, "too large"); else a version 1 or 2 record in either 2,048-byte slot
 * or an idgen-ns record in either of its slots. True when it would read any.
 */
static bool
old_reads(const char *buf, size_t n)
{
	struct state_ns ns;
	struct state_rec r;
	char why[128];
	uint64_t gen;
	bool any = false;

	if (n > STATEFILE_SLOT)
		return false;
	ns = ns_new(NS_MARKS_MAX);
	for (size_t off = 0; off < NS_AT && off < n; off += OLD_SLOT) {
		size_t len = strnlen(buf + off, n - off < OLD_SLOT ? n - off : OLD_SLOT);

		any |= state_parse(buf + off, len, &r, NULL, why, sizeof(why)) &&
		    strncmp(buf + off, "idgen-state 3", 13) != 0;
	}
	for (size_t off = NS_AT; off < n; off += STATE_NS_SLOT)
		any |= state_ns_parse(buf + off, n - off < STATE_NS_SLOT ? n - off :
		    STATE_NS_SLOT, &ns, &gen, why, sizeof(why));
	free(ns.m);
	return any;
}

/*
 * A file of the earlier format, written here as its bytes (version 2 main
 * records in both 2,048-byte slots, idgen-ns records in both of theirs), is
 * read with every mark of its newest records, the default's and the
 * namespaces', none lowered or dropped; the first save goes to slot 1 and
 * leaves the old bytes whole, so a crash in it reads them again; from then
 * on today's code refuses the file as too large (docs/design.md 6.10).
 */
static void
test_ns_file_upgrade(void **state)
{
	char path[512], *old = calloc(1, STATEFILE_SLOT), *now;
	struct statefile f;
	size_t n;
	FILE *fp;

	(void)state;
	assert_non_null(old);
	old_put(old, 0, "idgen-state 2\ngen 6\nhost h\nowner - - 0 0 0\n"
	    "servers odd=a even=b db=idgen\nmark odd 400 1024 u-odd\nmark even 500 1024 -\n"
	    "lease none\n");
	old_put(old, OLD_SLOT, "idgen-state 2\ngen 7\nhost h\nowner - - 0 0 0\n"
	    "servers odd=a even=b db=idgen\nmark odd 401 1024 u-odd\nmark even 501 2048 -\n"
	    "lease none\n");
	old_put(old, NS_AT, "idgen-ns 1\ngen 3\nnsmark orders odd 40 16\n"
	    "nsmark orders even 41 16\nnsmark users odd 9 1\n");
	old_put(old, NS_AT + STATE_NS_SLOT, "idgen-ns 1\ngen 2\nnsmark orders odd 39 16\n");
	n = NS_AT + STATE_NS_SLOT + 200;
	assert_true(old_reads(old, n));
	path_of(path, sizeof(path), "n4.state");
	fp = fopen(path, "w");
	assert_true(fp != NULL && fwrite(old, 1, n, fp) == n);
	fclose(fp);
	sf_open(&f, "n4.state");
	assert_true(f.origin == STATEFILE_LOADED && f.ns_origin == STATEFILE_LOADED);
	assert_true(f.rec.gen == 7 && f.slot == 0 && f.loaded_version == STATE_VERSION);
	assert_true(f.rec.mark[SERVER_ODD].high_water == 401 &&
	    f.rec.mark[SERVER_ODD].block_size == 1024);
	assert_string_equal(f.rec.mark[SERVER_ODD].uuid, "u-odd");
	assert_true(f.rec.mark[SERVER_EVEN].high_water == 501 &&
	    f.rec.mark[SERVER_EVEN].block_size == 2048);
	assert_int_equal(f.ns.n, 3);
	assert_true(state_ns_get(&f.ns, "orders", SERVER_ODD)->high_water == 40);
	assert_true(state_ns_get(&f.ns, "orders", SERVER_EVEN)->high_water == 41);
	assert_true(state_ns_get(&f.ns, "users", SERVER_ODD)->block_size == 1);
	assert_true(statefile_save(&f));		/* gen 8, slot 1 */
	statefile_close(&f);
	now = slurp("n4.state", &n);
	assert_true(n > STATEFILE_SLOT);
	assert_memory_equal(now, old, NS_AT + STATE_NS_SLOT + 200);	/* untouched */
	assert_false(old_reads(now, n));
	free(now);
	sf_open(&f, "n4.state");
	assert_true(f.origin == STATEFILE_LOADED && f.rec.gen == 8 && f.slot == 1);
	assert_true(f.rec.mark[SERVER_ODD].high_water == 401 &&
	    f.rec.mark[SERVER_EVEN].block_size == 2048 && f.ns.n == 3);
	assert_true(state_ns_get(&f.ns, "orders", SERVER_EVEN)->high_water == 41);
	statefile_close(&f);
	/* That first write torn (a crash in it): the old records are read again, whole. */
	tear("n4.state", STATEFILE_SLOT + 30, 40);
	sf_open(&f, "n4.state");
	assert_true(f.origin == STATEFILE_LOADED && f.rec.gen == 7 && f.slot == 0);
	assert_true(f.rec.mark[SERVER_EVEN].high_water == 501 && f.ns.n == 3);
	assert_true(statefile_save(&f));
	f.rec.mark[SERVER_ODD].high_water = 402;
	assert_true(statefile_save(&f));		/* slot 0, over the old bytes */
	statefile_close(&f);
	now = slurp("n4.state", &n);
	assert_false(old_reads(now, n));
	free(now);
	sf_open(&f, "n4.state");
	assert_true(f.rec.gen == 9 && f.slot == 0 && f.rec.mark[SERVER_ODD].high_water == 402);
	assert_true(state_ns_get(&f.ns, "users", SERVER_ODD)->high_water == 9);
	statefile_close(&f);
	free(old);
}

/*
 * A version 1 file and a version 2 file of 4,096 bytes load with their
 * marks and no namespace marks; the earlier format's halves are kept apart
 * as before: a corrupt idgen-ns area keeps the main record, a corrupt main
 * record keeps the namespace marks.
 */
static void
test_ns_file_older_versions(void **state)
{
	char path[512], *old = calloc(1, NS_AT + STATE_NS_SLOT);
	struct statefile f;
	FILE *fp;

	(void)state;
	assert_non_null(old);
	path_of(path, sizeof(path), "n5.state");
	old_put(old, 0, "idgen-state 1\nhost x\nservers odd=a even=b db=idgen\n"
	    "mark odd 5 -\nmark even 6 -\nlease none\n");
	fp = fopen(path, "w");
	assert_true(fp != NULL && fputs(old, fp) >= 0);
	fclose(fp);
	sf_open(&f, "n5.state");
	assert_true(f.origin == STATEFILE_LOADED && f.ns_origin == STATEFILE_NEW && f.ns.n == 0);
	assert_true(f.loaded_version == 1 && f.rec.mark[SERVER_EVEN].high_water == 6);
	assert_true(f.rec.mark[SERVER_EVEN].block_size == 0);	/* read under the server's B */
	statefile_close(&f);
	old_put(old, 0, "idgen-state 2\ngen 9\nhost h\nowner - - 0 0 0\nservers s\n"
	    "mark odd 5 4 -\nmark even 0 0 -\nlease none\n");
	old_put(old, NS_AT, "idgen-ns 1\ngen 1\nnsmark a odd 5 1\n");
	old[NS_AT + 20] ^= 1;		/* the namespace marks corrupt */
	fp = fopen(path, "w");
	assert_true(fp != NULL && fwrite(old, 1, NS_AT + 100, fp) == NS_AT + 100);
	fclose(fp);
	sf_open(&f, "n5.state");
	assert_true(f.origin == STATEFILE_LOADED && f.ns_origin == STATEFILE_CORRUPT);
	assert_true(f.rec.gen == 9 && f.rec.mark[SERVER_ODD].high_water == 5 && f.ns.n == 0);
	statefile_close(&f);
	assert_int_equal(size_of("n5.state"), NS_AT);	/* cut to the main record */
	old[NS_AT + 20] ^= 1;
	old[20] ^= 1;			/* now the main record corrupt */
	fp = fopen(path, "w");
	assert_true(fp != NULL && fwrite(old, 1, NS_AT + 100, fp) == NS_AT + 100);
	fclose(fp);
	sf_open(&f, "n5.state");
	assert_true(f.origin == STATEFILE_CORRUPT && f.ns_origin == STATEFILE_LOADED);
	assert_true(state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 5 && f.slot == 0);
	assert_true(statefile_save(&f));	/* slot 1: the marks there, the old bytes kept */
	statefile_close(&f);
	sf_open(&f, "n5.state");
	assert_true(f.origin == STATEFILE_LOADED && f.ns.n == 1 && f.slot == 1);
	statefile_close(&f);
	free(old);
}

/*
 * A version 3 file, fresh (one save, slot 0 only), with a record longer than
 * the earlier format's 4,096 bytes of main slots, and after a second save:
 * today's code reads no record of it (docs/design.md 6.10, the downgrade).
 */
static void
test_ns_file_downgrade_refused(void **state)
{
	struct statefile f;
	char name[NS_NAME_MAX + 1], *buf;
	size_t n;

	(void)state;
	sf_open(&f, "n6.state");
	f.rec.mark[SERVER_ODD].high_water = 5;
	assert_true(statefile_save(&f));
	buf = slurp("n6.state", &n);
	assert_true(n < OLD_SLOT && strncmp(buf, "idgen-state 3\n", 14) == 0);
	assert_false(old_reads(buf, n));
	free(buf);
	for (unsigned i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "ns_%u", i);
		assert_true(ns_raise(&f.ns, name, i % 2, 1000 + i, 16));
	}
	f.slot = 1;		/* this save to slot 0 again, over the short record */
	assert_true(statefile_save(&f));
	buf = slurp("n6.state", &n);
	assert_true(n > NS_AT + OLD_SLOT && n < STATEFILE_SLOT);
	assert_false(old_reads(buf, n));
	free(buf);
	assert_true(statefile_save(&f));
	buf = slurp("n6.state", &n);
	assert_true(n > STATEFILE_SLOT);
	assert_false(old_reads(buf, n));
	free(buf);
	statefile_close(&f);
	sf_open(&f, "n6.state");
	assert_true(f.origin == STATEFILE_LOADED && f.ns.n == 300 && f.rec.gen == 3);
	statefile_close(&f);
}

static unsigned ndone;
static bool done_ok[8];

static void
on_done(void *arg, bool ok, uint64_t a, uint64_t b)
{
	(void)arg;
	(void)a;
	(void)b;
	assert_true(ndone < 8);
	done_ok[ndone++] = ok;
}

/*
 * Through the writer thread (docs/design.md section 6.9): queued saves and a
 * synchronous one carry the namespace marks of their snapshot; one fdatasync
 * per write covers both records.
 */
static void
test_ns_writer(void **state)
{
	struct event_base *base = event_base_new();
	struct statefile f;
	char err[256];

	(void)state;
	assert_non_null(base);
	gate_reset();
	ndone = 0;
	sf_open(&f, "n7.state");
	f.datasync = gate_sync;
	assert_true(statefile_start(&f, base, err, sizeof(err)));
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 11, 1));
	assert_int_equal(statefile_save_then(&f, on_done, NULL, 1, 0), STATEFILE_QUEUED);
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 13, 1));
	assert_true(ns_raise(&f.ns, "b", SERVER_EVEN, 2, 4));
	assert_int_equal(statefile_save_then(&f, on_done, NULL, 2, 0), STATEFILE_QUEUED);
	for (int k = 0; k < 5000 && ndone < 2; k++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (ndone < 2)
			usleep(1000);
	}
	assert_true(ndone == 2 && done_ok[0] && done_ok[1]);
	assert_true(gate_count() == f.stats.writes);
	assert_true(ns_raise(&f.ns, "c", SERVER_ODD, 3, 1));
	assert_true(statefile_save(&f));
	statefile_close(&f);
	sf_open(&f, "n7.state");
	assert_int_equal(f.ns_origin, STATEFILE_LOADED);
	assert_int_equal(f.ns.n, 3);
	assert_true(state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 13);
	assert_true(state_ns_get(&f.ns, "b", SERVER_EVEN)->block_size == 4);
	assert_true(state_ns_get(&f.ns, "c", SERVER_ODD)->high_water == 3);
	statefile_close(&f);
	event_base_free(base);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/idgen-test-state-ns-XXXXXX");
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
		cmocka_unit_test(test_ns_round_trip),
		cmocka_unit_test(test_ns_raise_id_space),
		cmocka_unit_test(test_ns_full),
		cmocka_unit_test(test_v3_marks_refused),
		cmocka_unit_test(test_ns_parse_refuses),
		cmocka_unit_test(test_ns_parse_unconfigured_server),
		cmocka_unit_test(test_ns_file_reopen),
		cmocka_unit_test(test_ns_file_torn_slot),
		cmocka_unit_test(test_ns_file_corrupt),
		cmocka_unit_test(test_ns_file_upgrade),
		cmocka_unit_test(test_ns_file_older_versions),
		cmocka_unit_test(test_ns_file_downgrade_refused),
		cmocka_unit_test(test_ns_writer),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
