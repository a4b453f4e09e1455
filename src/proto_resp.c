/*
 * proto_resp.c - RESP2: the grammar (multibulk and inline requests, pure) and
 * the dispatch: a request runs in the core, or is one RESP answers itself
 * (resp_admin.c), or is queued inside MULTI; EXEC's queue runs here, one
 * request per step. Replies are written with resp_reply.c.
 */
#include "proto_resp.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "reqlat.h"
#include "resp_admin.h"
#include "resp_reply.h"

#define PROTO_RESP_HEADER_MAX	32	/* "*<count>\r\n" or "$<len>\r\n" */

static enum proto_step	proto_resp_one(struct conn *c, bool eof);
static enum proto_resp_parse proto_resp_bad(const char **why, const char *msg);
static bool		proto_resp_header(const char *p, const char *end, char kind,
			    long long *v, const char **next, const char **why);
static enum proto_resp_parse proto_resp_parse_inline(const char *buf, size_t len,
			    const struct proto_resp_limits *lim, struct proto_resp_frame *f,
			    const char **why);
static enum proto_resp_parse proto_resp_parse_multibulk(const char *buf, size_t len,
			    const struct proto_resp_limits *lim, struct proto_resp_frame *f,
			    const char **why);
static enum proto_resp_parse proto_resp_parse_bulk(const char *buf, const char *end,
			    const struct proto_resp_limits *lim, struct proto_resp_frame *f,
			    unsigned i, const char **p, const char **why);
static bool		proto_resp_check(struct conn *c, const struct proto_resp_frame *f,
			    const struct resp_cmd **cmd, const struct core_word **w);
static enum proto_step	proto_resp_run(struct conn *c, const struct proto_resp_frame *f);
static bool		proto_resp_allowed(struct conn *c, const struct resp_cmd *cmd);
static enum proto_step	proto_resp_exec_one(struct conn *c, const struct proto_resp_frame *f,
			    const struct resp_cmd *cmd, const struct core_word *w);
static enum proto_step	proto_resp_queue(struct conn *c, struct resp_state *st,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_exec_step(struct conn *c, struct resp_state *st);
static enum proto_step	proto_resp_core(struct conn *c, const struct core_req *req);
static void		proto_resp_decode(struct conn *c, const struct decode *d);
static void		proto_resp_reply(struct conn *c, const struct core_req *req,
			    const struct core_result *res);

const struct proto_ops proto_resp_ops = { "resp", REQLAT_RESP, proto_resp_one,
    resp_admin_free };

/* A protocol error: why says it. */
static enum proto_resp_parse
proto_resp_bad(const char **why, const char *msg)
{
	*why = msg;
	return PROTO_RESP_ERROR;
}

/*
 * Reads "<kind><number>\r\n" at p. True with *next after it; false with
 * *why NULL when more input is needed, else a protocol error.
 */
static bool
proto_resp_header(const char *p, const char *end, char kind, long long *v,
    const char **next, const char **why)
{
	const char *cr;
	char num[PROTO_RESP_HEADER_MAX], *e;
	size_t n;

	*why = NULL;
	if (p >= end)
		return false;
	if (*p != kind) {
		*why = kind == '$' ? "expected '$'" : "expected '*'";
		return false;
	}
	cr = memchr(p, '\r', (size_t)(end - p));
	if (cr == NULL) {
		if ((size_t)(end - p) > PROTO_RESP_HEADER_MAX)
			*why = kind == '$' ? "too big bulk count string" :
			    "too big mbulk count string";
		return false;
	}
	if (cr + 1 >= end)
		return false;
	if (cr[1] != '\n') {
		*why = "expected CRLF";
		return false;
	}
	n = (size_t)(cr - p - 1);
	if (n == 0 || n >= sizeof(num)) {
		*why = kind == '$' ? "invalid bulk length" : "invalid multibulk length";
		return false;
	}
	memcpy(num, p + 1, n);
	num[n] = '\0';
	*v = strtoll(num, &e, 10);
	if (*e != '\0' || (num[0] != '-' && (num[0] < '0' || num[0] > '9'))) {
		*why = kind == '$' ? "invalid bulk length" : "invalid multibulk length";
		return false;
	}
	*next = cr + 2;
	return true;
}

/* One request: a multibulk, or an inline line of words. */
enum proto_resp_parse
proto_resp_parse(const char *buf, size_t len, const struct proto_resp_limits *lim,
    struct proto_resp_frame *f, const char **why)
{
	memset(f, 0, sizeof(*f));
	if (len == 0)
		return PROTO_RESP_INCOMPLETE;
	if (*buf != '*')
		return proto_resp_parse_inline(buf, len, lim, f, why);
	return proto_resp_parse_multibulk(buf, len, lim, f, why);
}

/* Inline: words separated by spaces up to LF, as Redis accepts. */
static enum proto_resp_parse
proto_resp_parse_inline(const char *buf, size_t len, const struct proto_resp_limits *lim,
    struct proto_resp_frame *f, const char **why)
{
	const char *nl = memchr(buf, '\n', len), *q, *stop;

	if (nl == NULL) {
		if (len > lim->max_frame / 2)
			return proto_resp_bad(why, "too big inline request");
		return PROTO_RESP_INCOMPLETE;
	}
	stop = nl > buf && nl[-1] == '\r' ? nl - 1 : nl;
	for (q = buf; q < stop;) {
		while (q < stop && (*q == ' ' || *q == '\t'))
			q++;
		if (q == stop)
			break;
		if (f->argc == lim->max_args)
			return proto_resp_bad(why, "too many arguments (resp_max_args)");
		f->argv[f->argc] = q;
		while (q < stop && *q != ' ' && *q != '\t')
			q++;
		f->argl[f->argc] = (size_t)(q - f->argv[f->argc]);
		/* The bound of a bulk string holds for an inline word too. */
		if (f->argl[f->argc] > lim->max_bulk)
			return proto_resp_bad(why, "too long inline argument "
			    "(resp_max_bulk_bytes)");
		f->argc++;
	}
	f->inline_cmd = true;
	f->used = (size_t)(nl + 1 - buf);
	return PROTO_RESP_FRAME;
}

/* "*<count>\r\n" then count bulk strings "$<len>\r\n<bytes>\r\n". */
static enum proto_resp_parse
proto_resp_parse_multibulk(const char *buf, size_t len, const struct proto_resp_limits *lim,
    struct proto_resp_frame *f, const char **why)
{
	const char *p, *end = buf + len;
	long long count;
	enum proto_resp_parse r;
	unsigned i;

	if (!proto_resp_header(buf, end, '*', &count, &p, why))
		return *why != NULL ? PROTO_RESP_ERROR : PROTO_RESP_INCOMPLETE;
	if (count > (long long)lim->max_args)
		return proto_resp_bad(why, "invalid multibulk length (resp_max_args)");
	/* *-1 is the null array; a count below it means the client is lost. */
	if (count < -1)
		return proto_resp_bad(why, "invalid multibulk length");
	/* *0 and *-1 are empty requests: nothing to run, as Redis does. */
	for (i = 0; count > 0 && i < (unsigned)count; i++) {
		r = proto_resp_parse_bulk(buf, end, lim, f, i, &p, why);
		if (r != PROTO_RESP_FRAME)
			return r;
	}
	f->argc = count > 0 ? (unsigned)count : 0;
	f->used = (size_t)(p - buf);
	return PROTO_RESP_FRAME;
}

/*
 * Bulk string i of a multibulk at *p, into f; *p moves past it. A request
 * must fit in the input buffer (max_frame from buf), so one that cannot is an
 * error now, not an endless wait.
 */
static enum proto_resp_parse
proto_resp_parse_bulk(const char *buf, const char *end, const struct proto_resp_limits *lim,
    struct proto_resp_frame *f, unsigned i, const char **p, const char **why)
{
	const char *next;
	long long blen;

	if (!proto_resp_header(*p, end, '$', &blen, &next, why)) {
		if (*why == NULL && (size_t)(end - buf) >= lim->max_frame)
			return proto_resp_bad(why, "request larger than the input buffer");
		return *why != NULL ? PROTO_RESP_ERROR : PROTO_RESP_INCOMPLETE;
	}
	if (blen < 0 || (unsigned long long)blen > lim->max_bulk)
		return proto_resp_bad(why, "invalid bulk length (resp_max_bulk_bytes)");
	if ((size_t)(end - next) < (size_t)blen + 2) {
		if ((size_t)(next - buf) + (size_t)blen + 2 > lim->max_frame)
			return proto_resp_bad(why, "request larger than the input buffer");
		return PROTO_RESP_INCOMPLETE;
	}
	if (next[blen] != '\r' || next[blen + 1] != '\n')
		return proto_resp_bad(why, "expected CRLF after the bulk");
	f->argv[i] = next;
	f->argl[i] = (size_t)blen;
	*p = next + blen + 2;
	return PROTO_RESP_FRAME;
}

/* Takes one request; a protocol error answers once and closes, as Redis does. */
static enum proto_step
proto_resp_one(struct conn *c, bool eof)
{
	const struct config *cfg = c->set->cfg;
	struct proto_resp_limits lim = { cfg->resp_max_args, cfg->resp_max_bulk_bytes,
	    CONN_IN_SIZE };
	struct resp_state *st = c->proto_state;
	struct proto_resp_frame f;
	const char *why = NULL;
	enum proto_step r;
	char msg[128];

	/* EXEC runs its queue, one request per step, before any later input. */
	if (st != NULL && st->executing)
		return proto_resp_exec_step(c, st);
	/* The most common request by far, without the general frame parse. */
	if ((st == NULL || !st->multi) && c->in_len - c->in_off >= 12 &&
	    memcmp(c->in + c->in_off, "*1\r\n$2\r\n", 8) == 0 &&
	    (c->in[c->in_off + 8] | 0x20) == 'i' && (c->in[c->in_off + 9] | 0x20) == 'd' &&
	    c->in[c->in_off + 10] == '\r' && c->in[c->in_off + 11] == '\n') {
		struct core_req req = { CORE_CMD_ID, NULL, 0, &c->auth, NULL, 0 };

		if (proto_resp_core(c, &req) == PROTO_WAIT)
			return PROTO_WAIT;
		c->in_off += 12;
		return PROTO_HANDLED;
	}
	switch (proto_resp_parse(c->in + c->in_off, c->in_len - c->in_off, &lim, &f, &why)) {
	case PROTO_RESP_INCOMPLETE:
		if (!eof)
			return PROTO_NEED_MORE;
		/* The peer stopped sending mid-request: say so, it may still read. */
		why = "unexpected end of input inside a request";
		/* FALLTHROUGH */
	case PROTO_RESP_ERROR:
		snprintf(msg, sizeof(msg), "Protocol error: %s", why);
		core_count(c->set->core, CORE_ERR_BADREQ);
		resp_reply_error(c, "ERR", msg);
		return PROTO_CLOSE;
	case PROTO_RESP_FRAME:
		break;
	}
	if (f.argc == 0) {
		c->in_off += f.used;
		return PROTO_HANDLED;
	}
	r = proto_resp_run(c, &f);
	/* EXEC that began keeps its request until the last queued one has run. */
	st = c->proto_state;
	if (r != PROTO_WAIT && (st == NULL || !st->executing))
		c->in_off += f.used;
	return r;
}

/*
 * What runs the request (*cmd, or the core's *w), true; false when it is
 * unknown or has the wrong arity: answered and counted, as Redis refuses it
 * before running (inside MULTI too, which makes EXEC abort).
 */
static bool
proto_resp_check(struct conn *c, const struct proto_resp_frame *f,
    const struct resp_cmd **cmd, const struct core_word **w)
{
	unsigned min, max;

	*w = NULL;
	*cmd = resp_admin_find(f);
	if (*cmd == NULL && (*w = core_lookup(f->argv[0], f->argl[0])) == NULL) {
		core_count(c->set->core, CORE_ERR_BADREQ);
		resp_reply_unknown(c, f);
		return false;
	}
	/* ID [ns], IDS n [ns], BLOCK n [ns]: an optional last argument, the namespace. */
	min = *cmd != NULL ? (*cmd)->min_argc : (unsigned)(*w)->nargs + 1;
	max = *cmd != NULL ? (*cmd)->max_argc : min + (*w)->takes_ns;
	if (f->argc < min || f->argc > max) {
		/* What the core never sees is counted here, a malformed one too. */
		core_count(c->set->core, *cmd != NULL ? CORE_OK : CORE_ERR_BADREQ);
		resp_reply_arity(c, f, *cmd != NULL ? (*cmd)->sub : NULL);
		return false;
	}
	/* An unknown subcommand: its row answers the error now. */
	if (*cmd != NULL && (((*cmd)->flags & RESP_CMD_REFUSE) ||
	    (((*cmd)->flags & RESP_CMD_SUBS) && f->argc > 1))) {
		core_count(c->set->core, CORE_OK);
		(void)(*cmd)->run(c, f);
		return false;
	}
	return true;
}

/* Runs one request, or queues it inside MULTI. */
static enum proto_step
proto_resp_run(struct conn *c, const struct proto_resp_frame *f)
{
	struct resp_state *st = c->proto_state;
	const struct resp_cmd *cmd;
	const struct core_word *w;

	if (!proto_resp_check(c, f, &cmd, &w) ||
	    (c->set->core->auth != NULL && !proto_resp_allowed(c, cmd))) {
		if (st != NULL && st->multi)
			st->dirty = true;
		return PROTO_HANDLED;
	}
	if (st != NULL && st->multi && (cmd == NULL || !(cmd->flags & RESP_CMD_NOQUEUE)))
		return proto_resp_queue(c, st, f);
	return proto_resp_exec_one(c, f, cmd, w);
}

/*
 * With auth_tokens_file: only AUTH, HELLO and QUIT before a token, as Redis;
 * true, else the refusal (-NOAUTH) is answered. The core checks its commands
 * again when they run (a read-only token gets -NOPERM for IDs).
 */
static bool
proto_resp_allowed(struct conn *c, const struct resp_cmd *cmd)
{
	struct core_result res;

	if (cmd != NULL && (cmd->flags & RESP_CMD_OPEN))
		return true;
	/* auth_mode = optional, no token: a command of the core counts itself when run. */
	if (cmd == NULL && core_auth_anonymous(c->set->core, &c->auth))
		return true;
	(void)core_auth(c->set->core, NULL, &c->auth, AUTH_PERM_RO, &res);
	if (res.err == CORE_OK)
		return true;
	resp_reply_error(c, core_err_info(res.err)->code, res.why);
	return false;
}

/* Runs a checked request: what RESP answers itself, else a command of the core. */
static enum proto_step
proto_resp_exec_one(struct conn *c, const struct proto_resp_frame *f,
    const struct resp_cmd *cmd, const struct core_word *w)
{
	struct core_req req;

	if (cmd != NULL) {
		if (!(cmd->flags & RESP_CMD_SELF))
			core_count(c->set->core, CORE_OK);
		return cmd->run(c, f);
	}
	req.cmd = w->cmd;
	req.arg = w->nargs ? f->argv[1] : NULL;
	req.arglen = w->nargs ? f->argl[1] : 0;
	req.sess = &c->auth;
	/* Its arity is checked: one argument more than nargs is the namespace. */
	req.ns = f->argc > (unsigned)w->nargs + 1 ? f->argv[f->argc - 1] : NULL;
	req.nslen = req.ns != NULL ? f->argl[f->argc - 1] : 0;
	return proto_resp_core(c, &req);
}

/*
 * Inside MULTI: the request as it came (the frame at the input's front) joins
 * the queue, bounded by resp_multi_max_commands and resp_multi_max_bytes.
 */
static enum proto_step
proto_resp_queue(struct conn *c, struct resp_state *st, const struct proto_resp_frame *f)
{
	const struct config *cfg = c->set->cfg;
	const char *why = st->nqueued >= cfg->resp_multi_max_commands ? "too many commands in "
	    "this MULTI (resp_multi_max_commands)" : st->qlen + f->used > cfg->resp_multi_max_bytes ?
	    "too many bytes queued in this MULTI (resp_multi_max_bytes)" : NULL;
	size_t cap;
	char *q;

	if (why != NULL) {
		core_count(c->set->core, CORE_ERR_BADREQ);
		resp_reply_error(c, "ERR", why);
		st->dirty = true;
		return PROTO_HANDLED;
	}
	if (st->qlen + f->used > st->qcap) {
		for (cap = st->qcap > 0 ? st->qcap : 256; cap < st->qlen + f->used; cap *= 2)
			;
		if ((q = realloc(st->queue, cap)) == NULL) {
			resp_reply_error(c, "ERR", "out of memory");
			st->dirty = true;
			return PROTO_HANDLED;
		}
		st->queue = q;
		st->qcap = cap;
	}
	memcpy(st->queue + st->qlen, c->in + c->in_off, f->used);
	st->qlen += f->used;
	st->nqueued++;
	RESP_REPLY_LIT(c, "+QUEUED\r\n");
	return PROTO_HANDLED;
}

/*
 * EXEC: the next queued request, which may wait like any other; after the
 * last, the EXEC request itself is consumed.
 */
static enum proto_step
proto_resp_exec_step(struct conn *c, struct resp_state *st)
{
	const struct config *cfg = c->set->cfg;
	struct proto_resp_limits lim = { cfg->resp_max_args, cfg->resp_max_bulk_bytes,
	    CONN_IN_SIZE };
	const struct resp_cmd *cmd;
	const struct core_word *w = NULL;
	struct proto_resp_frame f;
	const char *why = NULL;
	enum proto_step r = PROTO_HANDLED;

	/* It parsed when queued, with the same limits: it parses again. */
	if (proto_resp_parse(st->queue + st->exec_off, st->qlen - st->exec_off, &lim, &f,
	    &why) != PROTO_RESP_FRAME || f.argc == 0) {
		resp_reply_error(c, "ERR", "queued request unreadable");
		st->exec_left--;
		st->exec_off = st->qlen;
	} else {
		cmd = resp_admin_find(&f);
		if (cmd == NULL)
			w = core_lookup(f.argv[0], f.argl[0]);
		r = proto_resp_exec_one(c, &f, cmd, w);
		if (r == PROTO_WAIT)
			return r;
		st->exec_off += f.used;
		st->exec_left--;
	}
	if (st->exec_left == 0) {
		c->in_off += st->exec_used;
		resp_admin_discard(st);
	}
	return r;
}

/* A request of the core, run there (arguments, counting); its reply or its error. */
static enum proto_step
proto_resp_core(struct conn *c, const struct core_req *req)
{
	struct core_result res;

	if (core_exec(c->set->core, &c->waiter, req, &res) == CORE_PENDING)
		return PROTO_WAIT;
	if (res.err != CORE_OK)
		resp_reply_error(c, core_err_info(res.err)->code, res.why);
	else
		proto_resp_reply(c, req, &res);
	return PROTO_HANDLED;
}

/* A field/value array, as HGETALL replies. */
static void
proto_resp_decode(struct conn *c, const struct decode *d)
{
	char num[8][24];
	const char *kv[24];
	unsigned n = 0, i;

#define KV(k, v)	do { kv[n++] = (k); kv[n++] = (v); } while (0)
	snprintf(num[0], sizeof(num[0]), "%" PRIu64, d->id);
	if (d->region == LAYOUT_TICKET) {
		snprintf(num[1], sizeof(num[1]), "%" PRIu64, d->ticket);
		KV("source", "ticket");
		KV("block", num[1]);
		KV("server", d->server);
	} else {
		snprintf(num[1], sizeof(num[1]), "%" PRId64, d->unix_ms);
		snprintf(num[2], sizeof(num[2]), "%u", d->worker);
		snprintf(num[3], sizeof(num[3]), "%u", d->datacenter_id);
		snprintf(num[4], sizeof(num[4]), "%u", d->worker_id);
		snprintf(num[5], sizeof(num[5]), "%u", d->seq);
		KV("source", "snowflake");
		KV("time", d->iso);
		KV("timestamp_ms", num[1]);
		KV("worker", num[2]);
		KV("datacenter_id", num[3]);
		KV("worker_id", num[4]);
		KV("seq", num[5]);
	}
	if (d->regions) {
		snprintf(num[6], sizeof(num[6]), "%u", d->area);
		KV("region", num[6]);
	}
	KV("id", num[0]);
	KV("b58", d->b58);
#undef KV
	resp_reply_head(c, '*', n);
	for (i = 0; i < n; i++)
		resp_reply_bulk(c, kv[i], strlen(kv[i]));
}

/* The reply of a core command that succeeded. */
static void
proto_resp_reply(struct conn *c, const struct core_req *req, const struct core_result *res)
{
	char head[16], *p, *q;
	int h;

	switch (req->cmd) {
	case CORE_CMD_ID:
		resp_reply_int(c, res->ids[0]);
		return;
	case CORE_CMD_IDS:
		h = snprintf(head, sizeof(head), "*%u\r\n", res->count);
		p = q = conn_reserve(c, (size_t)h + (size_t)res->count * (FMT_U64_LEN + 3));
		if (p == NULL)
			return;
		memcpy(q, head, (size_t)h);
		q += h;
		q += fmt_ids_framed(q, res->ids, res->count, ":", "\r\n", FMT_SEP_NONE,
		    NULL);
		conn_commit(c, (size_t)(q - p));
		return;
	case CORE_CMD_BLOCK:
		RESP_REPLY_LIT(c, "*2\r\n");
		resp_reply_int(c, res->first);
		resp_reply_int(c, res->count);
		return;
	case CORE_CMD_DECODE:
		proto_resp_decode(c, &res->dec);
		return;
	case CORE_CMD_B58:
		resp_reply_bulk(c, res->dec.b58, B58_LEN);
		return;
	case CORE_CMD_STATS:
		resp_admin_info(c, NULL, 0);
		return;
	case CORE_CMD_AUTH:		/* answered by resp_admin_auth */
		break;
	case CORE_CMD_PING:
		return;		/* resp_admin_ping answers, never the core */
	}
}
