/*
 * resp_admin.c - what RESP answers itself, without the core: the connection's
 * commands (HELLO, AUTH, CLIENT, SELECT, PING ...), the command table
 * (COMMAND), INFO, TIME, CONFIG GET, and the transaction's commands; the
 * connection's name and MULTI queue are kept here (resp_admin.h).
 */
#include "resp_admin.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clk.h"
#include "metrics.h"
#include "resp_reply.h"

/*
 * The INFO reply, written whole to a memory stream: no fixed buffer to cut it.
 * Its size is the metrics table's: at most max_namespaces (512) namespaces' rows
 * and SERVER_MAX servers' (38 KB measured at 512 names of 48 characters).
 */
struct resp_admin_info {
	FILE		*f;
	const char	*want;		/* a section, or NULL for all */
	size_t		 wantlen;
	const char	*section;	/* the last header written */
};

static bool		resp_admin_is(const struct proto_resp_frame *f, unsigned i,
			    const char *word);
static enum proto_step	resp_admin_err(struct conn *c, const char *why);
static enum proto_step	resp_admin_login(struct conn *c, const char *user, size_t userlen,
			    const char *tok, size_t toklen, bool *ok);
static enum proto_step	resp_admin_ping(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_quit(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_info_cmd(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_select(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_hello(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_client_set(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_client_getname(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	resp_admin_client_id(struct conn *c, const struct proto_resp_frame *f);
static size_t		resp_admin_client_line(struct conn *c, const char *sub, char *line,
			    size_t len);
static enum proto_step	resp_admin_client_info(struct conn *c,
			    const struct proto_resp_frame *f);
static bool		resp_admin_client_id_arg(const char *s, size_t n, long long *v);
static enum proto_step	resp_admin_client_list(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	resp_admin_client_other(struct conn *c,
			    const struct proto_resp_frame *f);
static const struct resp_cmd *resp_admin_row_named(const char *name, size_t len);
static bool		resp_admin_top(size_t i, const struct resp_cmd **cmd,
			    const struct core_word **w);
static bool		resp_admin_top_named(const char *name, size_t len,
			    const struct resp_cmd **cmd, const struct core_word **w);
static void		resp_admin_lower(struct conn *c, const char *name, const char *sub);
static void		resp_admin_cmd_info(struct conn *c, const struct resp_cmd *cmd,
			    const struct core_word *w);
static void		resp_admin_docs_map(struct conn *c, const char *group,
			    const char *params, const char *summary,
			    const struct resp_cmd *container);
static void		resp_admin_cmd_docs(struct conn *c, const struct resp_cmd *cmd,
			    const struct core_word *w);
static enum proto_step	resp_admin_all(struct conn *c, char kind);
static enum proto_step	resp_admin_command_all(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	resp_admin_command_docs(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	resp_admin_command_info(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	resp_admin_command(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_time(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_auth(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_multi(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_exec(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_discard_cmd(struct conn *c,
			    const struct proto_resp_frame *f);
static enum proto_step	resp_admin_watch(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_reset(struct conn *c, const struct proto_resp_frame *f);
static enum proto_step	resp_admin_config(struct conn *c, const struct proto_resp_frame *f);
static void		resp_admin_info_line(const struct metric_def *def, const char *name,
			    int server, const struct metric_value *v, void *arg);

/*
 * What RESP answers itself, without the core: PING (which takes a message
 * here), what real clients send at connect, transactions and the command
 * table. A row matches the command name and, when it has one, the first
 * argument; the first row that matches is run, so a command's catch-all row
 * comes after its subcommands (and documents the command itself). The word
 * counts include the name, as Redis's arity does. COMMAND lists these rows,
 * then the core's words.
 */
#define NQ	RESP_CMD_NOQUEUE
#define OP	RESP_CMD_OPEN
#define SC	RESP_CMD_SELF
static const struct resp_cmd resp_admin_cmds[] = {
	{ "PING",	NULL,		1, 2,	0,	resp_admin_ping,
	    "connection", "[message]", "PONG, or the message back" },
	{ "QUIT",	NULL,		1, RESP_CMD_ANY, NQ | OP, resp_admin_quit,
	    "connection", "", "OK, then the connection closes" },
	{ "ECHO",	NULL,		2, 2,	0,	resp_admin_ping,
	    "connection", "message", "The message back" },
	{ "INFO",	NULL,		1, 2,	0,	resp_admin_info_cmd,
	    "server", "[section]", "The counters, as Redis INFO text (the same table as STATS)" },
	{ "SELECT",	NULL,		2, 2,	0,	resp_admin_select,
	    "connection", "index", "Database 0 is the only one" },
	{ "HELLO",	NULL,		1, RESP_CMD_ANY, NQ | OP | SC, resp_admin_hello,
	    "connection", "[protover [AUTH username password]]",
	    "NOPROTO: this server speaks RESP2 (AUTH is checked first)" },
	{ "AUTH",	NULL,		2, RESP_CMD_ANY, NQ | OP | SC, resp_admin_auth,
	    "connection", "[username] password",
	    "Authenticates with a token of auth_tokens_file (username: the token's name)" },
	{ "CLIENT",	"SETNAME",	3, 3,	0,	resp_admin_client_set,
	    "connection", "connection-name", "Names this connection (at most 128 bytes)" },
	{ "CLIENT",	"SETINFO",	2, RESP_CMD_ANY, 0, resp_admin_client_set,
	    "connection", "attr value", "Accepted, not kept" },
	{ "CLIENT",	"GETNAME",	2, RESP_CMD_ANY, 0, resp_admin_client_getname,
	    "connection", "", "This connection's name, or nil" },
	{ "CLIENT",	"ID",		2, RESP_CMD_ANY, 0, resp_admin_client_id,
	    "connection", "", "This connection's number, unique while the server runs" },
	{ "CLIENT",	"INFO",		2, 2,	0,	resp_admin_client_info,
	    "connection", "", "This connection, as one CLIENT LIST line" },
	{ "CLIENT",	"LIST",		2, RESP_CMD_ANY, 0, resp_admin_client_list,
	    "connection", "[TYPE|ID] [type|client-id...]",
	    "This connection only (no other is listed), filtered as Redis does" },
	{ "CLIENT",	NULL,		1, RESP_CMD_ANY, RESP_CMD_REFUSE, resp_admin_client_other,
	    "connection", "", "Connection commands" },
	{ "COMMAND",	"COUNT",	2, RESP_CMD_ANY, 0, resp_admin_command_all,
	    "server", "", "How many commands there are" },
	{ "COMMAND",	"DOCS",		2, RESP_CMD_ANY, 0, resp_admin_command_docs,
	    "server", "[command-name...]", "Help on commands, for redis-cli's hints" },
	{ "COMMAND",	"INFO",		2, RESP_CMD_ANY, 0, resp_admin_command_info,
	    "server", "[command-name...]", "Commands' arity" },
	{ "COMMAND",	"LIST",		2, 2,	0,	resp_admin_command_all,
	    "server", "", "The command names" },
	{ "COMMAND",	NULL,		1, RESP_CMD_ANY, RESP_CMD_SUBS, resp_admin_command,
	    "server", "", "The command table" },
	{ "CONFIG",	NULL,		1, RESP_CMD_ANY, 0, resp_admin_config,
	    "server", "GET parameter", "Only save and appendonly, for redis-benchmark" },
	{ "TIME",	NULL,		1, 1,	0,	resp_admin_time,
	    "server", "", "The server's clock: unix seconds, microseconds" },
	{ "MULTI",	NULL,		1, 1,	NQ,	resp_admin_multi,
	    "transactions", "", "Queues the next commands until EXEC" },
	{ "EXEC",	NULL,		1, 1,	NQ,	resp_admin_exec,
	    "transactions", "", "Runs the queued commands, their replies in one array" },
	{ "DISCARD",	NULL,		1, 1,	NQ,	resp_admin_discard_cmd,
	    "transactions", "", "Drops the queued commands" },
	{ "WATCH",	NULL,		2, RESP_CMD_ANY, NQ, resp_admin_watch,
	    "transactions", "key...", "OK: there are no keys to change" },
	{ "UNWATCH",	NULL,		1, 1,	0,	resp_admin_watch,
	    "transactions", "", "OK" },
	{ "RESET",	NULL,		1, 1,	NQ,	resp_admin_reset,
	    "connection", "", "Leaves MULTI, forgets the name: RESET" },
};
#undef NQ
#undef OP
#undef SC
#define RESP_ADMIN_NCMDS	(sizeof(resp_admin_cmds) / sizeof(resp_admin_cmds[0]))

/* CONFIG GET: the parameters clients ask for at connect, and our answer. */
static const struct {
	const char	*name;
	const char	*reply;
} resp_admin_config_get[] = {
	{ "save",	"*2\r\n$4\r\nsave\r\n$0\r\n\r\n" },
	{ "appendonly",	"*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n" },
};
#define RESP_ADMIN_NCONFIG \
	(sizeof(resp_admin_config_get) / sizeof(resp_admin_config_get[0]))

/* The connection goes: what it kept goes with it. */
void
resp_admin_free(struct conn *c)
{
	struct resp_state *st = c->proto_state;

	if (st == NULL)
		return;
	free(st->queue);
	free(st);
	c->proto_state = NULL;
}

/* The connection's state, made on first use; NULL when out of memory. */
struct resp_state *
resp_admin_state(struct conn *c)
{
	if (c->proto_state == NULL)
		c->proto_state = calloc(1, sizeof(struct resp_state));
	return c->proto_state;
}

/* Leaves MULTI (or the end of an EXEC): the queue is dropped. */
void
resp_admin_discard(struct resp_state *st)
{
	free(st->queue);
	st->queue = NULL;
	st->qlen = st->qcap = st->exec_off = st->exec_used = 0;
	st->nqueued = st->exec_left = 0;
	st->multi = st->dirty = st->executing = false;
}

/* True when argument i is word, in any case. */
static bool
resp_admin_is(const struct proto_resp_frame *f, unsigned i, const char *word)
{
	return i < f->argc && f->argl[i] == strlen(word) &&
	    strncasecmp(f->argv[i], word, f->argl[i]) == 0;
}

/* An -ERR reply; the request is handled. */
static enum proto_step
resp_admin_err(struct conn *c, const char *why)
{
	resp_reply_error(c, "ERR", why);
	return PROTO_HANDLED;
}

/* The row of what RESP answers itself, NULL when the request is not one of them. */
const struct resp_cmd *
resp_admin_find(const struct proto_resp_frame *f)
{
	const struct resp_cmd *cmd;
	size_t k;

	for (k = 0; k < RESP_ADMIN_NCMDS; k++) {
		cmd = &resp_admin_cmds[k];
		if (resp_admin_is(f, 0, cmd->name) &&
		    (cmd->sub == NULL || resp_admin_is(f, 1, cmd->sub)))
			return cmd;
	}
	return NULL;
}

/*
 * A token given by AUTH or HELLO (user: the name given, or NULL): PROTO_WAIT
 * while a failure's reply is held, else PROTO_HANDLED with *ok, the error
 * answered when not ok.
 */
static enum proto_step
resp_admin_login(struct conn *c, const char *user, size_t userlen, const char *tok,
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
		resp_reply_error(c, core_err_info(res.err)->code, res.why);
	return PROTO_HANDLED;
}

/* PING [message]: PONG, or the message back; ECHO message: the message. */
static enum proto_step
resp_admin_ping(struct conn *c, const struct proto_resp_frame *f)
{
	if (f->argc == 2)
		resp_reply_bulk(c, f->argv[1], f->argl[1]);
	else
		resp_reply_simple(c, "PONG");
	return PROTO_HANDLED;
}

/* QUIT: OK, then the connection closes once it is flushed. */
static enum proto_step
resp_admin_quit(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	resp_reply_simple(c, "OK");
	return PROTO_CLOSE;
}

/* INFO [section] */
static enum proto_step
resp_admin_info_cmd(struct conn *c, const struct proto_resp_frame *f)
{
	resp_admin_info(c, f->argc == 2 ? f->argv[1] : NULL, f->argc == 2 ? f->argl[1] : 0);
	return PROTO_HANDLED;
}

/* SELECT index: there is one database, 0. */
static enum proto_step
resp_admin_select(struct conn *c, const struct proto_resp_frame *f)
{
	if (f->argl[1] == 1 && f->argv[1][0] == '0')
		resp_reply_simple(c, "OK");
	else
		resp_reply_error(c, "ERR", "DB index is out of range");
	return PROTO_HANDLED;
}

/*
 * HELLO: RESP3 clients fall back to RESP2 on this answer. HELLO <v> AUTH
 * <user> <token> authenticates first, as Redis does, whatever the version.
 */
static enum proto_step
resp_admin_hello(struct conn *c, const struct proto_resp_frame *f)
{
	enum proto_step r;
	bool ok = true;

	if (c->set->core->auth != NULL && f->argc >= 5 && resp_admin_is(f, 2, "AUTH")) {
		r = resp_admin_login(c, f->argv[3], f->argl[3], f->argv[4], f->argl[4], &ok);
		if (r != PROTO_HANDLED || !ok)
			return r;
	} else
		core_count(c->set->core, CORE_OK);	/* the core counted the login */
	resp_reply_error(c, "NOPROTO", "sorry, this protocol version is not supported");
	return PROTO_HANDLED;
}

/* CLIENT SETNAME name: kept (bounded, no spaces, "" clears); SETINFO: accepted, not kept. */
static enum proto_step
resp_admin_client_set(struct conn *c, const struct proto_resp_frame *f)
{
	struct resp_state *st;
	size_t i;

	if (resp_admin_is(f, 1, "SETNAME")) {
		for (i = 0; i < f->argl[2]; i++)
			if (f->argv[2][i] < '!' || f->argv[2][i] > '~')
				return resp_admin_err(c, "Client names cannot contain spaces, "
				    "newlines or special characters.");
		if (f->argl[2] > RESP_CMD_NAME_MAX)
			return resp_admin_err(c, "Client names are at most 128 bytes here.");
		if ((st = resp_admin_state(c)) == NULL)
			return resp_admin_err(c, "out of memory");
		memcpy(st->name, f->argv[2], f->argl[2]);
		st->name[f->argl[2]] = '\0';
	}
	resp_reply_simple(c, "OK");
	return PROTO_HANDLED;
}

/* CLIENT GETNAME: the name, or the null bulk string when there is none. */
static enum proto_step
resp_admin_client_getname(struct conn *c, const struct proto_resp_frame *f)
{
	const struct resp_state *st = c->proto_state;

	(void)f;
	if (st == NULL || st->name[0] == '\0')
		RESP_REPLY_LIT(c, "$-1\r\n");
	else
		resp_reply_bulk(c, st->name, strlen(st->name));
	return PROTO_HANDLED;
}

/* CLIENT ID: the connection's number, never reused while the server runs. */
static enum proto_step
resp_admin_client_id(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	resp_reply_int(c, c->id);
	return PROTO_HANDLED;
}

/*
 * This connection as one CLIENT LIST line, as Redis describes one (the fields
 * redis-py reads among them), for the subcommand sub; its length.
 */
static size_t
resp_admin_client_line(struct conn *c, const char *sub, char *line, size_t len)
{
	const struct resp_state *st = c->proto_state;
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
resp_admin_client_info(struct conn *c, const struct proto_resp_frame *f)
{
	char line[512];
	size_t n = resp_admin_client_line(c, "info", line, sizeof(line));

	(void)f;
	resp_reply_bulk(c, line, n);
	return PROTO_HANDLED;
}

/*
 * A client ID as Redis reads one (string2ll): "0", or an optional '-' and
 * digits without a leading zero, within a long long.
 */
static bool
resp_admin_client_id_arg(const char *s, size_t n, long long *v)
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
resp_admin_client_list(struct conn *c, const struct proto_resp_frame *f)
{
	static const char *const others[] = { "master", "replica", "slave", "pubsub" };
	char line[512], why[140], arg[64];
	unsigned copies = 1, i;
	long long id;
	size_t n;

	if (f->argc == 4 && resp_admin_is(f, 2, "TYPE")) {
		copies = resp_admin_is(f, 3, "normal");
		for (i = 0; !copies && i < sizeof(others) / sizeof(others[0]); i++)
			if (resp_admin_is(f, 3, others[i]))
				break;
		if (!copies && i == sizeof(others) / sizeof(others[0])) {
			resp_reply_sanitize(arg, sizeof(arg), f->argv[3], f->argl[3]);
			snprintf(why, sizeof(why), "Unknown client type '%s'", arg);
			return resp_admin_err(c, why);
		}
	} else if (f->argc > 3 && resp_admin_is(f, 2, "ID")) {
		for (copies = 0, i = 3; i < f->argc; i++) {
			if (!resp_admin_client_id_arg(f->argv[i], f->argl[i], &id))
				return resp_admin_err(c, "Invalid client ID");
			copies += id >= 0 && (uint64_t)id == c->id;
		}
	} else if (f->argc != 2) {
		return resp_admin_err(c, "syntax error");
	}
	n = resp_admin_client_line(c, "list", line, sizeof(line));
	resp_reply_head(c, '$', (long long)(n * copies));
	for (i = 0; i < copies; i++)
		conn_put(c, line, n);
	RESP_REPLY_LIT(c, "\r\n");
	return PROTO_HANDLED;
}

/* Any other CLIENT subcommand, or none. */
static enum proto_step
resp_admin_client_other(struct conn *c, const struct proto_resp_frame *f)
{
	(void)f;
	return resp_admin_err(c, "unknown subcommand or wrong number of arguments for "
	    "'client' command");
}

/* The row documenting a name (any case; its catch-all, else its first); NULL if none. */
static const struct resp_cmd *
resp_admin_row_named(const char *name, size_t len)
{
	const struct resp_cmd *first = NULL;
	size_t k;

	for (k = 0; k < RESP_ADMIN_NCMDS; k++)
		if (strlen(resp_admin_cmds[k].name) == len &&
		    strncasecmp(resp_admin_cmds[k].name, name, len) == 0) {
			if (resp_admin_cmds[k].sub == NULL)
				return &resp_admin_cmds[k];
			if (first == NULL)
				first = &resp_admin_cmds[k];
		}
	return first;
}

/*
 * Command i of the table COMMAND lists: the rows' distinct names (*cmd, the
 * documenting row), then the core's words not among them (*w); false past
 * the last.
 */
static bool
resp_admin_top(size_t i, const struct resp_cmd **cmd, const struct core_word **w)
{
	const struct core_word *cw;
	size_t k, j, n = 0;

	*cmd = NULL;
	*w = NULL;
	for (k = 0; k < RESP_ADMIN_NCMDS; k++) {
		const char *name = resp_admin_cmds[k].name;

		/* Row k counts when it is the first of its name. */
		for (j = 0; j < k && strcmp(resp_admin_cmds[j].name, name) != 0; j++)
			;
		if (j == k && n++ == i) {
			*cmd = resp_admin_row_named(name, strlen(name));
			return true;
		}
	}
	for (k = 0; (cw = core_word_at(k)) != NULL; k++) {
		if (resp_admin_row_named(cw->name, strlen(cw->name)) != NULL)
			continue;
		if (n++ == i) {
			*w = cw;
			return true;
		}
	}
	return false;
}

/*
 * The command of the table named name (any case): resp_admin_top's rows first,
 * then the core's words none of them names; false when there is none.
 */
static bool
resp_admin_top_named(const char *name, size_t len, const struct resp_cmd **cmd,
    const struct core_word **w)
{
	*cmd = resp_admin_row_named(name, len);
	*w = *cmd == NULL ? core_lookup(name, len) : NULL;
	return *cmd != NULL || *w != NULL;
}

/* A command's name as Redis lists it: lower case, "name|sub" for a subcommand. */
static void
resp_admin_lower(struct conn *c, const char *name, const char *sub)
{
	char buf[64];
	size_t i, n = 0;

	for (i = 0; name[i] != '\0' && n < sizeof(buf) - 1; i++)
		buf[n++] = (char)tolower((unsigned char)name[i]);
	if (sub != NULL && n < sizeof(buf) - 1)
		buf[n++] = '|';
	for (i = 0; sub != NULL && sub[i] != '\0' && n < sizeof(buf) - 1; i++)
		buf[n++] = (char)tolower((unsigned char)sub[i]);
	resp_reply_bulk(c, buf, n);
}

/*
 * One COMMAND INFO entry, as Redis 7's ten fields: name, arity (negative: at
 * least), flags, first/last key and step (no keys here), ACL categories,
 * tips, key specifications, subcommands.
 */
static void
resp_admin_cmd_info(struct conn *c, const struct resp_cmd *cmd,
    const struct core_word *w)
{
	size_t k, nsub = 0;

	if (w != NULL) {
		RESP_REPLY_LIT(c, "*10\r\n");
		resp_admin_lower(c, w->name, NULL);
		/* Redis's arity: negative when an optional argument may follow. */
		resp_reply_head(c, ':', w->takes_ns ? -(w->nargs + 1) : w->nargs + 1);
		RESP_REPLY_LIT(c, "*1\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*0\r\n*0\r\n*0\r\n*0\r\n");
		return;
	}
	RESP_REPLY_LIT(c, "*10\r\n");
	resp_admin_lower(c, cmd->name, cmd->sub);
	resp_reply_head(c, ':', cmd->min_argc == cmd->max_argc ? (long long)cmd->min_argc :
	    -(long long)cmd->min_argc);
	RESP_REPLY_LIT(c, "*0\r\n:0\r\n:0\r\n:0\r\n*0\r\n*0\r\n*0\r\n");
	if (cmd->sub != NULL) {
		RESP_REPLY_LIT(c, "*0\r\n");
		return;
	}
	for (k = 0; k < RESP_ADMIN_NCMDS; k++)
		if (resp_admin_cmds[k].sub != NULL && strcmp(resp_admin_cmds[k].name, cmd->name) == 0)
			nsub++;
	resp_reply_head(c, '*', (long long)nsub);
	for (k = 0; k < RESP_ADMIN_NCMDS; k++)
		if (resp_admin_cmds[k].sub != NULL && strcmp(resp_admin_cmds[k].name, cmd->name) == 0)
			resp_admin_cmd_info(c, &resp_admin_cmds[k], NULL);
}

/*
 * The docs map of a command (flat, RESP2): summary, group, arguments from the
 * params words ("[x]" optional, "x..." multiple), and a container's
 * subcommands. redis-cli 7 builds its hints and HELP from it.
 */
static void
resp_admin_docs_map(struct conn *c, const char *group, const char *params,
    const char *summary, const struct resp_cmd *container)
{
	const char *p, *q;
	size_t k, nsub = 0, nargs = 0, len, n;
	bool opt, many;

	for (k = 0; container != NULL && k < RESP_ADMIN_NCMDS; k++)
		if (resp_admin_cmds[k].sub != NULL &&
		    strcmp(resp_admin_cmds[k].name, container->name) == 0)
			nsub++;
	/* The words of params, each at p, len bytes. */
	for (p = params; p != NULL && (len = strcspn(p += strspn(p, " "), " ")) > 0; p += len)
		nargs++;
	resp_reply_head(c, '*', 4 + (nargs > 0 ? 2 : 0) + (nsub > 0 ? 2 : 0));
	RESP_REPLY_LIT(c, "$7\r\nsummary\r\n");
	resp_reply_bulk(c, summary, strlen(summary));
	RESP_REPLY_LIT(c, "$5\r\ngroup\r\n");
	resp_reply_bulk(c, group, strlen(group));
	if (nargs > 0) {
		RESP_REPLY_LIT(c, "$9\r\narguments\r\n");
		resp_reply_head(c, '*', (long long)nargs);
		for (p = params; (len = strcspn(p += strspn(p, " "), " ")) > 0; p += len) {
			/* "[x]": optional; "x...": multiple. */
			opt = len > 2 && p[0] == '[' && p[len - 1] == ']';
			q = p + opt;
			n = len - (opt ? 2 : 0);
			many = n > 3 && memcmp(q + n - 3, "...", 3) == 0;
			resp_reply_head(c, '*', opt || many ? 6 : 4);
			RESP_REPLY_LIT(c, "$4\r\nname\r\n");
			resp_reply_bulk(c, q, n - (many ? 3 : 0));
			RESP_REPLY_LIT(c, "$4\r\ntype\r\n$6\r\nstring\r\n");
			if (opt || many) {
				RESP_REPLY_LIT(c, "$5\r\nflags\r\n");
				resp_reply_head(c, '*', (opt ? 1 : 0) + (many ? 1 : 0));
				if (opt)
					RESP_REPLY_LIT(c, "+optional\r\n");
				if (many)
					RESP_REPLY_LIT(c, "+multiple\r\n");
			}
		}
	}
	if (nsub > 0) {
		RESP_REPLY_LIT(c, "$11\r\nsubcommands\r\n");
		resp_reply_head(c, '*', 2 * (long long)nsub);
		for (k = 0; k < RESP_ADMIN_NCMDS; k++) {
			const struct resp_cmd *sub = &resp_admin_cmds[k];

			if (sub->sub == NULL || strcmp(sub->name, container->name) != 0)
				continue;
			resp_admin_lower(c, sub->name, sub->sub);
			resp_admin_docs_map(c, sub->group, sub->params, sub->summary, NULL);
		}
	}
}

/* A command's name and docs, one pair of COMMAND DOCS. */
static void
resp_admin_cmd_docs(struct conn *c, const struct resp_cmd *cmd,
    const struct core_word *w)
{
	char params[64];

	if (w != NULL) {
		snprintf(params, sizeof(params), "%s%s%s", w->param != NULL ? w->param : "",
		    w->param != NULL && w->takes_ns ? " " : "", w->takes_ns ? "[ns]" : "");
		resp_admin_lower(c, w->name, NULL);
		resp_admin_docs_map(c, "idgen", params, w->summary, NULL);
		return;
	}
	resp_admin_lower(c, cmd->name, NULL);
	resp_admin_docs_map(c, cmd->group, cmd->params, cmd->summary, cmd);
}

/*
 * Every command of the table, as COMMAND answers ('i': the INFO entries),
 * COMMAND DOCS ('d': name and docs pairs), COMMAND LIST ('l': the names) or
 * COMMAND COUNT ('c': how many).
 */
static enum proto_step
resp_admin_all(struct conn *c, char kind)
{
	const struct resp_cmd *cmd;
	const struct core_word *w;
	size_t i, n = 0;

	while (resp_admin_top(n, &cmd, &w))
		n++;
	if (kind == 'c') {
		resp_reply_int(c, n);
		return PROTO_HANDLED;
	}
	resp_reply_head(c, '*', (long long)(kind == 'd' ? 2 * n : n));
	for (i = 0; i < n; i++) {
		(void)resp_admin_top(i, &cmd, &w);
		if (kind == 'i')
			resp_admin_cmd_info(c, cmd, w);
		else if (kind == 'd')
			resp_admin_cmd_docs(c, cmd, w);
		else
			resp_admin_lower(c, cmd != NULL ? cmd->name : w->name, NULL);
	}
	return PROTO_HANDLED;
}

/* COMMAND COUNT: how many commands; COMMAND LIST: their names. */
static enum proto_step
resp_admin_command_all(struct conn *c, const struct proto_resp_frame *f)
{
	return resp_admin_all(c, resp_admin_is(f, 1, "COUNT") ? 'c' : 'l');
}

/* COMMAND DOCS [name...]: all, or the named ones that exist (a flat map). */
static enum proto_step
resp_admin_command_docs(struct conn *c, const struct proto_resp_frame *f)
{
	const struct resp_cmd *cmd;
	const struct core_word *w;
	size_t i, n = 0;

	if (f->argc == 2)
		return resp_admin_all(c, 'd');
	for (i = 2; i < f->argc; i++)
		if (resp_admin_top_named(f->argv[i], f->argl[i], &cmd, &w))
			n++;
	resp_reply_head(c, '*', 2 * (long long)n);
	for (i = 2; i < f->argc; i++)
		if (resp_admin_top_named(f->argv[i], f->argl[i], &cmd, &w))
			resp_admin_cmd_docs(c, cmd, w);
	return PROTO_HANDLED;
}

/* COMMAND INFO [name...]: all, or one entry per name (nil when unknown). */
static enum proto_step
resp_admin_command_info(struct conn *c, const struct proto_resp_frame *f)
{
	const struct resp_cmd *cmd;
	const struct core_word *w;
	size_t i;

	if (f->argc == 2)
		return resp_admin_all(c, 'i');
	resp_reply_head(c, '*', (long long)f->argc - 2);
	for (i = 2; i < f->argc; i++) {
		if (resp_admin_top_named(f->argv[i], f->argl[i], &cmd, &w))
			resp_admin_cmd_info(c, cmd, w);
		else
			RESP_REPLY_LIT(c, "*-1\r\n");
	}
	return PROTO_HANDLED;
}

/* COMMAND: the whole table; COMMAND <other>: unknown subcommand. */
static enum proto_step
resp_admin_command(struct conn *c, const struct proto_resp_frame *f)
{
	char sub[40], why[120];

	if (f->argc > 1 && !resp_admin_is(f, 1, "INFO")) {
		resp_reply_sanitize(sub, sizeof(sub), f->argv[1], f->argl[1]);
		snprintf(why, sizeof(why), "unknown subcommand '%s'. Try COMMAND COUNT, DOCS, "
		    "INFO or LIST.", sub);
		return resp_admin_err(c, why);
	}
	return resp_admin_all(c, 'i');
}

/* TIME: unix seconds and microseconds, two bulk strings as Redis gives them. */
static enum proto_step
resp_admin_time(struct conn *c, const struct proto_resp_frame *f)
{
	int64_t us = clk_real_us();
	char num[2][24];

	(void)f;
	snprintf(num[0], sizeof(num[0]), "%" PRId64, us / 1000000);
	snprintf(num[1], sizeof(num[1]), "%" PRId64, us % 1000000);
	RESP_REPLY_LIT(c, "*2\r\n");
	resp_reply_bulk(c, num[0], strlen(num[0]));
	resp_reply_bulk(c, num[1], strlen(num[1]));
	return PROTO_HANDLED;
}

/*
 * AUTH [user] token: with auth_tokens_file, +OK and the connection's token
 * from now on, or -WRONGPASS; without, Redis's answer when no password is set.
 */
static enum proto_step
resp_admin_auth(struct conn *c, const struct proto_resp_frame *f)
{
	enum proto_step r;
	bool ok = false;

	if (f->argc > 3 || c->set->core->auth == NULL)
		core_count(c->set->core, CORE_OK);	/* else the core counts the login */
	if (f->argc > 3)
		return resp_admin_err(c, "syntax error");
	if (c->set->core->auth == NULL)
		return resp_admin_err(c, "AUTH <password> called without any password "
		    "configured for the default user. Are you sure your configuration is "
		    "correct?");
	r = resp_admin_login(c, f->argc == 3 ? f->argv[1] : NULL, f->argc == 3 ? f->argl[1] : 0,
	    f->argv[f->argc - 1], f->argl[f->argc - 1], &ok);
	if (r == PROTO_HANDLED && ok)
		resp_reply_simple(c, "OK");
	return r;
}

/* MULTI: the next commands are queued (checked, not run) until EXEC or DISCARD. */
static enum proto_step
resp_admin_multi(struct conn *c, const struct proto_resp_frame *f)
{
	struct resp_state *st = c->proto_state;

	(void)f;
	if (st != NULL && st->multi)
		return resp_admin_err(c, "MULTI calls can not be nested");
	if ((st = resp_admin_state(c)) == NULL)
		return resp_admin_err(c, "out of memory");
	st->multi = true;
	resp_reply_simple(c, "OK");
	return PROTO_HANDLED;
}

/*
 * EXEC: the queued commands' replies in one array, errors among them; a
 * command refused while queuing aborts it all. Other clients are served
 * between the queued commands: IDs are unique whatever the order.
 */
static enum proto_step
resp_admin_exec(struct conn *c, const struct proto_resp_frame *f)
{
	struct resp_state *st = c->proto_state;

	if (st == NULL || !st->multi)
		return resp_admin_err(c, "EXEC without MULTI");
	if (st->dirty) {
		resp_admin_discard(st);
		RESP_REPLY_LIT(c, "-EXECABORT Transaction discarded because of previous errors.\r\n");
		return PROTO_HANDLED;
	}
	resp_reply_head(c, '*', st->nqueued);
	if (st->nqueued == 0) {
		resp_admin_discard(st);
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
resp_admin_discard_cmd(struct conn *c, const struct proto_resp_frame *f)
{
	struct resp_state *st = c->proto_state;

	(void)f;
	if (st == NULL || !st->multi)
		return resp_admin_err(c, "DISCARD without MULTI");
	resp_admin_discard(st);
	resp_reply_simple(c, "OK");
	return PROTO_HANDLED;
}

/*
 * WATCH key... and UNWATCH: OK, nothing here can change under a transaction.
 * WATCH is refused inside MULTI; UNWATCH is queued there, run by EXEC.
 */
static enum proto_step
resp_admin_watch(struct conn *c, const struct proto_resp_frame *f)
{
	const struct resp_state *st = c->proto_state;

	(void)f;
	if (st != NULL && st->multi)
		resp_reply_error(c, "ERR", "WATCH inside MULTI is not allowed");
	else
		resp_reply_simple(c, "OK");
	return PROTO_HANDLED;
}

/* RESET: out of MULTI, no name; the connection as new. */
static enum proto_step
resp_admin_reset(struct conn *c, const struct proto_resp_frame *f)
{
	struct resp_state *st = c->proto_state;

	(void)f;
	if (st != NULL) {
		resp_admin_discard(st);
		st->name[0] = '\0';
	}
	resp_reply_simple(c, "RESET");
	return PROTO_HANDLED;
}

/* CONFIG GET parameter: the two clients ask for, an empty array for the rest. */
static enum proto_step
resp_admin_config(struct conn *c, const struct proto_resp_frame *f)
{
	size_t k;

	if (f->argc != 3 || !resp_admin_is(f, 1, "GET"))
		return resp_admin_err(c, "only CONFIG GET save|appendonly is served");
	for (k = 0; k < RESP_ADMIN_NCONFIG; k++)
		if (resp_admin_is(f, 2, resp_admin_config_get[k].name)) {
			conn_put(c, resp_admin_config_get[k].reply,
			    strlen(resp_admin_config_get[k].reply));
			return PROTO_HANDLED;
		}
	RESP_REPLY_LIT(c, "*0\r\n");
	return PROTO_HANDLED;
}

/* One "name:value" line under its "# Section" header. */
static void
resp_admin_info_line(const struct metric_def *def, const char *name, int server,
    const struct metric_value *v, void *arg)
{
	struct resp_admin_info *in = arg;

	(void)server;
	if (in->want != NULL && (strlen(def->section) != in->wantlen ||
	    strncasecmp(def->section, in->want, in->wantlen) != 0))
		return;
	if (in->section == NULL || strcmp(in->section, def->section) != 0) {
		fprintf(in->f, "%s# %c%s\r\n", in->section == NULL ? "" : "\r\n",
		    toupper((unsigned char)def->section[0]), def->section + 1);
		in->section = def->section;
	}
	if (v->is_text)
		fprintf(in->f, "%s:%s\r\n", name, v->text);
	else
		fprintf(in->f, "%s:%" PRIu64 "\r\n", name, v->num);
}

/* INFO [section]: Redis INFO text built from the metrics table. */
void
resp_admin_info(struct conn *c, const char *want, size_t wantlen)
{
	struct resp_admin_info in = { NULL, want, wantlen, NULL };
	char *buf = NULL;
	size_t len = 0;
	bool ok = false;

	if (want != NULL && ((wantlen == 3 && strncasecmp(want, "all", 3) == 0) ||
	    (wantlen == 7 && strncasecmp(want, "default", 7) == 0) ||
	    (wantlen == 10 && strncasecmp(want, "everything", 10) == 0)))
		in.want = NULL;
	in.f = open_memstream(&buf, &len);
	if (in.f != NULL) {
		metrics_walk(c->set->metrics, resp_admin_info_line, &in);
		ok = !ferror(in.f);
		ok = fclose(in.f) == 0 && ok;
	}
	if (ok)
		resp_reply_bulk(c, buf, len);
	else
		resp_reply_error(c, "ERR", "out of memory");
	free(buf);
}
