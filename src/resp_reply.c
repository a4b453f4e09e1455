/*
 * resp_reply.c - RESP2 reply encoding (integers, bulk and simple strings,
 * errors) and Redis's error wording, shared by the dispatch and the commands
 * RESP answers itself.
 */
#include "resp_reply.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"

/* "*<n>\r\n" or "$<n>\r\n" or ":<n>\r\n" */
void
resp_reply_head(struct conn *c, char kind, long long n)
{
	char head[32];
	int h = snprintf(head, sizeof(head), "%c%lld\r\n", kind, n);

	conn_put(c, head, (size_t)h);
}

/* ":<v>\r\n" */
void
resp_reply_int(struct conn *c, uint64_t v)
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

/* A bulk string: "$<n>\r\n<bytes>\r\n". */
void
resp_reply_bulk(struct conn *c, const char *s, size_t n)
{
	resp_reply_head(c, '$', (long long)n);
	conn_put(c, s, n);
	RESP_REPLY_LIT(c, "\r\n");
}

/* A simple string: "+<s>\r\n". */
void
resp_reply_simple(struct conn *c, const char *s)
{
	RESP_REPLY_LIT(c, "+");
	conn_put(c, s, strlen(s));
	RESP_REPLY_LIT(c, "\r\n");
}

/* "-<CODE> <why>": our codes are the error prefix a Redis client shows. */
void
resp_reply_error(struct conn *c, const char *code, const char *why)
{
	char line[300];
	int n = snprintf(line, sizeof(line), "-%s %s\r\n", code, why);

	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	conn_put(c, line, (size_t)n);
}

/* Client bytes in a reply: printable, bounded, no CR/LF to break the frame. */
void
resp_reply_sanitize(char *out, size_t outlen, const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n && k + 1 < outlen; i++)
		out[k++] = isprint((unsigned char)s[i]) && s[i] != '\'' ? s[i] : '?';
	out[k] = '\0';
}

/* Redis's own wording; a subcommand is named "command|sub", as Redis 7 does. */
void
resp_reply_arity(struct conn *c, const struct proto_resp_frame *f, const char *sub)
{
	char name[64], why[140];
	size_t i, n;

	resp_reply_sanitize(name, 40, f->argv[0], f->argl[0]);
	if (sub != NULL) {
		n = strlen(name);
		name[n++] = '|';
		resp_reply_sanitize(name + n, sizeof(name) - n, sub, strlen(sub));
	}
	for (i = 0; name[i] != '\0'; i++)
		name[i] = (char)tolower((unsigned char)name[i]);
	snprintf(why, sizeof(why), "wrong number of arguments for '%s' command", name);
	resp_reply_error(c, "ERR", why);
}

/* An unknown command, in Redis's words, with its first arguments. */
void
resp_reply_unknown(struct conn *c, const struct proto_resp_frame *f)
{
	char why[260], arg[40];
	unsigned i;
	int n;

	resp_reply_sanitize(arg, sizeof(arg), f->argv[0], f->argl[0]);
	n = snprintf(why, sizeof(why), "unknown command '%s', with args beginning with: ", arg);
	for (i = 1; i < f->argc && i <= 3 && n > 0 && (size_t)n < sizeof(why); i++) {
		resp_reply_sanitize(arg, sizeof(arg), f->argv[i], f->argl[i]);
		n += snprintf(why + n, sizeof(why) - (size_t)n, "'%s' ", arg);
	}
	resp_reply_error(c, "ERR", why);
}
