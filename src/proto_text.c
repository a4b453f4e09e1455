/*
 * proto_text.c - the text protocol: split request lines, run them in the
 * core, format the replies.
 */
#include "proto_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "metrics.h"
#include "reqlat.h"

const char proto_text_help[] =
    "ID [<ns>] - one ID (ns: a namespace, default the default sequence)\n"
    "IDS <n> [<ns>] - n unique IDs ascending on one line (1..1000)\n"
    "BLOCK <n> [<ns>] - first ID and n: every ID in first..first+n-1 is yours (1..4096)\n"
    "DECODE <id> - which path made an ID (decimal or 11-character base58): ticket "
    "block/server or snowflake time/worker/seq\n"
    "B58 <id> - the ID's sortable 11-character base58 form\n"
    "STATS - STAT <name> <value> lines, then END\n"
    "PING - PONG\n"
    "AUTH <token> - authenticate this connection (when auth_tokens_file is set)\n"
    "HELP - this list\n"
    "QUIT - close the connection\n"
    "END\n";

static enum proto_step	proto_text_one(struct conn *c, bool eof);
static enum proto_step	proto_text_line(struct conn *c, const char *line, size_t len);
static void		proto_text_reply(struct conn *c, const struct core_req *req,
			    const struct core_result *res);
static void		proto_text_err(struct conn *c, const struct core_result *res);
static void		proto_text_stat(const struct metric_def *def, const char *name,
			    int server, const struct metric_value *v, void *arg);
static bool		proto_text_space(char c);
static enum proto_text_kind proto_text_bad(const char **why, const char *msg);
static enum proto_text_kind proto_text_word(const char *word, size_t len, size_t *nargs);
static enum proto_step	proto_text_auth(struct conn *c, const struct core_req *req);

const struct proto_ops proto_text_ops = { "text", REQLAT_TEXT, proto_text_one, NULL };

/*
 * The words the text protocol answers itself, before the core's, and their
 * number of arguments; proto_text_line runs them by kind.
 */
static const struct {
	const char		*name;
	enum proto_text_kind	 kind;
	size_t			 nargs;
} proto_text_words[] = {
	{ "HELP",	PROTO_TEXT_HELP,	0 },
	{ "QUIT",	PROTO_TEXT_QUIT,	0 },
	{ "AUTH",	PROTO_TEXT_AUTH,	1 },
};
#define PROTO_TEXT_NWORDS	(sizeof(proto_text_words) / sizeof(proto_text_words[0]))

/* Space or tab separate words. */
static bool
proto_text_space(char c)
{
	return c == ' ' || c == '\t';
}

/* A request that does not parse: why says it. */
static enum proto_text_kind
proto_text_bad(const char **why, const char *msg)
{
	*why = msg;
	return PROTO_TEXT_BAD;
}

/* The kind of a word the text protocol answers itself; PROTO_TEXT_CORE if not one. */
static enum proto_text_kind
proto_text_word(const char *word, size_t len, size_t *nargs)
{
	size_t k;

	for (k = 0; k < PROTO_TEXT_NWORDS; k++)
		if (strlen(proto_text_words[k].name) == len &&
		    strncasecmp(proto_text_words[k].name, word, len) == 0) {
			*nargs = proto_text_words[k].nargs;
			return proto_text_words[k].kind;
		}
	return PROTO_TEXT_CORE;
}

/* Splits a line into a command word and at most one argument. */
enum proto_text_kind
proto_text_parse(const char *line, size_t len, struct core_req *req, const char **why)
{
	const char *word[3];
	size_t wlen[3], nwords = 0, i = 0, nargs = 0;
	const struct core_word *w;
	enum proto_text_kind kind;
	bool takes_ns = false;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	req->arg = NULL;
	req->arglen = 0;
	req->ns = NULL;
	req->nslen = 0;
	/* The most common request by far, without the general word split. */
	if (len == 2 && (line[0] | 0x20) == 'i' && (line[1] | 0x20) == 'd') {
		req->cmd = CORE_CMD_ID;
		return PROTO_TEXT_CORE;
	}
	if (memchr(line, '\0', len) != NULL)
		return proto_text_bad(why, "NUL byte in request");
	while (i < len) {
		size_t start;

		while (i < len && proto_text_space(line[i]))
			i++;
		if (i == len)
			break;
		if (nwords == 3)
			return proto_text_bad(why, "too many arguments");
		start = i;
		while (i < len && !proto_text_space(line[i]))
			i++;
		word[nwords] = line + start;
		wlen[nwords++] = i - start;
	}
	if (nwords == 0)
		return proto_text_bad(why, "empty request");
	/* Our own words, then the core's: the same arity rule, the same argument. */
	if ((kind = proto_text_word(word[0], wlen[0], &nargs)) == PROTO_TEXT_CORE) {
		if ((w = core_lookup(word[0], wlen[0])) == NULL)
			return proto_text_bad(why, "unknown command (try HELP)");
		req->cmd = w->cmd;
		nargs = (size_t)w->nargs;
		takes_ns = w->takes_ns;
	}
	if (nwords != nargs + 1 && !(takes_ns && nwords == nargs + 2))
		return proto_text_bad(why, nargs ? "missing or extra argument" :
		    "unexpected argument");
	if (nargs == 1) {
		req->arg = word[1];
		req->arglen = wlen[1];
	}
	if (nwords == nargs + 2) {
		/* ID orders, IDS 10 orders, BLOCK 100 orders: the namespace last. */
		req->ns = word[nwords - 1];
		req->nslen = wlen[nwords - 1];
	}
	return kind;
}

/*
 * Takes one line: a complete one, or at EOF the unterminated rest (the peer
 * is done sending: it is still a request).
 */
static enum proto_step
proto_text_one(struct conn *c, bool eof)
{
	char *start = c->in + c->in_off, *nl;
	size_t avail = c->in_len - c->in_off, len;
	struct core_result res;
	enum proto_step r;

	nl = memchr(start, '\n', avail);
	/* No end yet: more input, unless what came is already too long. */
	if (nl == NULL && !eof && avail <= PROTO_LINE_MAX + 1)
		return PROTO_NEED_MORE;
	len = nl != NULL ? (size_t)(nl - start) : avail;
	if (len > PROTO_LINE_MAX + (size_t)(len > 0 && start[len - 1] == '\r')) {
		core_reject(c->set->core, CORE_ERR_BADREQ, "line too long", &res);
		proto_text_err(c, &res);
		return PROTO_CLOSE;
	}
	r = proto_text_line(c, start, len);
	if (r != PROTO_WAIT)
		c->in_off += nl != NULL ? len + 1 : len;
	return r;
}

/* Runs one request line, appending its reply. */
static enum proto_step
proto_text_line(struct conn *c, const char *line, size_t len)
{
	struct core *core = c->set->core;
	struct core_result res;
	struct core_req req;
	const char *why = "";

	switch (proto_text_parse(line, len, &req, &why)) {
	case PROTO_TEXT_BAD:
		core_reject(core, CORE_ERR_BADREQ, why, &res);
		proto_text_err(c, &res);
		return PROTO_HANDLED;
	case PROTO_TEXT_HELP:
		core_count(core, CORE_OK);
		conn_put(c, proto_text_help, strlen(proto_text_help));
		return PROTO_HANDLED;
	case PROTO_TEXT_QUIT:
		core_count(core, CORE_OK);
		return PROTO_CLOSE;
	case PROTO_TEXT_AUTH:
		return proto_text_auth(c, &req);
	case PROTO_TEXT_CORE:
		break;
	}
	req.sess = &c->auth;
	if (core_exec(core, &c->waiter, &req, &res) == CORE_PENDING)
		return PROTO_WAIT;
	if (res.err != CORE_OK)
		proto_text_err(c, &res);
	else
		proto_text_reply(c, &req, &res);
	return c->closing ? PROTO_CLOSE : PROTO_HANDLED;
}

/* AUTH <token>: the connection's token from now on, or ERR WRONGPASS (maybe held). */
static enum proto_step
proto_text_auth(struct conn *c, const struct core_req *req)
{
	struct core *core = c->set->core;
	struct core_req auth = { CORE_CMD_AUTH, NULL, 0, &c->auth, NULL, 0 };
	struct core_result res;

	if (core->auth != NULL)
		auth_sess_present(&c->auth, req->arg, req->arglen, NULL, 0, core->auth);
	if (core_exec(core, &c->waiter, &auth, &res) == CORE_PENDING)
		return PROTO_WAIT;	/* the line is read again when resumed */
	/* Answered: the token's bytes leave the input buffer, which is reused. */
	explicit_bzero((char *)(uintptr_t)req->arg, req->arglen);
	if (res.err != CORE_OK)
		proto_text_err(c, &res);
	else
		conn_put(c, "OK\n", 3);
	return PROTO_HANDLED;
}

/* "ERR <CODE> <why>" */
static void
proto_text_err(struct conn *c, const struct core_result *res)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "ERR %s %s\n", core_err_info(res->err)->code,
	    res->why);

	conn_put(c, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* One "STAT name value" line of the STATS reply. */
static void
proto_text_stat(const struct metric_def *def, const char *name, int server,
    const struct metric_value *v, void *arg)
{
	char line[256];
	int n;

	(void)def;
	(void)server;
	if (v->is_text)
		n = snprintf(line, sizeof(line), "STAT %s %s\n", name, v->text);
	else
		n = snprintf(line, sizeof(line), "STAT %s %" PRIu64 "\n", name, v->num);
	conn_put(arg, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

size_t
proto_text_result(char *buf, enum core_cmd cmd, const struct core_result *res, char sep)
{
	size_t n;

	switch (cmd) {
	case CORE_CMD_ID:
	case CORE_CMD_IDS:
		n = fmt_ids_framed(buf, res->ids, res->count, "", "", sep, NULL);
		break;
	case CORE_CMD_BLOCK:
		n = fmt_u64(buf, res->first);
		buf[n++] = ' ';
		n += fmt_u64(buf + n, res->count);
		break;
	case CORE_CMD_DECODE:
		return fmt_decode(buf, &res->dec, res->from_b58);
	case CORE_CMD_B58:
		n = strlen(res->dec.b58);
		memcpy(buf, res->dec.b58, n);
		break;
	default:
		return 0;
	}
	buf[n++] = '\n';
	return n;
}

/* The reply of a request that succeeded. */
static void
proto_text_reply(struct conn *c, const struct core_req *req, const struct core_result *res)
{
	char *p;

	switch (req->cmd) {
	case CORE_CMD_STATS:
		metrics_walk(c->set->metrics, proto_text_stat, c);
		conn_put(c, "END\n", 4);
		return;
	case CORE_CMD_PING:
		conn_put(c, "PONG\n", 5);
		return;
	case CORE_CMD_AUTH:		/* proto_text_auth answers it */
		return;
	default:
		if ((p = conn_reserve(c, PROTO_TEXT_RESULT_MAX(res->count))) != NULL)
			conn_commit(c, proto_text_result(p, req->cmd, res, ' '));
	}
}
