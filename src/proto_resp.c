/*
 * proto_resp.c - RESP2: parse multibulk (and inline) requests, run them in the
 * core, reply as Redis does; MULTI/EXEC, the connection's name, the command
 * table (COMMAND) are kept here, per connection.
 */
#include "proto_resp.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clk.h"
#include "fmt.h"
#include "metrics.h"

#define PROTO_RESP_HEADER_MAX	32	/* "*<count>\r\n" or "$<len>\r\n" */
#define PROTO_RESP_INFO_MAX	65536	/* the INFO reply (512 namespaces' rows fit) */
#define PROTO_RESP_LIT(c, s)	conn_put((c), (s), sizeof(s) - 1)	/* a literal reply */

#define PROTO_RESP_ANY		PROTO_RESP_ARGS_MAX	/* no bound but the frame's */
#define PROTO_RESP_NAME_MAX	128	/* CLIENT SETNAME */
#define PROTO_RESP_NOQUEUE	0x1	/* runs at once inside MULTI, as Redis's */
#define PROTO_RESP_REFUSE	0x2	/* only answers an error: refused, never queued */
#define PROTO_RESP_SUBS		0x4	/* a catch-all: a first argument is an unknown subcommand */
#define PROTO_RESP_OPEN		0x8	/* runs before authentication (auth_tokens_file) */
#define PROTO_RESP_SELF		0x10	/* counts itself (a token goes through the core) */

/* A command RESP answers itself: its words, their count, what runs it, its help. */
struct proto_resp_cmd {
	const char	*name;
	const char	*sub;		/* the first argument, any case; NULL: any */
	unsigned	 min_argc;	/* words, the name included */
	unsigned	 max_argc;
	unsigned	 flags;		/* PROTO_RESP_NOQUEUE, _REFUSE, _SUBS */
	enum proto_step	(*run)(struct conn *c, const struct proto_resp_frame *f);
	const char	*group;		/* COMMAND DOCS: Redis's group names */
	const char	*params;	/* argument names; "[x]" optional, "x..." repeated */
	const char	*summary;
};

/*
 * What a RESP connection keeps, allocated when first needed (a name, a MULTI):
 * the transaction is its queued requests, byte for byte, parsed again when
 * EXEC runs them one per step, so EXEC's replies stream under the same output
 * bounds and waits as any request's.
 */
struct proto_resp_state {
	char		 name[PROTO_RESP_NAME_MAX + 1];	/* "" when none */
	bool		 multi;		/* between MULTI and EXEC or DISCARD */
	bool		 dirty;		/* a command was refused while queuing */
	bool		 executing;	/* EXEC runs the queue */
	unsigned	 nqueued;
	char		*queue;
	size_t		 qlen;
	size_t		 qcap;
	size_t		 exec_off;	/* the next queued request to run */
	unsigned	 exec_left;
	size_t		 exec_used;	/* the EXEC request's bytes, consumed at the end */
};

struct proto_resp_info {
	char		*buf;
	size_t		 len;
	size_t		 cap;
	const char	*want;		/* a section, or NULL for all */
	size_t		 wantlen;
	const char	*section;	/* the last header written */
};

static enum proto_step	proto_resp_one(struct conn *c, bool eof);
static void		proto_resp_release(struct conn *c);
static struct proto_resp_state *proto_resp_state(struct conn *c);
static void		proto_resp_discard(struct proto_resp_state *st);
static enum proto_step	proto_resp_run(struct conn *c, const struct proto_resp_frame *f);
static bool		proto_resp_check(struct conn *c, const struct proto_resp_frame *f,
			    const struct proto_resp_cmd **cmd, const struct core_word **w);
static enum proto_step	proto_resp_exec_one(struct conn *c, const struct proto_resp_frame *f,
			    const struct proto_resp_cmd *cmd, const struct core_word *w);
static enum proto_step	proto_resp_queue(struct conn *c, struct proto_resp_state *st,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_exec_step(struct conn *c, struct proto_resp_state *st);
static const struct proto_resp_cmd *proto_resp_find(const struct proto_resp_frame *f);
static enum proto_step	proto_resp_core(struct conn *c, const struct proto_resp_frame *f,
			    const struct core_word *w);
static enum proto_step	proto_resp_ping(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_quit(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_echo(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_info_cmd(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_select(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_hello(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_client_set(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_client_getname(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_client_id(struct conn *c, const struct proto_resp_frame *f);
static size_t		proto_resp_client_line(struct conn *c, const char *sub, char *line,
			    size_t len);
static bool		proto_resp_client_id_arg(const char *s, size_t n, long long *v);
static enum proto_step	proto_resp_client_list(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_client_info(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_client_other(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_command_count(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_command_docs(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_command_info(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_command_list(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_command(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_config(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_time(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_auth(struct conn *c, const struct proto_resp_frame *f);
static bool		proto_resp_allowed(struct conn *c, const struct proto_resp_cmd *cmd);
static enum proto_step	proto_resp_login(struct conn *c, const char *user, size_t userlen,
			    const char *tok, size_t toklen, bool *ok);
static enum proto_step	proto_resp_multi(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_exec(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_discard_cmd(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_watch(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_unwatch(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_reset(struct conn *c, const struct proto_resp_frame *f);
static bool		proto_resp_top(size_t i, const struct proto_resp_cmd **cmd,
			    const struct core_word **w);
static bool		proto_resp_top_named(const char *name, size_t len,
			    const struct proto_resp_cmd **cmd, const struct core_word **w);
static const struct proto_resp_cmd *proto_resp_row_named(const char *name);
static void		proto_resp_cmd_info(struct conn *c, const struct proto_resp_cmd *cmd,
			    const struct core_word *w);
static void		proto_resp_cmd_docs(struct conn *c, const struct proto_resp_cmd *cmd,
			    const struct core_word *w);
static void		proto_resp_docs_map(struct conn *c, const char *group,
			    const char *params, const char *summary,
			    const struct proto_resp_cmd *container);
static void		proto_resp_head(struct conn *c, char kind, long long n);
static void		proto_resp_lower(struct conn *c, const char *name, const char *sub);
static bool		proto_resp_is(const struct proto_resp_frame *f, unsigned i,
			    const char *word);
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
static void		proto_resp_int(struct conn *c, uint64_t v);
static void		proto_resp_bulk(struct conn *c, const char *s, size_t n);
static void		proto_resp_simple(struct conn *c, const char *s);
static void		proto_resp_error(struct conn *c, const char *code, const char *why);
static void		proto_resp_arity(struct conn *c, const struct proto_resp_frame *f,
			    const struct proto_resp_cmd *cmd);
static void		proto_resp_unknown(struct conn *c, const struct proto_resp_frame *f);
static void		proto_resp_reply(struct conn *c, const struct core_req *req,
			    const struct core_result *res);
static void		proto_resp_decode(struct conn *c, const struct decode *d);
static void		proto_resp_info(struct conn *c, const char *want, size_t wantlen);
static void		proto_resp_info_line(const struct metric_def *def, const char *name,
			    int server, const struct metric_value *v, void *arg);
static void		proto_resp_sanitize(char *out, size_t outlen, const char *s, size_t n);

const struct proto_ops proto_resp_ops = { "resp", proto_resp_one, proto_resp_release };

/*
 * What RESP answers itself, without the core: PING (which takes a message
 * here), what real clients send at connect, transactions and the command
 * table. A row matches the command name and, when it has one, the first
 * argument; the first row that matches is run, so a command's catch-all row
 * comes after its subcommands (and documents the command itself). The word
 * counts include the name, as Redis's arity does. COMMAND lists these rows,
 * then the core's words.
 */
#define NQ	PROTO_RESP_NOQUEUE
#define OP	PROTO_RESP_OPEN
#define SC	PROTO_RESP_SELF
static const struct proto_resp_cmd proto_resp_cmds[] = {
	{ "PING",	NULL,		1, 2,	0,	proto_resp_ping,
	    "connection", "[message]", "PONG, or the message back" },
	{ "QUIT",	NULL,		1, PROTO_RESP_ANY, NQ | OP, proto_resp_quit,
	    "connection", "", "OK, then the connection closes" },
	{ "ECHO",	NULL,		2, 2,	0,	proto_resp_echo,
	    "connection", "message", "The message back" },
	{ "INFO",	NULL,		1, 2,	0,	proto_resp_info_cmd,
	    "server", "[section]", "The counters, as Redis INFO text (the same table as STATS)" },
	{ "SELECT",	NULL,		2, 2,	0,	proto_resp_select,
	    "connection", "index", "Database 0 is the only one" },
	{ "HELLO",	NULL,		1, PROTO_RESP_ANY, NQ | OP | SC, proto_resp_hello,
	    "connection", "[protover [AUTH username password]]",
	    "NOPROTO: this server speaks RESP2 (AUTH is checked first)" },
	{ "AUTH",	NULL,		2, PROTO_RESP_ANY, NQ | OP | SC, proto_resp_auth,
	    "connection", "[username] password",
	    "Authenticates with a token of auth_tokens_file (username: the token's name)" },
	{ "CLIENT",	"SETNAME",	3, 3,	0,	proto_resp_client_set,
	    "connection", "connection-name", "Names this connection (at most 128 bytes)" },
	{ "CLIENT",	"SETINFO",	2, PROTO_RESP_ANY, 0, proto_resp_client_set,
	    "connection", "attr value", "Accepted, not kept" },
	{ "CLIENT",	"GETNAME",	2, PROTO_RESP_ANY, 0, proto_resp_client_getname,
	    "connection", "", "This connection's name, or nil" },
	{ "CLIENT",	"ID",		2, PROTO_RESP_ANY, 0, proto_resp_client_id,
	    "connection", "", "This connection's number, unique while the server runs" },
	{ "CLIENT",	"INFO",		2, 2,	0,	proto_resp_client_info,
	    "connection", "", "This connection, as one CLIENT LIST line" },
	{ "CLIENT",	"LIST",		2, PROTO_RESP_ANY, 0, proto_resp_client_list,
	    "connection", "[TYPE|ID] [type|client-id...]",
	    "This connection only (no other is listed), filtered as Redis does" },
	{ "CLIENT",	NULL,		1, PROTO_RESP_ANY, PROTO_RESP_REFUSE, proto_resp_client_other,
	    "connection", "", "Connection commands" },
	{ "COMMAND",	"COUNT",	2, PROTO_RESP_ANY, 0, proto_resp_command_count,
	    "server", "", "How many commands there are" },
	{ "COMMAND",	"DOCS",		2, PROTO_RESP_ANY, 0, proto_resp_command_docs,
	    "server", "[command-name...]", "Help on commands, for redis-cli's hints" },
	{ "COMMAND",	"INFO",		2, PROTO_RESP_ANY, 0, proto_resp_command_info,
	    "server", "[command-name...]", "Commands' arity" },
	{ "COMMAND",	"LIST",		2, 2,	0,	proto_resp_command_list,
	    "server", "", "The command names" },
	{ "COMMAND",	NULL,		1, PROTO_RESP_ANY, PROTO_RESP_SUBS, proto_resp_command,
	    "server", "", "The command table" },
	{ "CONFIG",	NULL,		1, PROTO_RESP_ANY, 0, proto_resp_config,
	    "server", "GET parameter", "Only save and appendonly, for redis-benchmark" },
	{ "TIME",	NULL,		1, 1,	0,	proto_resp_time,
	    "server", "", "The server's clock: unix seconds, microseconds" },
	{ "MULTI",	NULL,		1, 1,	NQ,	proto_resp_multi,
	    "transactions", "", "Queues the next commands until EXEC" },
	{ "EXEC",	NULL,		1, 1,	NQ,	proto_resp_exec,
	    "transactions", "", "Runs the queued commands, their replies in one array" },
	{ "DISCARD",	NULL,		1, 1,	NQ,	proto_resp_discard_cmd,
	    "transactions", "", "Drops the queued commands" },
	{ "WATCH",	NULL,		2, PROTO_RESP_ANY, NQ, proto_resp_watch,
	    "transactions", "key...", "OK: there are no keys to change" },
	{ "UNWATCH",	NULL,		1, 1,	0,	proto_resp_unwatch,
	    "transactions", "", "OK" },
	{ "RESET",	NULL,		1, 1,	NQ,	proto_resp_reset,
	    "connection", "", "Leaves MULTI, forgets the name: RESET" },
};
#undef NQ
#undef OP
#undef SC
#define PROTO_RESP_NCMDS	(sizeof(proto_resp_cmds) / sizeof(proto_resp_cmds[0]))

/* CONFIG GET: the parameters clients ask for at connect, and our answer. */
static const struct {
	const char	*name;
	const char	*reply;
} proto_resp_config_get[] = {
	{ "save",	"*2\r\n$4\r\nsave\r\n$0\r\n\r\n" },
	{ "appendonly",	"*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n" },
};
#define PROTO_RESP_NCONFIG \
	(sizeof(proto_resp_config_get) / sizeof(proto_resp_config_get[0]))

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
		if (len > lim->max_frame / 2) {
			*why = "too big inline request";
			return PROTO_RESP_ERROR;
		}
		return PROTO_RESP_INCOMPLETE;
	}
	stop = nl > buf && nl[-1] == '\r' ? nl - 1 : nl;
	for (q = buf; q < stop;) {
		while (q < stop && (*q == ' ' || *q == '\t'))
			q++;
		if (q == stop)
			break;
		if (f->argc == lim->max_args) {
			*why = "too many arguments (resp_max_args)";
			return PROTO_RESP_ERROR;
		}
		f->argv[f->argc] = q;
		while (q < stop && *q != ' ' && *q != '\t')
			q++;
		f->argl[f->argc] = (size_t)(q - f->argv[f->argc]);
		/* The bound of a bulk string holds for an inline word too. */
		if (f->argl[f->argc] > lim->max_bulk) {
			*why = "too long inline argument (resp_max_bulk_bytes)";
			return PROTO_RESP_ERROR;
		}
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
	if (count > (long long)lim->max_args) {
		*why = "invalid multibulk length (resp_max_args)";
		return PROTO_RESP_ERROR;
	}
	/* *-1 is the null array; a count below it means the client is lost. */
	if (count < -1) {
		*why = "invalid multibulk length";
		return PROTO_RESP_ERROR;
	}
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
		if (*why == NULL && (size_t)(end - buf) >= lim->max_frame) {
			*why = "request larger than the input buffer";
			return PROTO_RESP_ERROR;
		}
		return *why != NULL ? PROTO_RESP_ERROR : PROTO_RESP_INCOMPLETE;
	}
	if (blen < 0 || (unsigned long long)blen > lim->max_bulk) {
		*why = "invalid bulk length (resp_max_bulk_bytes)";
		return PROTO_RESP_ERROR;
	}
	if ((size_t)(end - next) < (size_t)blen + 2) {
		if ((size_t)(next - buf) + (size_t)blen + 2 > lim->max_frame) {
			*why = "request larger than the input buffer";
			return PROTO_RESP_ERROR;
		}
		return PROTO_RESP_INCOMPLETE;
	}
	if (next[blen] != '\r' || next[blen + 1] != '\n') {
		*why = "expected CRLF after the bulk";
		return PROTO_RESP_ERROR;
	}
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
	struct proto_resp_state *st = c->proto_state;
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
		struct core_result res;

		if (core_exec(c->set->core, &c->waiter, &req, &res) == CORE_PENDING)
			return PROTO_WAIT;
		if (res.err != CORE_OK)
			proto_resp_error(c, core_err_info(res.err)->code, res.why);
		else
			proto_resp_int(c, res.ids[0]);
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
		proto_resp_error(c, "ERR", msg);
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

/* The connection goes: what it kept goes with it. */
static void
proto_resp_release(struct conn *c)
{
	struct proto_resp_state *st = c->proto_state;

	if (st == NULL)
		return;
	free(st->queue);
	free(st);
	c->proto_state = NULL;
}

/* The connection's state, made on first use; NULL when out of memory. */
static struct proto_resp_state *
proto_resp_state(struct conn *c)
{
	if (c->proto_state == NULL)
		c->proto_state = calloc(1, sizeof(struct proto_resp_state));
	return c->proto_state;
}

/* Leaves MULTI (or the end of an EXEC): the queue is dropped. */
static void
proto_resp_discard(struct proto_resp_state *st)
{
	free(st->queue);
	st->queue = NULL;
	st->qlen = st->qcap = st->exec_off = st->exec_used = 0;
	st->nqueued = st->exec_left = 0;
	st->multi = st->dirty = st->executing = false;
}

/* True when argument i is word, in any case. */
static bool
proto_resp_is(const struct proto_resp_frame *f, unsigned i, const char *word)
{
	return i < f->argc && f->argl[i] == strlen(word) &&
	    strncasecmp(f->argv[i], word, f->argl[i]) == 0;
}

/* The row of what RESP answers itself, NULL when the request is not one of them. */
static const struct proto_resp_cmd *
proto_resp_find(const struct proto_resp_frame *f)
{
	const struct proto_resp_cmd *cmd;
	size_t k;

	for (k = 0; k < PROTO_RESP_NCMDS; k++) {
		cmd = &proto_resp_cmds[k];
		if (proto_resp_is(f, 0, cmd->name) &&
		    (cmd->sub == NULL || proto_resp_is(f, 1, cmd->sub)))
			return cmd;
	}
	return NULL;
}

/*
 * What runs the request (*cmd, or the core's *w), true; false when it is
 * unknown or has the wrong arity: answered and counted, as Redis refuses it
 * before running (inside MULTI too, which makes EXEC abort).
 */
static bool
proto_resp_check(struct conn *c, const struct proto_resp_frame *f,
    const struct proto_resp_cmd **cmd, const struct core_word **w)
{
	*w = NULL;
	*cmd = proto_resp_find(f);
	if (*cmd != NULL) {
		if (f->argc < (*cmd)->min_argc || f->argc > (*cmd)->max_argc) {
			/* The core never sees these: counted here, a malformed one too. */
			core_count(c->set->core, CORE_OK);
			proto_resp_arity(c, f, *cmd);
			return false;
		}
		/* An unknown subcommand: its row answers the error now. */
		if (((*cmd)->flags & PROTO_RESP_REFUSE) ||
		    (((*cmd)->flags & PROTO_RESP_SUBS) && f->argc > 1)) {
			core_count(c->set->core, CORE_OK);
			(void)(*cmd)->run(c, f);
			return false;
		}
		return true;
	}
	*w = core_lookup(f->argv[0], f->argl[0]);
	if (*w == NULL) {
		core_count(c->set->core, CORE_ERR_BADREQ);
		proto_resp_unknown(c, f);
		return false;
	}
	/* ID [ns], IDS n [ns], BLOCK n [ns]: an optional last argument, the namespace. */
	if (f->argc != (unsigned)(*w)->nargs + 1 &&
	    !((*w)->takes_ns && f->argc == (unsigned)(*w)->nargs + 2)) {
		core_count(c->set->core, CORE_ERR_BADREQ);
		proto_resp_arity(c, f, NULL);
		return false;
	}
	return true;
}

/* Runs one request, or queues it inside MULTI. */
static enum proto_step
proto_resp_run(struct conn *c, const struct proto_resp_frame *f)
{
	struct proto_resp_state *st = c->proto_state;
	const struct proto_resp_cmd *cmd;
	const struct core_word *w;

	if (!proto_resp_check(c, f, &cmd, &w) ||
	    (c->set->core->auth != NULL && !proto_resp_allowed(c, cmd))) {
		if (st != NULL && st->multi)
			st->dirty = true;
		return PROTO_HANDLED;
	}
	if (st != NULL && st->multi && (cmd == NULL || !(cmd->flags & PROTO_RESP_NOQUEUE)))
		return proto_resp_queue(c, st, f);
	return proto_resp_exec_one(c, f, cmd, w);
}

/*
 * With auth_tokens_file: only AUTH, HELLO and QUIT before a token, as Redis;
 * true, else the refusal (-NOAUTH) is answered. The core checks its commands
 * again when they run (a read-only token gets -NOPERM for IDs).
 */
static bool
proto_resp_allowed(struct conn *c, const struct proto_resp_cmd *cmd)
{
	struct core_result res;

	if (cmd != NULL && (cmd->flags & PROTO_RESP_OPEN))
		return true;
	/* auth_mode = optional, no token: a command of the core counts itself when run. */
	if (cmd == NULL && core_auth_anonymous(c->set->core, &c->auth))
		return true;
	(void)core_auth(c->set->core, NULL, &c->auth, AUTH_PERM_RO, &res);
	if (res.err == CORE_OK)
		return true;
	proto_resp_error(c, core_err_info(res.err)->code, res.why);
	return false;
}

/*
 * A token given by AUTH or HELLO (user: the name given, or NULL): PROTO_WAIT
 * while a failure's reply is held, else PROTO_HANDLED with *ok, the error
 * answered when not ok.
 */
static enum proto_step
proto_resp_login(struct conn *c, const char *user, size_t userlen, const char *tok,
    size_t toklen, bool *ok)
{
	struct core *core = c->set->core;
	struct core_req req = { CORE_CMD_AUTH, NULL, 0, &c->auth, NULL, 0 };
	struct core_result res;

	auth_sess_present(&c->auth, tok, toklen, user, userlen, core->auth);
	if (core_exec(core, &c->waiter, &req, &res) == CORE_PENDING)
		return PROTO_WAIT;	/* the request is read again when resumed */
	/* Answered: the token's bytes leave the input buffer, which is reused. */
	explicit_bzero((char *)(uintptr_t)tok, toklen);
	*ok = res.err == CORE_OK;
	if (!*ok)
		proto_resp_error(c, core_err_info(res.err)->code, res.why);
	return PROTO_HANDLED;
}

/* Runs a checked request: what RESP answers itself, else a command of the core. */
static enum proto_step
proto_resp_exec_one(struct conn *c, const struct proto_resp_frame *f,
    const struct proto_resp_cmd *cmd, const struct core_word *w)
{
	if (cmd != NULL) {
		if (!(cmd->flags & PROTO_RESP_SELF))
			core_count(c->set->core, CORE_OK);
		return cmd->run(c, f);
	}
	return proto_resp_core(c, f, w);
}

/*
 * Inside MULTI: the request as it came (the frame at the input's front) joins
 * the queue, bounded by resp_multi_max_commands and resp_multi_max_bytes.
 */
static enum proto_step
proto_resp_queue(struct conn *c, struct proto_resp_state *st, const struct proto_resp_frame *f)
{
	const struct config *cfg = c->set->cfg;
	size_t cap;
	char *q;

	if (st->nqueued >= cfg->resp_multi_max_commands) {
		core_count(c->set->core, CORE_ERR_BADREQ);
		proto_resp_error(c, "ERR", "too many commands in this MULTI "
		    "(resp_multi_max_commands)");
		st->dirty = true;
		return PROTO_HANDLED;
	}
	if (st->qlen + f->used > cfg->resp_multi_max_bytes) {
		core_count(c->set->core, CORE_ERR_BADREQ);
		proto_resp_error(c, "ERR", "too many bytes queued in this MULTI "
		    "(resp_multi_max_bytes)");
		st->dirty = true;
		return PROTO_HANDLED;
	}
	if (st->qlen + f->used > st->qcap) {
		for (cap = st->qcap > 0 ? st->qcap : 256; cap < st->qlen + f->used; cap *= 2)
			;
		if ((q = realloc(st->queue, cap)) == NULL) {
			proto_resp_error(c, "ERR", "out of memory");
			st->dirty = true;
			return PROTO_HANDLED;
		}
		st->queue = q;
		st->qcap = cap;
	}
	memcpy(st->queue + st->qlen, c->in + c->in_off, f->used);
	st->qlen += f->used;
	st->nqueued++;
	PROTO_RESP_LIT(c, "+QUEUED\r\n");
	return PROTO_HANDLED;
}

/*
 * EXEC: the next queued request, which may wait like any other; after the
 * last, the EXEC request itself is consumed.
 */
static enum proto_step
proto_resp_exec_step(struct conn *c, struct proto_resp_state *st)
{
	const struct config *cfg = c->set->cfg;
	struct proto_resp_limits lim = { cfg->resp_max_args, cfg->resp_max_bulk_bytes,
	    CONN_IN_SIZE };
	const struct proto_resp_cmd *cmd;
	const struct core_word *w = NULL;
	struct proto_resp_frame f;
	const char *why = NULL;
	enum proto_step r = PROTO_HANDLED;

	/* It parsed when queued, with the same limits: it parses again. */
	if (proto_resp_parse(st->queue + st->exec_off, st->qlen - st->exec_off, &lim, &f,
	    &why) != PROTO_RESP_FRAME || f.argc == 0) {
		proto_resp_error(c, "ERR", "queued request unreadable");
		st->exec_left--;
		st->exec_off = st->qlen;
	} else {
		cmd = proto_resp_find(&f);
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
		proto_resp_discard(st);
	}
	return r;
}

/* A command of the core (its arity checked): its arguments and counting there. */
static enum proto_step
proto_resp_core(struct conn *c, const struct proto_resp_frame *f, const struct core_word *w)
{
	struct core *core = c->set->core;
	struct core_result res;
	struct core_req req;

	req.cmd = w->cmd;
	req.arg = w->nargs ? f->argv[1] : NULL;
	req.arglen = w->nargs ? f->argl[1] : 0;
	req.sess = &c->auth;
	/* Its arity is checked: one argument more than nargs is the namespace. */
	req.ns = f->argc > (unsigned)w->nargs + 1 ? f->argv[f->argc - 1] : NULL;
	req.nslen = req.ns != NULL ? f->argl[f->argc - 1] : 0;
	if (core_exec(core, &c->waiter, &req, &res) == CORE_PENDING)
		return PROTO_WAIT;
	if (res.err != CORE_OK)
		proto_resp_error(c, core_err_info(res.err)->code, res.why);
	else
		proto_resp_reply(c, &req, &res);
	return PROTO_HANDLED;
}

/* PING [message]: PONG, or the message back. */
static enum proto_step
proto_resp_ping(struct conn *c, const struct proto_resp_frame *f)
{
	if (f->argc == 2)
		proto_resp_bulk(c, f->argv[1], f->argl[1]);
	else
		proto_resp_simple(c, "PONG");
	return PROTO_HANDLED;
}

/* QUIT: OK, then the connection closes once it is flushed. */
static enum proto_step
proto_resp_quit(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	proto_resp_simple(c, "OK");
	return PROTO_CLOSE;
}

/* ECHO message */
static enum proto_step
proto_resp_echo(struct conn *c, const struct proto_resp_frame *f)
{
	proto_resp_bulk(c, f->argv[1], f->argl[1]);
	return PROTO_HANDLED;
}

/* INFO [section] */
static enum proto_step
proto_resp_info_cmd(struct conn *c, const struct proto_resp_frame *f)
{
	proto_resp_info(c, f->argc == 2 ? f->argv[1] : NULL, f->argc == 2 ? f->argl[1] : 0);
	return PROTO_HANDLED;
}

/* SELECT index: there is one database, 0. */
static enum proto_step
proto_resp_select(struct conn *c, const struct proto_resp_frame *f)
{
	if (f->argl[1] == 1 && f->argv[1][0] == '0')
		proto_resp_simple(c, "OK");
	else
		proto_resp_error(c, "ERR", "DB index is out of range");
	return PROTO_HANDLED;
}

/*
 * HELLO: RESP3 clients fall back to RESP2 on this answer. HELLO <v> AUTH
 * <user> <token> authenticates first, as Redis does, whatever the version.
 */
static enum proto_step
proto_resp_hello(struct conn *c, const struct proto_resp_frame *f)
{
	enum proto_step r;
	bool ok = true;

	if (c->set->core->auth != NULL && f->argc >= 5 && proto_resp_is(f, 2, "AUTH")) {
		r = proto_resp_login(c, f->argv[3], f->argl[3], f->argv[4], f->argl[4], &ok);
		if (r != PROTO_HANDLED || !ok)
			return r;
	} else
		core_count(c->set->core, CORE_OK);	/* the core counted the login */
	proto_resp_error(c, "NOPROTO", "sorry, this protocol version is not supported");
	return PROTO_HANDLED;
}

/* CLIENT SETNAME name: kept (bounded, no spaces, "" clears); SETINFO: accepted, not kept. */
static enum proto_step
proto_resp_client_set(struct conn *c, const struct proto_resp_frame *f)
{
	struct proto_resp_state *st;
	size_t i;

	if (proto_resp_is(f, 1, "SETNAME")) {
		for (i = 0; i < f->argl[2]; i++)
			if (f->argv[2][i] < '!' || f->argv[2][i] > '~') {
				proto_resp_error(c, "ERR", "Client names cannot contain spaces, "
				    "newlines or special characters.");
				return PROTO_HANDLED;
			}
		if (f->argl[2] > PROTO_RESP_NAME_MAX) {
			proto_resp_error(c, "ERR", "Client names are at most 128 bytes here.");
			return PROTO_HANDLED;
		}
		if ((st = proto_resp_state(c)) == NULL) {
			proto_resp_error(c, "ERR", "out of memory");
			return PROTO_HANDLED;
		}
		memcpy(st->name, f->argv[2], f->argl[2]);
		st->name[f->argl[2]] = '\0';
	}
	proto_resp_simple(c, "OK");
	return PROTO_HANDLED;
}

/* CLIENT GETNAME: the name, or the null bulk string when there is none. */
static enum proto_step
proto_resp_client_getname(struct conn *c, const struct proto_resp_frame *f)
{
	const struct proto_resp_state *st = c->proto_state;

	(void)f;
	if (st == NULL || st->name[0] == '\0')
		PROTO_RESP_LIT(c, "$-1\r\n");
	else
		proto_resp_bulk(c, st->name, strlen(st->name));
	return PROTO_HANDLED;
}

/* CLIENT ID: the connection's number, never reused while the server runs. */
static enum proto_step
proto_resp_client_id(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	proto_resp_int(c, c->id);
	return PROTO_HANDLED;
}

/*
 * This connection as one CLIENT LIST line, as Redis describes one (the fields
 * redis-py reads among them), for the subcommand sub; its length.
 */
static size_t
proto_resp_client_line(struct conn *c, const char *sub, char *line, size_t len)
{
	const struct proto_resp_state *st = c->proto_state;
	char addr[64], laddr[64];
	bool multi = st != NULL && (st->multi || st->executing);	/* Redis's flag x */
	size_t qbuf = c->in_len - c->in_off;
	int n;

	conn_addr(c, false, addr, sizeof(addr));
	conn_addr(c, true, laddr, sizeof(laddr));
	n = snprintf(line, len, "id=%" PRIu64 " addr=%s laddr=%s fd=%d name=%s "
	    "age=%" PRId64 " idle=0 flags=%s db=0 sub=0 psub=0 ssub=0 multi=%d qbuf=%zu "
	    "qbuf-free=%zu argv-mem=0 multi-mem=%zu obl=%zu oll=0 omem=0 tot-mem=%zu "
	    "events=r cmd=client|%s user=default redir=-1 resp=2\n", c->id, addr, laddr,
	    (int)c->fd, st != NULL ? st->name : "", (clk_mono_ms() - c->born_ms) / 1000,
	    multi ? "x" : "N", multi ? (int)st->nqueued : -1, qbuf, CONN_IN_SIZE - c->in_len,
	    st != NULL ? st->qcap : 0, c->out_len - c->out_off,
	    (size_t)CONN_IN_SIZE + c->out_cap + (st != NULL ? st->qcap : 0), sub);
	if (n < 0 || (size_t)n >= len)
		return strlen(line);
	return (size_t)n;
}

/* CLIENT INFO: this connection's line. */
static enum proto_step
proto_resp_client_info(struct conn *c, const struct proto_resp_frame *f)
{
	char line[512];
	size_t n = proto_resp_client_line(c, "info", line, sizeof(line));

	(void)f;
	proto_resp_bulk(c, line, n);
	return PROTO_HANDLED;
}

/*
 * A client ID as Redis reads one (string2ll): "0", or an optional '-' and
 * digits without a leading zero, within a long long.
 */
static bool
proto_resp_client_id_arg(const char *s, size_t n, long long *v)
{
	bool neg = n > 0 && s[0] == '-';
	unsigned long long u = 0, max = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
	size_t i = neg;

	if (n == 1 && s[0] == '0') {
		*v = 0;
		return true;
	}
	if (i >= n || s[i] < '1' || s[i] > '9')
		return false;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || u > (max - (unsigned)(s[i] - '0')) / 10)
			return false;
		u = u * 10 + (unsigned)(s[i] - '0');
	}
	*v = neg ? (long long)(0 - u) : (long long)u;
	return true;
}

/*
 * CLIENT LIST [TYPE normal|master|replica|slave|pubsub] | [ID id...]: the
 * connections that match, as Redis filters them, among the one listed here
 * (this connection: TYPE normal, or its own ID, once per time it is named).
 */
static enum proto_step
proto_resp_client_list(struct conn *c, const struct proto_resp_frame *f)
{
	static const char *const others[] = { "master", "replica", "slave", "pubsub" };
	char line[512], why[140], arg[64];
	unsigned copies = 1, i;
	long long id;
	size_t n;

	if (f->argc == 4 && proto_resp_is(f, 2, "TYPE")) {
		copies = proto_resp_is(f, 3, "normal");
		for (i = 0; !copies && i < sizeof(others) / sizeof(others[0]); i++)
			if (proto_resp_is(f, 3, others[i]))
				break;
		if (!copies && i == sizeof(others) / sizeof(others[0])) {
			proto_resp_sanitize(arg, sizeof(arg), f->argv[3], f->argl[3]);
			snprintf(why, sizeof(why), "Unknown client type '%s'", arg);
			proto_resp_error(c, "ERR", why);
			return PROTO_HANDLED;
		}
	} else if (f->argc > 3 && proto_resp_is(f, 2, "ID")) {
		for (copies = 0, i = 3; i < f->argc; i++) {
			if (!proto_resp_client_id_arg(f->argv[i], f->argl[i], &id)) {
				proto_resp_error(c, "ERR", "Invalid client ID");
				return PROTO_HANDLED;
			}
			copies += id >= 0 && (uint64_t)id == c->id;
		}
	} else if (f->argc != 2) {
		proto_resp_error(c, "ERR", "syntax error");
		return PROTO_HANDLED;
	}
	n = proto_resp_client_line(c, "list", line, sizeof(line));
	proto_resp_head(c, '$', (long long)(n * copies));
	for (i = 0; i < copies; i++)
		conn_put(c, line, n);
	PROTO_RESP_LIT(c, "\r\n");
	return PROTO_HANDLED;
}

/* Any other CLIENT subcommand, or none. */
static enum proto_step
proto_resp_client_other(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	proto_resp_error(c, "ERR", "unknown subcommand or wrong number of arguments for "
	    "'client' command");
	return PROTO_HANDLED;
}

/* The row documenting a name (its catch-all, else its first); NULL if none. */
static const struct proto_resp_cmd *
proto_resp_row_named(const char *name)
{
	const struct proto_resp_cmd *first = NULL;
	size_t k;

	for (k = 0; k < PROTO_RESP_NCMDS; k++)
		if (strcasecmp(proto_resp_cmds[k].name, name) == 0) {
			if (proto_resp_cmds[k].sub == NULL)
				return &proto_resp_cmds[k];
			if (first == NULL)
				first = &proto_resp_cmds[k];
		}
	return first;
}

/*
 * Command i of the table COMMAND lists: the rows' distinct names (*cmd, the
 * documenting row), then the core's words not among them (*w); false past
 * the last.
 */
static bool
proto_resp_top(size_t i, const struct proto_resp_cmd **cmd, const struct core_word **w)
{
	const struct core_word *cw;
	size_t k, j, n = 0;

	*cmd = NULL;
	*w = NULL;
	for (k = 0; k < PROTO_RESP_NCMDS; k++) {
		for (j = 0; j < k; j++)
			if (strcmp(proto_resp_cmds[j].name, proto_resp_cmds[k].name) == 0)
				break;
		if (j < k)
			continue;
		if (n++ == i) {
			*cmd = proto_resp_row_named(proto_resp_cmds[k].name);
			return true;
		}
	}
	for (k = 0; (cw = core_word_at(k)) != NULL; k++) {
		if (proto_resp_row_named(cw->name) != NULL)
			continue;
		if (n++ == i) {
			*w = cw;
			return true;
		}
	}
	return false;
}

/* The command of the table named name (any case); false when there is none. */
static bool
proto_resp_top_named(const char *name, size_t len, const struct proto_resp_cmd **cmd,
    const struct core_word **w)
{
	const char *top;
	size_t i;

	for (i = 0; proto_resp_top(i, cmd, w); i++) {
		top = *cmd != NULL ? (*cmd)->name : (*w)->name;
		if (strlen(top) == len && strncasecmp(top, name, len) == 0)
			return true;
	}
	return false;
}

/* "*<n>\r\n" or "$<n>\r\n" or ":<n>\r\n" */
static void
proto_resp_head(struct conn *c, char kind, long long n)
{
	char head[32];
	int h = snprintf(head, sizeof(head), "%c%lld\r\n", kind, n);

	conn_put(c, head, (size_t)h);
}

/* A command's name as Redis lists it: lower case, "name|sub" for a subcommand. */
static void
proto_resp_lower(struct conn *c, const char *name, const char *sub)
{
	char buf[64];
	size_t i, n = 0;

	for (i = 0; name[i] != '\0' && n < sizeof(buf) - 1; i++)
		buf[n++] = (char)tolower((unsigned char)name[i]);
	if (sub != NULL && n < sizeof(buf) - 1)
		buf[n++] = '|';
	for (i = 0; sub != NULL && sub[i] != '\0' && n < sizeof(buf) - 1; i++)
		buf[n++] = (char)tolower((unsigned char)sub[i]);
	proto_resp_bulk(c, buf, n);
}

/*
 * One COMMAND INFO entry, as Redis 7's ten fields: name, arity (negative: at
 * least), flags, first/last key and step (no keys here), ACL categories,
 * tips, key specifications, subcommands.
 */
static void
proto_resp_cmd_info(struct conn *c, const struct proto_resp_cmd *cmd,
    const struct core_word *w)
{
	size_t k, nsub = 0;

	if (w != NULL) {
		PROTO_RESP_LIT(c, "*10\r\n");
		proto_resp_lower(c, w->name, NULL);
		/* Redis's arity: negative when an optional argument may follow. */
		proto_resp_head(c, ':', w->takes_ns ? -(w->nargs + 1) : w->nargs + 1);
		PROTO_RESP_LIT(c, "*1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*0\r\n*0\r\n*0\r\n*0\r\n");
		return;
	}
	PROTO_RESP_LIT(c, "*10\r\n");
	proto_resp_lower(c, cmd->name, cmd->sub);
	proto_resp_head(c, ':', cmd->min_argc == cmd->max_argc ? (long long)cmd->min_argc :
	    -(long long)cmd->min_argc);
	PROTO_RESP_LIT(c, "*0\r\n:0\r\n:0\r\n:0\r\n*0\r\n*0\r\n*0\r\n");
	if (cmd->sub != NULL) {
		PROTO_RESP_LIT(c, "*0\r\n");
		return;
	}
	for (k = 0; k < PROTO_RESP_NCMDS; k++)
		if (proto_resp_cmds[k].sub != NULL && strcmp(proto_resp_cmds[k].name, cmd->name) == 0)
			nsub++;
	proto_resp_head(c, '*', (long long)nsub);
	for (k = 0; k < PROTO_RESP_NCMDS; k++)
		if (proto_resp_cmds[k].sub != NULL && strcmp(proto_resp_cmds[k].name, cmd->name) == 0)
			proto_resp_cmd_info(c, &proto_resp_cmds[k], NULL);
}

/*
 * The docs map of a command (flat, RESP2): summary, group, arguments from the
 * params words ("[x]" optional, "x..." multiple), and a container's
 * subcommands. redis-cli 7 builds its hints and HELP from it.
 */
static void
proto_resp_docs_map(struct conn *c, const char *group, const char *params,
    const char *summary, const struct proto_resp_cmd *container)
{
	const char *p, *e;
	size_t k, nsub = 0, nargs = 0, len;
	bool opt, many;

	for (k = 0; container != NULL && k < PROTO_RESP_NCMDS; k++)
		if (proto_resp_cmds[k].sub != NULL &&
		    strcmp(proto_resp_cmds[k].name, container->name) == 0)
			nsub++;
	for (p = params; p != NULL && *p != '\0'; p = e) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		for (e = p; *e != '\0' && *e != ' '; e++)
			;
		nargs++;
	}
	proto_resp_head(c, '*', 4 + (nargs > 0 ? 2 : 0) + (nsub > 0 ? 2 : 0));
	PROTO_RESP_LIT(c, "$7\r\nsummary\r\n");
	proto_resp_bulk(c, summary, strlen(summary));
	PROTO_RESP_LIT(c, "$5\r\ngroup\r\n");
	proto_resp_bulk(c, group, strlen(group));
	if (nargs > 0) {
		PROTO_RESP_LIT(c, "$9\r\narguments\r\n");
		proto_resp_head(c, '*', (long long)nargs);
		for (p = params; *p != '\0'; p = e) {
			while (*p == ' ')
				p++;
			if (*p == '\0')
				break;
			for (e = p; *e != '\0' && *e != ' '; e++)
				;
			len = (size_t)(e - p);
			opt = len > 2 && p[0] == '[' && p[len - 1] == ']';
			if (opt) {
				p++;
				len -= 2;
			}
			many = len > 3 && memcmp(p + len - 3, "...", 3) == 0;
			if (many)
				len -= 3;
			proto_resp_head(c, '*', opt || many ? 6 : 4);
			PROTO_RESP_LIT(c, "$4\r\nname\r\n");
			proto_resp_bulk(c, p, len);
			PROTO_RESP_LIT(c, "$4\r\ntype\r\n$6\r\nstring\r\n");
			if (opt || many) {
				PROTO_RESP_LIT(c, "$5\r\nflags\r\n");
				proto_resp_head(c, '*', (opt ? 1 : 0) + (many ? 1 : 0));
				if (opt)
					PROTO_RESP_LIT(c, "+optional\r\n");
				if (many)
					PROTO_RESP_LIT(c, "+multiple\r\n");
			}
		}
	}
	if (nsub > 0) {
		PROTO_RESP_LIT(c, "$11\r\nsubcommands\r\n");
		proto_resp_head(c, '*', 2 * (long long)nsub);
		for (k = 0; k < PROTO_RESP_NCMDS; k++) {
			const struct proto_resp_cmd *sub = &proto_resp_cmds[k];

			if (sub->sub == NULL || strcmp(sub->name, container->name) != 0)
				continue;
			proto_resp_lower(c, sub->name, sub->sub);
			proto_resp_docs_map(c, sub->group, sub->params, sub->summary, NULL);
		}
	}
}

/* A command's name and docs, one pair of COMMAND DOCS. */
static void
proto_resp_cmd_docs(struct conn *c, const struct proto_resp_cmd *cmd,
    const struct core_word *w)
{
	char params[64];

	if (w != NULL) {
		snprintf(params, sizeof(params), "%s%s%s", w->param != NULL ? w->param : "",
		    w->param != NULL && w->takes_ns ? " " : "", w->takes_ns ? "[ns]" : "");
		proto_resp_lower(c, w->name, NULL);
		proto_resp_docs_map(c, "idgen", params, w->summary, NULL);
		return;
	}
	proto_resp_lower(c, cmd->name, NULL);
	proto_resp_docs_map(c, cmd->group, cmd->params, cmd->summary, cmd);
}

/* COMMAND COUNT */
static enum proto_step
proto_resp_command_count(struct conn *c, const struct proto_resp_frame *f)
{
	const struct proto_resp_cmd *cmd;
	const struct core_word *w;
	size_t n = 0;

	(void)f;
	while (proto_resp_top(n, &cmd, &w))
		n++;
	proto_resp_int(c, n);
	return PROTO_HANDLED;
}

/* COMMAND DOCS [name...]: all, or the named ones that exist (a flat map). */
static enum proto_step
proto_resp_command_docs(struct conn *c, const struct proto_resp_frame *f)
{
	const struct proto_resp_cmd *cmd;
	const struct core_word *w;
	size_t i, n = 0;

	if (f->argc == 2) {
		while (proto_resp_top(n, &cmd, &w))
			n++;
		proto_resp_head(c, '*', 2 * (long long)n);
		for (i = 0; i < n; i++) {
			(void)proto_resp_top(i, &cmd, &w);
			proto_resp_cmd_docs(c, cmd, w);
		}
		return PROTO_HANDLED;
	}
	for (i = 2; i < f->argc; i++)
		if (proto_resp_top_named(f->argv[i], f->argl[i], &cmd, &w))
			n++;
	proto_resp_head(c, '*', 2 * (long long)n);
	for (i = 2; i < f->argc; i++)
		if (proto_resp_top_named(f->argv[i], f->argl[i], &cmd, &w))
			proto_resp_cmd_docs(c, cmd, w);
	return PROTO_HANDLED;
}

/* COMMAND INFO [name...]: all, or one entry per name (nil when unknown). */
static enum proto_step
proto_resp_command_info(struct conn *c, const struct proto_resp_frame *f)
{
	const struct proto_resp_cmd *cmd;
	const struct core_word *w;
	size_t i;

	if (f->argc == 2)
		return proto_resp_command(c, f);
	proto_resp_head(c, '*', (long long)f->argc - 2);
	for (i = 2; i < f->argc; i++) {
		if (proto_resp_top_named(f->argv[i], f->argl[i], &cmd, &w))
			proto_resp_cmd_info(c, cmd, w);
		else
			PROTO_RESP_LIT(c, "*-1\r\n");
	}
	return PROTO_HANDLED;
}

/* COMMAND LIST: the names. */
static enum proto_step
proto_resp_command_list(struct conn *c, const struct proto_resp_frame *f)
{
	const struct proto_resp_cmd *cmd;
	const struct core_word *w;
	size_t i, n = 0;

	(void)f;
	while (proto_resp_top(n, &cmd, &w))
		n++;
	proto_resp_head(c, '*', (long long)n);
	for (i = 0; i < n; i++) {
		(void)proto_resp_top(i, &cmd, &w);
		proto_resp_lower(c, cmd != NULL ? cmd->name : w->name, NULL);
	}
	return PROTO_HANDLED;
}

/* COMMAND: the whole table; COMMAND <other>: unknown subcommand. */
static enum proto_step
proto_resp_command(struct conn *c, const struct proto_resp_frame *f)
{
	const struct proto_resp_cmd *cmd;
	const struct core_word *w;
	char sub[40], why[120];
	size_t i, n = 0;

	if (f->argc > 1 && !proto_resp_is(f, 1, "INFO")) {
		proto_resp_sanitize(sub, sizeof(sub), f->argv[1], f->argl[1]);
		snprintf(why, sizeof(why), "unknown subcommand '%s'. Try COMMAND COUNT, DOCS, "
		    "INFO or LIST.", sub);
		proto_resp_error(c, "ERR", why);
		return PROTO_HANDLED;
	}
	while (proto_resp_top(n, &cmd, &w))
		n++;
	proto_resp_head(c, '*', (long long)n);
	for (i = 0; i < n; i++) {
		(void)proto_resp_top(i, &cmd, &w);
		proto_resp_cmd_info(c, cmd, w);
	}
	return PROTO_HANDLED;
}

/* TIME: unix seconds and microseconds, two bulk strings as Redis gives them. */
static enum proto_step
proto_resp_time(struct conn *c, const struct proto_resp_frame *f)
{
	int64_t us = clk_real_us();
	char num[2][24];

	(void)f;
	snprintf(num[0], sizeof(num[0]), "%" PRId64, us / 1000000);
	snprintf(num[1], sizeof(num[1]), "%" PRId64, us % 1000000);
	PROTO_RESP_LIT(c, "*2\r\n");
	proto_resp_bulk(c, num[0], strlen(num[0]));
	proto_resp_bulk(c, num[1], strlen(num[1]));
	return PROTO_HANDLED;
}

/*
 * AUTH [user] token: with auth_tokens_file, +OK and the connection's token
 * from now on, or -WRONGPASS; without, Redis's answer when no password is set.
 */
static enum proto_step
proto_resp_auth(struct conn *c, const struct proto_resp_frame *f)
{
	enum proto_step r;
	bool ok = false;

	if (f->argc > 3 || c->set->core->auth == NULL)
		core_count(c->set->core, CORE_OK);	/* else the core counts the login */
	if (f->argc > 3) {
		proto_resp_error(c, "ERR", "syntax error");
		return PROTO_HANDLED;
	}
	if (c->set->core->auth == NULL) {
		proto_resp_error(c, "ERR", "AUTH <password> called without any password "
		    "configured for the default user. Are you sure your configuration is "
		    "correct?");
		return PROTO_HANDLED;
	}
	r = proto_resp_login(c, f->argc == 3 ? f->argv[1] : NULL, f->argc == 3 ? f->argl[1] : 0,
	    f->argv[f->argc - 1], f->argl[f->argc - 1], &ok);
	if (r == PROTO_HANDLED && ok)
		proto_resp_simple(c, "OK");
	return r;
}

/* MULTI: the next commands are queued (checked, not run) until EXEC or DISCARD. */
static enum proto_step
proto_resp_multi(struct conn *c, const struct proto_resp_frame *f)
{
	struct proto_resp_state *st = c->proto_state;

	(void)f;
	if (st != NULL && st->multi) {
		proto_resp_error(c, "ERR", "MULTI calls can not be nested");
		return PROTO_HANDLED;
	}
	if ((st = proto_resp_state(c)) == NULL) {
		proto_resp_error(c, "ERR", "out of memory");
		return PROTO_HANDLED;
	}
	st->multi = true;
	proto_resp_simple(c, "OK");
	return PROTO_HANDLED;
}

/*
 * EXEC: the queued commands' replies in one array, errors among them; a
 * command refused while queuing aborts it all. Other clients are served
 * between the queued commands: IDs are unique whatever the order.
 */
static enum proto_step
proto_resp_exec(struct conn *c, const struct proto_resp_frame *f)
{
	struct proto_resp_state *st = c->proto_state;

	if (st == NULL || !st->multi) {
		proto_resp_error(c, "ERR", "EXEC without MULTI");
		return PROTO_HANDLED;
	}
	if (st->dirty) {
		proto_resp_discard(st);
		PROTO_RESP_LIT(c, "-EXECABORT Transaction discarded because of previous errors.\r\n");
		return PROTO_HANDLED;
	}
	proto_resp_head(c, '*', st->nqueued);
	if (st->nqueued == 0) {
		proto_resp_discard(st);
		return PROTO_HANDLED;
	}
	st->multi = false;
	st->executing = true;
	st->exec_off = 0;
	st->exec_left = st->nqueued;
	st->exec_used = f->used;
	return PROTO_HANDLED;
}

/* DISCARD */
static enum proto_step
proto_resp_discard_cmd(struct conn *c, const struct proto_resp_frame *f)
{
	struct proto_resp_state *st = c->proto_state;

	(void)f;
	if (st == NULL || !st->multi) {
		proto_resp_error(c, "ERR", "DISCARD without MULTI");
		return PROTO_HANDLED;
	}
	proto_resp_discard(st);
	proto_resp_simple(c, "OK");
	return PROTO_HANDLED;
}

/* WATCH key...: OK, nothing here can change under a transaction; not inside MULTI. */
static enum proto_step
proto_resp_watch(struct conn *c, const struct proto_resp_frame *f)
{
	const struct proto_resp_state *st = c->proto_state;

	(void)f;
	if (st != NULL && st->multi)
		proto_resp_error(c, "ERR", "WATCH inside MULTI is not allowed");
	else
		proto_resp_simple(c, "OK");
	return PROTO_HANDLED;
}

/* UNWATCH */
static enum proto_step
proto_resp_unwatch(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	proto_resp_simple(c, "OK");
	return PROTO_HANDLED;
}

/* RESET: out of MULTI, no name; the connection as new. */
static enum proto_step
proto_resp_reset(struct conn *c, const struct proto_resp_frame *f)
{
	struct proto_resp_state *st = c->proto_state;

	(void)f;
	if (st != NULL) {
		proto_resp_discard(st);
		st->name[0] = '\0';
	}
	proto_resp_simple(c, "RESET");
	return PROTO_HANDLED;
}

/* CONFIG GET parameter: the two clients ask for, an empty array for the rest. */
static enum proto_step
proto_resp_config(struct conn *c, const struct proto_resp_frame *f)
{
	size_t k;

	if (f->argc != 3 || !proto_resp_is(f, 1, "GET")) {
		proto_resp_error(c, "ERR", "only CONFIG GET save|appendonly is served");
		return PROTO_HANDLED;
	}
	for (k = 0; k < PROTO_RESP_NCONFIG; k++)
		if (proto_resp_is(f, 2, proto_resp_config_get[k].name)) {
			conn_put(c, proto_resp_config_get[k].reply,
			    strlen(proto_resp_config_get[k].reply));
			return PROTO_HANDLED;
		}
	PROTO_RESP_LIT(c, "*0\r\n");
	return PROTO_HANDLED;
}

static void
proto_resp_int(struct conn *c, uint64_t v)
{
	char *p = conn_reserve(c, FMT_U64_LEN + 3), *q = p;

	if (p == NULL)
		return;
	*q++ = ':';
	q += fmt_u64(q, v);
	*q++ = '\r';
	*q++ = '\n';
	conn_commit(c, (size_t)(q - p));
}

static void
proto_resp_bulk(struct conn *c, const char *s, size_t n)
{
	char head[32];
	int h = snprintf(head, sizeof(head), "$%zu\r\n", n);

	conn_put(c, head, (size_t)h);
	conn_put(c, s, n);
	PROTO_RESP_LIT(c, "\r\n");
}

static void
proto_resp_simple(struct conn *c, const char *s)
{
	PROTO_RESP_LIT(c, "+");
	conn_put(c, s, strlen(s));
	PROTO_RESP_LIT(c, "\r\n");
}

/* "-<CODE> <why>": our codes are the error prefix a Redis client shows. */
static void
proto_resp_error(struct conn *c, const char *code, const char *why)
{
	char line[300];
	int n = snprintf(line, sizeof(line), "-%s %s\r\n", code, why);

	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	conn_put(c, line, (size_t)n);
}

/* Client bytes in a reply: printable, bounded, no CR/LF to break the frame. */
static void
proto_resp_sanitize(char *out, size_t outlen, const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n && k + 1 < outlen; i++)
		out[k++] = isprint((unsigned char)s[i]) && s[i] != '\'' ? s[i] : '?';
	out[k] = '\0';
}

/* Redis's own wording; a subcommand is named "command|sub", as Redis 7 does. */
static void
proto_resp_arity(struct conn *c, const struct proto_resp_frame *f,
    const struct proto_resp_cmd *cmd)
{
	char name[64], why[140];
	size_t i, n;

	proto_resp_sanitize(name, 40, f->argv[0], f->argl[0]);
	if (cmd != NULL && cmd->sub != NULL) {
		n = strlen(name);
		name[n++] = '|';
		proto_resp_sanitize(name + n, sizeof(name) - n, cmd->sub, strlen(cmd->sub));
	}
	for (i = 0; name[i] != '\0'; i++)
		name[i] = (char)tolower((unsigned char)name[i]);
	snprintf(why, sizeof(why), "wrong number of arguments for '%s' command", name);
	proto_resp_error(c, "ERR", why);
}

static void
proto_resp_unknown(struct conn *c, const struct proto_resp_frame *f)
{
	char why[260], arg[40];
	unsigned i;
	int n;

	proto_resp_sanitize(arg, sizeof(arg), f->argv[0], f->argl[0]);
	n = snprintf(why, sizeof(why), "unknown command '%s', with args beginning with: ", arg);
	for (i = 1; i < f->argc && i <= 3 && n > 0 && (size_t)n < sizeof(why); i++) {
		proto_resp_sanitize(arg, sizeof(arg), f->argv[i], f->argl[i]);
		n += snprintf(why + n, sizeof(why) - (size_t)n, "'%s' ", arg);
	}
	proto_resp_error(c, "ERR", why);
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
	{
		char head[16];
		int h = snprintf(head, sizeof(head), "*%u\r\n", n);

		conn_put(c, head, (size_t)h);
	}
	for (i = 0; i < n; i++)
		proto_resp_bulk(c, kv[i], strlen(kv[i]));
}

/* The reply of a core command that succeeded. */
static void
proto_resp_reply(struct conn *c, const struct core_req *req, const struct core_result *res)
{
	char head[16], *p, *q;
	int h;

	switch (req->cmd) {
	case CORE_CMD_ID:
		proto_resp_int(c, res->ids[0]);
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
		PROTO_RESP_LIT(c, "*2\r\n");
		proto_resp_int(c, res->first);
		proto_resp_int(c, res->count);
		return;
	case CORE_CMD_DECODE:
		proto_resp_decode(c, &res->dec);
		return;
	case CORE_CMD_B58:
		proto_resp_bulk(c, res->dec.b58, B58_LEN);
		return;
	case CORE_CMD_STATS:
		proto_resp_info(c, NULL, 0);
		return;
	case CORE_CMD_AUTH:		/* answered by proto_resp_auth */
		break;
	case CORE_CMD_PING:
		return;		/* proto_resp_ping answers, never the core */
	}
}

/* One "name:value" line under its "# Section" header. */
static void
proto_resp_info_line(const struct metric_def *def, const char *name, int server,
    const struct metric_value *v, void *arg)
{
	struct proto_resp_info *in = arg;
	int n;

	(void)server;
	if (in->want != NULL && (strlen(def->section) != in->wantlen ||
	    strncasecmp(def->section, in->want, in->wantlen) != 0))
		return;
	if (in->section == NULL || strcmp(in->section, def->section) != 0) {
		n = snprintf(in->buf + in->len, in->cap - in->len, "%s# %c%s\r\n",
		    in->section == NULL ? "" : "\r\n", toupper((unsigned char)def->section[0]),
		    def->section + 1);
		if (n > 0 && (size_t)n < in->cap - in->len)
			in->len += (size_t)n;
		in->section = def->section;
	}
	if (v->is_text)
		n = snprintf(in->buf + in->len, in->cap - in->len, "%s:%s\r\n", name, v->text);
	else
		n = snprintf(in->buf + in->len, in->cap - in->len, "%s:%" PRIu64 "\r\n", name,
		    v->num);
	if (n > 0 && (size_t)n < in->cap - in->len)
		in->len += (size_t)n;
}

/* INFO [section]: Redis INFO text built from the metrics table. */
static void
proto_resp_info(struct conn *c, const char *want, size_t wantlen)
{
	struct proto_resp_info in = { NULL, 0, PROTO_RESP_INFO_MAX, want, wantlen, NULL };

	if (want != NULL && ((wantlen == 3 && strncasecmp(want, "all", 3) == 0) ||
	    (wantlen == 7 && strncasecmp(want, "default", 7) == 0) ||
	    (wantlen == 10 && strncasecmp(want, "everything", 10) == 0)))
		in.want = NULL;
	in.buf = malloc(in.cap);
	if (in.buf == NULL) {
		proto_resp_error(c, "ERR", "out of memory");
		return;
	}
	metrics_walk(c->set->metrics, proto_resp_info_line, &in);
	proto_resp_bulk(c, in.buf, in.len);
	free(in.buf);
}
