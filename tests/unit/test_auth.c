/*
 * test_auth.c - tokens: the file's grammar, Bearer values, the hashed table
 * and its reload, sessions made stale by a reload, user names, the
 * per-address failure count, and the core's decision (core_auth) with a
 * failure's reply held on the waiter's timer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>

#include "auth.h"
#include "core.h"

#define TOK_A	"alice-token-0123456789"
#define TOK_R	"reader-token-0123456789"
#define TOK_B	"bare-token-0123456789abc"

static char tmpl[] = "/tmp/test_auth.XXXXXX";

/* Writes text to the test's token file; its path. */
static const char *
tokens_file(const char *text)
{
	static char path[64];
	FILE *f;

	if (path[0] == '\0') {
		int fd = mkstemp(tmpl);

		assert_true(fd >= 0);
		close(fd);
		snprintf(path, sizeof(path), "%s", tmpl);
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static bool
parse(const char *line, struct auth_token *t, bool *skip, char *err)
{
	return auth_parse_line(line, strlen(line), t, skip, err, 128);
}

static void
test_grammar(void **state)
{
	struct auth_token t, u;
	char err[128];
	bool skip;

	(void)state;
	assert_true(parse(TOK_A, &t, &skip, err));
	assert_false(skip);
	assert_string_equal(t.name, "");
	assert_int_equal(t.perm, AUTH_PERM_ALL);
	auth_hash(TOK_A, strlen(TOK_A), u.hash);
	assert_memory_equal(t.hash, u.hash, AUTH_HASH_LEN);
	assert_true(parse("alice:" TOK_A "\r", &t, &skip, err));
	assert_string_equal(t.name, "alice");
	assert_memory_equal(t.hash, u.hash, AUTH_HASH_LEN);
	assert_true(parse("  reader:" TOK_R ":ro  ", &t, &skip, err));
	assert_int_equal(t.perm, AUTH_PERM_RO);
	assert_true(parse("w:" TOK_R ":RW", &t, &skip, err));
	assert_int_equal(t.perm, AUTH_PERM_ALL);
	assert_true(parse("", &t, &skip, err) && skip);
	assert_true(parse("   \t", &t, &skip, err) && skip);
	assert_true(parse("# alice:" TOK_A, &t, &skip, err) && skip);
	/* Refusals, none of which repeats the token. */
	assert_false(parse("short", &t, &skip, err));
	assert_non_null(strstr(err, "16..256"));
	assert_false(parse("bad name:" TOK_A, &t, &skip, err));
	assert_false(parse(":" TOK_A, &t, &skip, err));
	assert_false(parse("a:" TOK_A ":admin", &t, &skip, err));
	assert_null(strstr(err, TOK_A));
	/* Namespace limits: one ns= flag each, checked by auth_ns_allowed. */
	assert_true(parse("a:" TOK_A ":rw,ns=orders,ns=default", &t, &skip, err));
	assert_int_equal(t.nns, 2);
	assert_string_equal(t.ns[0], "orders");
	assert_string_equal(t.ns[1], "default");
	{
		struct auth_sess s;

		auth_sess_init(&s, -1);
		assert_true(auth_ns_allowed(&s, "users", 5));	/* no token: unlimited */
		s.tok = &t;
		assert_true(auth_ns_allowed(&s, "orders", 6));
		assert_true(auth_ns_allowed(&s, "default", 7));
		assert_false(auth_ns_allowed(&s, "order", 5));
		assert_false(auth_ns_allowed(&s, "users", 5));
	}
	assert_false(parse("a:" TOK_A ":ns=ord-ers", &t, &skip, err));
	assert_false(parse("a:" TOK_A ":ns=", &t, &skip, err));
	assert_false(parse("a:" TOK_A ":ns=a,ns=b,ns=c,ns=d,ns=e,ns=f,ns=g,ns=h,ns=i,ns=j,ns=k,"
	    "ns=l,ns=m,ns=n,ns=o,ns=p,ns=q", &t, &skip, err));
	assert_non_null(strstr(err, "at most 16"));
	assert_false(parse("a:" TOK_A ":ro:x", &t, &skip, err));
	assert_false(parse("a:tok en-0123456789abcdef", &t, &skip, err));
	assert_false(parse("a:" TOK_A ":", &t, &skip, err));
}

static void
test_bearer(void **state)
{
	const char *tok;
	size_t len;

	(void)state;
	assert_true(auth_bearer("Bearer abc", 10, &tok, &len));
	assert_int_equal(len, 3);
	assert_memory_equal(tok, "abc", 3);
	assert_true(auth_bearer("bearer \t xyz  ", 14, &tok, &len));
	assert_int_equal(len, 3);
	assert_memory_equal(tok, "xyz", 3);
	assert_false(auth_bearer("Basic abc", 9, &tok, &len));
	assert_false(auth_bearer("Bearer", 6, &tok, &len));
	assert_false(auth_bearer("Bearer   ", 9, &tok, &len));
	assert_false(auth_bearer("Bearerabc", 9, &tok, &len));
	assert_false(auth_bearer(NULL, 0, &tok, &len));
}

/* Basic credentials: base64(user:token), OpenSSL's decoder, the padding left out. */
static void
test_basic(void **state)
{
	char buf[AUTH_BASIC_MAX];
	const char *user, *tok;
	size_t ul, tl;

	(void)state;
	/* base64("alice:0123456789abcdef") */
	assert_true(auth_basic("Basic YWxpY2U6MDEyMzQ1Njc4OWFiY2RlZg==", 38, buf, &user, &ul,
	    &tok, &tl));
	assert_int_equal(ul, 5);
	assert_memory_equal(user, "alice", 5);
	assert_int_equal(tl, 16);
	assert_memory_equal(tok, "0123456789abcdef", 16);
	/* base64(":ab") and base64("a:b"): an empty user; no padding */
	assert_true(auth_basic("basic  OmFi ", 12, buf, &user, &ul, &tok, &tl));
	assert_int_equal(ul, 0);
	assert_int_equal(tl, 2);
	assert_true(auth_basic("Basic YTpi", 10, buf, &user, &ul, &tok, &tl));
	assert_int_equal(tl, 1);
	assert_memory_equal(tok, "b", 1);
	assert_false(auth_basic("Basic YWxpY2U=", 14, buf, &user, &ul, &tok, &tl));	/* no ':' */
	assert_false(auth_basic("Basic YTo=", 10, buf, &user, &ul, &tok, &tl));	/* no token */
	assert_false(auth_basic("Basic YWxp*2U6", 14, buf, &user, &ul, &tok, &tl));
	assert_false(auth_basic("Basic YWx", 9, buf, &user, &ul, &tok, &tl));
	assert_false(auth_basic("Bearer YTpi", 11, buf, &user, &ul, &tok, &tl));
	assert_false(auth_basic(NULL, 0, buf, &user, &ul, &tok, &tl));
}

static void
test_table_and_reload(void **state)
{
	struct auth *a = calloc(1, sizeof(*a));
	struct auth_sess s;
	uint8_t h[AUTH_HASH_LEN];
	char err[256];
	uint32_t gen;

	(void)state;
	assert_true(auth_init(a, tokens_file("# tokens\nalice:" TOK_A "\nreader:" TOK_R ":ro\n\n"
	    TOK_B "\n"), 0, err, sizeof(err)));
	assert_int_equal(a->n, 3);
	assert_int_equal(a->nro, 1);
	auth_hash(TOK_R, strlen(TOK_R), h);
	assert_non_null(auth_find(a, h));
	assert_string_equal(auth_find(a, h)->name, "reader");
	auth_hash("nope-nope-nope-nope", 19, h);
	assert_null(auth_find(a, h));

	/* A session made with alice's token, then alice removed: stale, then none. */
	auth_sess_init(&s, -1);
	assert_int_equal(auth_perm(a, &s), AUTH_PERM_NONE);
	auth_hash(TOK_A, strlen(TOK_A), s.hash);
	s.has = true;
	s.gen = 0;
	assert_int_equal(auth_perm(a, &s), AUTH_PERM_ALL);
	gen = a->gen;
	tokens_file("reader:" TOK_R ":ro\n" TOK_B "\n");
	assert_true(auth_reload(a, err, sizeof(err)));
	assert_int_not_equal(a->gen, gen);
	assert_int_equal(auth_perm(a, &s), AUTH_PERM_NONE);
	assert_false(s.has);

	assert_true(a->clean);

	/*
	 * Issue 31: a token removed and a malformed line in the same edit. The
	 * lines that parse are applied (the removed token stops working), the bad
	 * one is left out and named, and the load is not clean.
	 */
	gen = a->gen;
	tokens_file("reader:" TOK_R ":ro\nx:short\n");
	assert_true(auth_reload(a, err, sizeof(err)));
	assert_non_null(strstr(err, "line 2: a token is"));
	assert_int_not_equal(a->gen, gen);
	assert_int_equal(a->n, 1);
	assert_false(a->clean);
	assert_int_equal(a->bad, 1);
	auth_hash(TOK_B, strlen(TOK_B), h);
	assert_null(auth_find(a, h));
	assert_int_equal(a->stats.reload_errors, 1);
	assert_int_equal(a->stats.reload_failures, 0);

	/* A token twice: both lines left out (it is unclear what was meant), named. */
	tokens_file(TOK_B "\nreader:" TOK_R ":ro\n\nx:" TOK_B "\n" TOK_B "\n");
	assert_true(auth_reload(a, err, sizeof(err)));
	assert_non_null(strstr(err, "line 4: the same token as line 1"));
	assert_non_null(strstr(err, "bad lines: 4, 5"));
	assert_null(strstr(err, TOK_B));
	assert_int_equal(a->n, 1);
	assert_null(auth_find(a, h));
	assert_string_equal(a->tok[0].name, "reader");
	assert_int_equal(a->nro, 1);

	/* Then a clean file: clean again. */
	tokens_file(TOK_B "\n");
	assert_true(auth_reload(a, err, sizeof(err)));
	assert_true(a->clean);
	assert_int_equal(a->n, 1);

	/* A file that cannot be read: the previous tokens stay, said, not clean. */
	gen = a->gen;
	assert_int_equal(unlink(tokens_file("")), 0);
	assert_false(auth_reload(a, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot read"));
	assert_int_equal(a->gen, gen);
	assert_int_equal(a->n, 1);
	assert_false(a->clean);
	assert_non_null(strstr(a->why, "the previous tokens stay"));
	assert_int_equal(a->stats.reloads, 5);
	assert_int_equal(a->stats.reload_failures, 1);
	assert_int_equal(a->stats.reload_errors, 3);
	auth_free(a);

	/* At start, any bad line refuses the file. */
	assert_false(auth_init(a, tokens_file("alice:" TOK_A "\nx:short\n"), 0, err,
	    sizeof(err)));
	assert_non_null(strstr(err, "line 2"));
	auth_free(a);
	assert_false(auth_init(a, "/nonexistent/tokens", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "cannot read"));
	auth_free(a);
	free(a);
}

static void
test_user_names(void **state)
{
	struct auth *a = calloc(1, sizeof(*a));
	struct auth_sess s;
	char err[256];

	(void)state;
	assert_true(auth_init(a, tokens_file("alice:" TOK_A "\n" TOK_B "\n"), 0, err,
	    sizeof(err)));
	auth_sess_init(&s, -1);
	auth_sess_present(&s, TOK_A, strlen(TOK_A), "alice", 5, a);
	assert_true(s.presented && !s.user_bad);
	auth_sess_present(&s, TOK_A, strlen(TOK_A), "bob", 3, a);
	assert_true(s.user_bad);
	auth_sess_present(&s, TOK_A, strlen(TOK_A), NULL, 0, a);
	assert_false(s.user_bad);
	auth_sess_present(&s, TOK_B, strlen(TOK_B), "default", 7, a);
	assert_false(s.user_bad);
	auth_sess_present(&s, TOK_B, strlen(TOK_B), "alice", 5, a);
	assert_true(s.user_bad);
	/* "default" is the password alone, as in Redis: a named token too (issue 31). */
	auth_sess_present(&s, TOK_A, strlen(TOK_A), "default", 7, a);
	assert_false(s.user_bad);
	auth_sess_present(&s, TOK_A, strlen(TOK_A), "defaults", 8, a);
	assert_true(s.user_bad);
	auth_free(a);
	free(a);
}

static void
test_fail_counter(void **state)
{
	struct auth *a = calloc(1, sizeof(*a));
	char err[256];
	int i;

	(void)state;
	assert_true(auth_init(a, tokens_file(TOK_B "\n"), 250, err, sizeof(err)));
	for (i = 0; i < AUTH_FAIL_FREE; i++) {
		assert_false(auth_fail_slow(a, -1, 1000000));
		assert_int_equal(auth_fail_note(a, -1, 1000000 + i), 0);
	}
	assert_true(auth_fail_slow(a, -1, 1000010));
	assert_int_equal(auth_fail_note(a, -1, 1000010), 250);
	assert_int_equal(auth_fail_note(a, -1, 1000020), 250);
	/* Quiet for AUTH_FAIL_FORGET_MS: the count starts again. */
	assert_false(auth_fail_slow(a, -1, 1000020 + AUTH_FAIL_FORGET_MS + 1));
	assert_int_equal(auth_fail_note(a, -1, 1000020 + AUTH_FAIL_FORGET_MS + 1), 0);
	auth_free(a);
	free(a);
}

static int resumed;

static void
resume_cb(void *arg)
{
	(void)arg;
	resumed++;
}

/* The core's decision: NOAUTH, NOPERM, WRONGPASS, and a failure held on the timer. */
static void
test_core_auth(void **state)
{
	struct event_base *base = event_base_new();
	struct auth *a = calloc(1, sizeof(*a));
	struct core *c = calloc(1, sizeof(*c));
	struct core_result *res = malloc(sizeof(*res));
	struct core_waiter w;
	struct auth_sess s;
	char err[256];
	int i;

	(void)state;
	assert_true(auth_init(a, tokens_file("alice:" TOK_A "\nreader:" TOK_R ":ro\n"), 30, err,
	    sizeof(err)));
	assert_true(core_init(c, base, NULL));
	c->auth = a;
	assert_true(core_waiter_init(&w, c, resume_cb, NULL));
	auth_sess_init(&s, -1);
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_RO, res), CORE_DONE);
	assert_int_equal(res->err, CORE_ERR_NOAUTH);
	assert_string_equal(res->why, "Authentication required.");
	assert_int_equal(core_err_info(CORE_ERR_NOAUTH)->http_status, 401);
	assert_int_equal(core_err_info(CORE_ERR_NOAUTH)->grpc_status, 16);
	assert_int_equal(core_err_info(CORE_ERR_NOPERM)->grpc_status, 7);

	auth_sess_present(&s, TOK_R, strlen(TOK_R), NULL, 0, a);
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_ALL, res), CORE_DONE);
	assert_int_equal(res->err, CORE_ERR_NOPERM);
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_RO, res), CORE_DONE);
	assert_int_equal(res->err, CORE_OK);

	/* Wrong tokens: AUTH_FAIL_FREE answered at once, then held 30 ms each. */
	for (i = 0; i < AUTH_FAIL_FREE; i++) {
		auth_sess_present(&s, "wrong-wrong-wrong-wrong", 23, NULL, 0, a);
		assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_NONE, res), CORE_DONE);
		assert_int_equal(res->err, CORE_ERR_WRONGPASS);
	}
	/* A failed AUTH leaves the session's token as it was (reader, read-only). */
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_RO, res), CORE_DONE);
	assert_int_equal(res->err, CORE_OK);
	auth_sess_present(&s, "wrong-wrong-wrong-wrong", 23, NULL, 0, a);
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_NONE, res), CORE_PENDING);
	assert_int_equal(a->stats.delayed, 1);
	resumed = 0;
	assert_int_equal(event_base_loop(base, EVLOOP_ONCE), 0);
	assert_int_equal(resumed, 1);
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_NONE, res), CORE_DONE);
	assert_int_equal(res->err, CORE_ERR_WRONGPASS);
	assert_int_equal(c->stats.errors[CORE_ERR_WRONGPASS], AUTH_FAIL_FREE + 1);
	assert_int_equal(c->stats.errors[CORE_ERR_NOPERM], 1);
	assert_int_equal(c->stats.errors[CORE_ERR_NOAUTH], 1);

	/* A right token from the slowed address is not held. */
	auth_sess_present(&s, TOK_A, strlen(TOK_A), "alice", 5, a);
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_ALL, res), CORE_DONE);
	assert_int_equal(res->err, CORE_OK);

	/* auth_mode = optional: none given is served and counted; a token still checked. */
	a->optional = true;
	assert_false(core_auth_anonymous(c, &s));
	auth_sess_init(&s, -1);
	assert_true(core_auth_anonymous(c, &s));
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_ALL, res), CORE_DONE);
	assert_int_equal(res->err, CORE_OK);
	assert_int_equal(c->stats.anonymous, 1);
	auth_sess_present(&s, TOK_R, strlen(TOK_R), NULL, 0, a);
	assert_false(core_auth_anonymous(c, &s));
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_ALL, res), CORE_DONE);
	assert_int_equal(res->err, CORE_ERR_NOPERM);
	auth_sess_init(&s, -1);
	auth_sess_present(&s, TOK_A, strlen(TOK_A), "bob", 3, a);
	/* Not alice's name: a failure, held as the slowed address's are, then WRONGPASS. */
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_ALL, res), CORE_PENDING);
	assert_int_equal(event_base_loop(base, EVLOOP_ONCE), 0);
	assert_int_equal(core_auth(c, &w, &s, AUTH_PERM_ALL, res), CORE_DONE);
	assert_int_equal(res->err, CORE_ERR_WRONGPASS);
	assert_int_equal(c->stats.anonymous, 1);
	core_waiter_free(&w);
	core_free(c);
	auth_free(a);
	event_base_free(base);
	free(res);
	free(c);
	free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grammar),
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_table_and_reload),
		cmocka_unit_test(test_user_names),
		cmocka_unit_test(test_fail_counter),
		cmocka_unit_test(test_core_auth),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	unlink(tmpl);
	return rc;
}
