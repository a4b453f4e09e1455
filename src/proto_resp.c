/*
 * proto_resp.c - RESP2: parse multibulk (and inline) requests, run them in the
 * core, reply as Redis does.
 */
#include "proto_resp.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fmt.h"
#include "metrics.h"

#define PROTO_RESP_HEADER_MAX	32	/* "*<count>\r\n" or "$<len>\r\n" */
#define PROTO_RESP_INFO_MAX	16384	/* the INFO reply */
#define PROTO_RESP_LIT(c, s)	conn_put((c), (s), sizeof(s) - 1)	/* a literal reply */

#define PROTO_RESP_ANY		PROTO_RESP_ARGS_MAX	/* no bound but the frame's */

/* A command RESP answers itself: its words, their count, what runs it. */
struct proto_resp_cmd {
	const char	*name;
	const char	*sub;		/* the first argument, any case; NULL: any */
	unsigned	 min_argc;	/* words, the name included */
	unsigned	 max_argc;
	enum proto_step	(*run)(struct conn *c, const struct proto_resp_frame *f);
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
static enum proto_step	proto_resp_run(struct conn *c, const struct proto_resp_frame *f);
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
static enum proto_step	proto_resp_client_other(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_command_count(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	proto_resp_command(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	proto_resp_config(struct conn *c, const struct proto_resp_frame *f);
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
static void		proto_resp_arity(struct conn *c, const struct proto_resp_frame *f);
static void		proto_resp_unknown(struct conn *c, const struct proto_resp_frame *f);
static void		proto_resp_reply(struct conn *c, const struct core_req *req,
			    const struct core_result *res);
static void		proto_resp_decode(struct conn *c, const struct decode *d);
static void		proto_resp_info(struct conn *c, const char *want, size_t wantlen);
static void		proto_resp_info_line(const struct metric_def *def, const char *name,
			    int server, const struct metric_value *v, void *arg);
static void		proto_resp_sanitize(char *out, size_t outlen, const char *s, size_t n);

const struct proto_ops proto_resp_ops = { "resp", proto_resp_one };

/*
 * What RESP answers itself, without the core: PING (which takes a message
 * here) and what real clients send at connect. A row matches the command name
 * and, when it has one, the first argument; the first row that matches is
 * run, so a command's catch-all row comes after its subcommands. The word
 * counts include the name, as Redis's arity does.
 */
static const struct proto_resp_cmd proto_resp_cmds[] = {
	{ "PING",	NULL,		1, 2,			proto_resp_ping },
	{ "QUIT",	NULL,		1, PROTO_RESP_ANY,	proto_resp_quit },
	{ "ECHO",	NULL,		2, 2,			proto_resp_echo },
	{ "INFO",	NULL,		1, 2,			proto_resp_info_cmd },
	{ "SELECT",	NULL,		2, 2,			proto_resp_select },
	{ "HELLO",	NULL,		1, PROTO_RESP_ANY,	proto_resp_hello },
	{ "CLIENT",	"SETNAME",	2, PROTO_RESP_ANY,	proto_resp_client_set },
	{ "CLIENT",	"SETINFO",	2, PROTO_RESP_ANY,	proto_resp_client_set },
	{ "CLIENT",	"GETNAME",	2, PROTO_RESP_ANY,	proto_resp_client_getname },
	{ "CLIENT",	"ID",		2, PROTO_RESP_ANY,	proto_resp_client_id },
	{ "CLIENT",	NULL,		1, PROTO_RESP_ANY,	proto_resp_client_other },
	{ "COMMAND",	"COUNT",	2, PROTO_RESP_ANY,	proto_resp_command_count },
	{ "COMMAND",	NULL,		1, PROTO_RESP_ANY,	proto_resp_command },
	{ "CONFIG",	NULL,		1, PROTO_RESP_ANY,	proto_resp_config },
};
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
	struct proto_resp_frame f;
	const char *why = NULL;
	enum proto_step r;
	char msg[128];

	/* The most common request by far, without the general frame parse. */
	if (c->in_len - c->in_off >= 12 && memcmp(c->in + c->in_off, "*1\r\n$2\r\n", 8) == 0 &&
	    (c->in[c->in_off + 8] | 0x20) == 'i' && (c->in[c->in_off + 9] | 0x20) == 'd' &&
	    c->in[c->in_off + 10] == '\r' && c->in[c->in_off + 11] == '\n') {
		struct core_req req = { CORE_CMD_ID, NULL, 0 };
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
	if (r != PROTO_WAIT)
		c->in_off += f.used;
	return r;
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

/* Runs one request: what RESP answers itself, else a command of the core. */
static enum proto_step
proto_resp_run(struct conn *c, const struct proto_resp_frame *f)
{
	const struct proto_resp_cmd *cmd = proto_resp_find(f);
	const struct core_word *w;

	if (cmd != NULL) {
		/* The core never sees these: counted here, a malformed one too. */
		core_count(c->set->core, CORE_OK);
		if (f->argc < cmd->min_argc || f->argc > cmd->max_argc) {
			proto_resp_arity(c, f);
			return PROTO_HANDLED;
		}
		return cmd->run(c, f);
	}
	w = core_lookup(f->argv[0], f->argl[0]);
	if (w == NULL) {
		core_count(c->set->core, CORE_ERR_BADREQ);
		proto_resp_unknown(c, f);
		return PROTO_HANDLED;
	}
	return proto_resp_core(c, f, w);
}

/* A command of the core: its arity here, its arguments and counting there. */
static enum proto_step
proto_resp_core(struct conn *c, const struct proto_resp_frame *f, const struct core_word *w)
{
	struct core *core = c->set->core;
	struct core_result res;
	struct core_req req;

	if (f->argc != (unsigned)w->nargs + 1) {
		core_count(core, CORE_ERR_BADREQ);
		proto_resp_arity(c, f);
		return PROTO_HANDLED;
	}
	req.cmd = w->cmd;
	req.arg = w->nargs ? f->argv[1] : NULL;
	req.arglen = w->nargs ? f->argl[1] : 0;
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

/* HELLO: RESP3 clients fall back to RESP2 on this answer. */
static enum proto_step
proto_resp_hello(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	proto_resp_error(c, "NOPROTO", "sorry, this protocol version is not supported");
	return PROTO_HANDLED;
}

/* CLIENT SETNAME / SETINFO: accepted, not kept. */
static enum proto_step
proto_resp_client_set(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	proto_resp_simple(c, "OK");
	return PROTO_HANDLED;
}

/* CLIENT GETNAME: no name is kept, so the null bulk string. */
static enum proto_step
proto_resp_client_getname(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	PROTO_RESP_LIT(c, "$-1\r\n");
	return PROTO_HANDLED;
}

/* CLIENT ID: the socket, unique among the open connections. */
static enum proto_step
proto_resp_client_id(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	proto_resp_int(c, (uint64_t)c->fd);
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

/* COMMAND COUNT: no command table is published. */
static enum proto_step
proto_resp_command_count(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	proto_resp_int(c, 0);
	return PROTO_HANDLED;
}

/* COMMAND [...]: an empty table; clients go on without one. */
static enum proto_step
proto_resp_command(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	PROTO_RESP_LIT(c, "*0\r\n");
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

/* Redis's own wording. */
static void
proto_resp_arity(struct conn *c, const struct proto_resp_frame *f)
{
	char name[40], why[120];
	size_t i;

	proto_resp_sanitize(name, sizeof(name), f->argv[0], f->argl[0]);
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
	const char *kv[20];
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
	unsigned i;
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
		for (i = 0; i < res->count; i++) {
			*q++ = ':';
			q += fmt_u64(q, res->ids[i]);
			*q++ = '\r';
			*q++ = '\n';
		}
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
