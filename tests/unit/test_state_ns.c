/*
 * test_state_ns.c - the namespace marks record (docs/design.md sections 6.2
 * and 13.5): format and parse, marks raised in ID space, a full set refused,
 * every kind of bad input refused; and in the state file: saved and reopened,
 * a torn newest ns slot, a version 2 sized file, ns slots alternating around
 * a torn one, a corrupt ns area set aside without losing the main record,
 * and saves through the writer thread.
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

/* Where the file keeps the namespace marks: after the main record's two slots. */
#define NS_AT	(2 * STATE_MAX_LEN)

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

/* Formats and parses back; stale bytes after the record are ignored. */
static void
test_ns_round_trip(void **state)
{
	struct state_ns a = ns_new(8), b = ns_new(8);
	char buf[4096], why[128];
	uint64_t gen;
	size_t n, longer;

	(void)state;
	(void)ns_raise(&a, "orders", SERVER_ODD, 12345, 1048576);
	(void)ns_raise(&a, "orders", SERVER_EVEN, 12346, 1048576);
	(void)ns_raise(&a, "Dense_1", SERVER_ODD, 7, 1);
	n = state_ns_format(&a, 41, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "idgen-ns 1\ngen 41\n"));
	assert_non_null(strstr(buf, "\nnsmark orders even 12346 1048576\n"));
	assert_non_null(strstr(buf, "\nnsmark Dense_1 odd 7 1\ncheck "));
	assert_true(state_ns_parse(buf, n, &b, &gen, why, sizeof(why)));
	assert_true(gen == 41);
	ns_equal(&a, &b);
	/* A shorter record over a longer one: what follows its checksum line is not read. */
	longer = n;
	a.n = 1;
	n = state_ns_format(&a, 42, buf, sizeof(buf));
	assert_true(n < longer);
	assert_true(state_ns_parse(buf, longer, &b, &gen, why, sizeof(why)));
	assert_true(gen == 42 && b.n == 1);
	/* An empty set formats: header and checksum. */
	a.n = 0;
	n = state_ns_format(&a, 1, buf, sizeof(buf));
	assert_true(n > 0 && state_ns_parse(buf, n, &b, &gen, why, sizeof(why)) && b.n == 0);
	/* Too small a buffer: 0, never a cut record. */
	assert_int_equal(state_ns_format(&a, 1, buf, 10), 0);
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
 * raises the marks it has; a full record of the longest lines fits a slot.
 */
static void
test_ns_full(void **state)
{
	unsigned others[] = { 30, 31 };
	struct state_ns r = ns_new(3), a, b;
	char *buf, why[128], name[NS_NAME_MAX + 1];
	uint64_t gen;
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
	a = ns_new(NS_MARKS_MAX + 1);
	b = ns_new(NS_MARKS_MAX + 1);
	buf = malloc(STATE_NS_SLOT);
	assert_non_null(buf);
	for (unsigned i = 0; i < NS_MARKS_MAX; i++) {
		snprintf(name, sizeof(name), "%048u", i / 2);
		assert_true(ns_raise(&a, name, server_count() - 1 - i % 2, UINT64_MAX - i,
		    UINT64_MAX));
	}
	assert_false(state_ns_raise(&a, "more", SERVER_ODD, 1, 1, &changed));
	assert_true(strlen(server_name(server_count() - 1)) == 8);	/* even_r31 */
	n = state_ns_format(&a, UINT64_MAX, buf, STATE_NS_SLOT);
	assert_true(n > 0 && n < STATE_NS_SLOT);
	assert_true(state_ns_parse(buf, n, &b, &gen, why, sizeof(why)));
	assert_true(gen == UINT64_MAX);
	ns_equal(&a, &b);
	/* One more line than a record may hold is refused, whatever the caller's cap. */
	a.m[a.n] = a.m[0];
	a.m[a.n].server = SERVER_ODD;
	a.n++;
	n = state_ns_format(&a, 1, buf, STATE_NS_SLOT);
	assert_true(n > 0);
	assert_false(state_ns_parse(buf, n, &b, &gen, why, sizeof(why)));
	assert_non_null(strstr(why, "more than 1024 namespace marks"));
	free(a.m);
	free(b.m);
	free(buf);
	assert_true(server_others_set(NULL, 0));
	assert_true(server_shape_set(2, 0, 0));
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

/*
 * Saved marks come back at the next open; without namespace marks the file
 * is what a version 2 file is (4,096 bytes) and loads with an empty set.
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
	assert_true(statefile_save(&f));
	statefile_close(&f);
	assert_int_equal(size_of("n1.state"), NS_AT);	/* the ns area is not written */
	sf_open(&f, "n1.state");
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_int_equal(f.ns_origin, STATEFILE_NEW);
	assert_true(f.ns.n == 0 && f.ns.cap == NS_MARKS_MAX);
	assert_true(ns_raise(&f.ns, "orders", SERVER_EVEN, 500, 1024));
	assert_true(ns_raise(&f.ns, "users", SERVER_ODD, 9, 1));
	assert_true(statefile_save(&f));
	statefile_close(&f);
	assert_true(size_of("n1.state") > NS_AT && size_of("n1.state") < NS_AT + STATE_NS_SLOT);
	sf_open(&f, "n1.state");
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_int_equal(f.ns_origin, STATEFILE_LOADED);
	assert_true(f.rec.mark[SERVER_ODD].high_water == 77 && f.rec.gen == 3);
	assert_true(f.ns.n == 2 && f.ns_gen == 1 && f.ns_slot == 0);
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
 * A torn newest ns slot falls back to the other; the next save goes over the
 * torn slot, never over the only valid record: tear that one too and the
 * older record still loads. The main record alternates on its own.
 */
static void
test_ns_file_torn_slot(void **state)
{
	struct statefile f;

	(void)state;
	sf_open(&f, "n2.state");
	f.rec.mark[SERVER_ODD].high_water = 1;
	assert_true(statefile_save(&f));			/* main gen 1 in slot 0, no ns */
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 100, 8));
	assert_true(statefile_save(&f));			/* main 2 slot 1, ns 1 slot 0 */
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 200, 8));
	assert_true(statefile_save(&f));			/* main 3 slot 0, ns 2 slot 1 */
	statefile_close(&f);
	tear("n2.state", NS_AT + STATE_NS_SLOT + 30, 40);
	sf_open(&f, "n2.state");
	assert_int_equal(f.ns_origin, STATEFILE_LOADED);
	assert_true(f.ns_gen == 1 && f.ns_slot == 0);
	assert_true(state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 100);
	assert_true(f.rec.gen == 3);				/* the main record is whole */
	assert_true(ns_raise(&f.ns, "a", SERVER_ODD, 300, 8));
	assert_true(statefile_save(&f));			/* ns 2 again, over the torn slot */
	statefile_close(&f);
	sf_open(&f, "n2.state");
	assert_true(f.ns_gen == 2 && f.ns_slot == 1);
	assert_true(state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 300);
	statefile_close(&f);
	/* Slot 0 still holds ns record 1: the save did not write over it. */
	tear("n2.state", NS_AT + STATE_NS_SLOT + 30, 40);
	sf_open(&f, "n2.state");
	assert_true(f.ns_gen == 1 && state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 100);
	statefile_close(&f);
}

/*
 * Neither ns slot valid: the file is set aside and cut to the main record,
 * which is kept; namespaces start without marks. A corrupt main record with
 * valid namespace marks keeps the marks (the file is not cut).
 */
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
	tear("n3.state", NS_AT + 20, 10);
	tear("n3.state", NS_AT + STATE_NS_SLOT + 20, 10);
	sf_open(&f, "n3.state");
	assert_int_equal(f.origin, STATEFILE_LOADED);
	assert_int_equal(f.ns_origin, STATEFILE_CORRUPT);
	assert_non_null(strstr(f.ns_why, "checksum mismatch"));
	assert_true(f.rec.mark[SERVER_EVEN].high_water == 66 && f.ns.n == 0);
	path_of(path, sizeof(path), "n3.state");
	snprintf(bad, sizeof(bad), "%s.corrupt", path);
	assert_true(stat(bad, &st) == 0 && st.st_size > NS_AT + STATE_NS_SLOT);
	statefile_close(&f);
	assert_int_equal(size_of("n3.state"), NS_AT);
	/* Now the main record torn in both slots, the namespace marks whole. */
	sf_open(&f, "n3.state");
	assert_int_equal(f.ns_origin, STATEFILE_NEW);
	assert_true(ns_raise(&f.ns, "b", SERVER_EVEN, 5, 2));
	assert_true(statefile_save(&f));
	statefile_close(&f);
	tear("n3.state", 10, 10);
	tear("n3.state", STATE_MAX_LEN + 10, 10);
	sf_open(&f, "n3.state");
	assert_int_equal(f.origin, STATEFILE_CORRUPT);
	assert_int_equal(f.ns_origin, STATEFILE_LOADED);
	assert_true(state_ns_get(&f.ns, "b", SERVER_EVEN)->high_water == 5);
	assert_true(f.rec.mark[SERVER_EVEN].high_water == 0);
	assert_true(statefile_save(&f));
	statefile_close(&f);
	sf_open(&f, "n3.state");
	assert_true(f.origin == STATEFILE_LOADED && f.ns_origin == STATEFILE_LOADED);
	assert_true(state_ns_get(&f.ns, "b", SERVER_EVEN)->high_water == 5 && f.ns_gen == 2);
	statefile_close(&f);
}

/* A version 1 file and a version 2 file (4,096 bytes) load with no namespace marks. */
static void
test_ns_file_older_versions(void **state)
{
	struct state_rec r;
	struct statefile f;
	char path[512], slot[STATE_MAX_LEN];
	FILE *fp;
	size_t n;

	(void)state;
	path_of(path, sizeof(path), "n4.state");
	fp = fopen(path, "w");
	assert_non_null(fp);
	n = (size_t)snprintf(slot, sizeof(slot), "idgen-state 1\nhost x\n"
	    "servers odd=a even=b db=idgen\nmark odd 5 -\nmark even 6 -\nlease none\n");
	fprintf(fp, "%scheck %016" PRIx64 "\n", slot, fnv(slot, n));
	fclose(fp);
	sf_open(&f, "n4.state");
	assert_true(f.origin == STATEFILE_LOADED && f.ns_origin == STATEFILE_NEW && f.ns.n == 0);
	statefile_close(&f);
	memset(&r, 0, sizeof(r));
	snprintf(r.host, sizeof(r.host), "h");
	r.gen = 9;
	r.mark[SERVER_ODD].high_water = 5;
	r.mark[SERVER_ODD].block_size = 4;
	memset(slot, 0, sizeof(slot));
	assert_true(state_format(&r, slot, sizeof(slot)) > 0);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_true(fwrite(slot, 1, sizeof(slot), fp) == sizeof(slot));
	assert_true(fwrite(slot, 1, sizeof(slot), fp) == sizeof(slot));
	fclose(fp);
	sf_open(&f, "n4.state");
	assert_true(f.origin == STATEFILE_LOADED && f.ns_origin == STATEFILE_NEW && f.ns.n == 0);
	assert_true(f.rec.gen == 9);
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
	sf_open(&f, "n5.state");
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
	sf_open(&f, "n5.state");
	assert_int_equal(f.ns_origin, STATEFILE_LOADED);
	assert_int_equal(f.ns.n, 3);
	assert_true(state_ns_get(&f.ns, "a", SERVER_ODD)->high_water == 13);
	assert_true(state_ns_get(&f.ns, "b", SERVER_EVEN)->block_size == 4);
	assert_true(state_ns_get(&f.ns, "c", SERVER_ODD)->high_water == 3);
	assert_true(f.ns_gen == f.rec.gen);	/* every save carried the marks */
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
		cmocka_unit_test(test_ns_parse_refuses),
		cmocka_unit_test(test_ns_parse_unconfigured_server),
		cmocka_unit_test(test_ns_file_reopen),
		cmocka_unit_test(test_ns_file_torn_slot),
		cmocka_unit_test(test_ns_file_corrupt),
		cmocka_unit_test(test_ns_file_older_versions),
		cmocka_unit_test(test_ns_writer),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
