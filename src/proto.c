/*
 * proto.c - parse request lines, format numbers for replies.
 */
#include "proto.h"

#include <string.h>
#include <strings.h>

struct proto_word {
	const char	*name;
	enum proto_cmd	 cmd;
	int		 nargs;		/* 0 or 1 */
	uint64_t	 min;		/* bounds of the argument */
	uint64_t	 max;
};

static const struct proto_word proto_words[] = {
	{ "ID",		PROTO_ID,	0, 0, 0 },
	{ "IDS",	PROTO_IDS,	1, 1, PROTO_IDS_MAX },
	{ "BLOCK",	PROTO_BLOCK,	1, 1, PROTO_BLOCK_MAX },
	{ "DECODE",	PROTO_DECODE,	1, 0, UINT64_MAX },
	{ "STATS",	PROTO_STATS,	0, 0, 0 },
	{ "PING",	PROTO_PING,	0, 0, 0 },
	{ "HELP",	PROTO_HELP,	0, 0, 0 },
	{ "QUIT",	PROTO_QUIT,	0, 0, 0 },
};

const char proto_help[] =
    "ID - one ID\n"
    "IDS <n> - n unique IDs ascending on one line (1..1000)\n"
    "BLOCK <n> - first ID and n: every ID in first..first+n-1 is yours (1..4096)\n"
    "DECODE <id> - which path made an ID: ticket block/server or snowflake time/worker/seq\n"
    "STATS - STAT <name> <value> lines, then END\n"
    "PING - PONG\n"
    "HELP - this list\n"
    "QUIT - close the connection\n"
    "END\n";

static bool	proto_is_space(char c);
static bool	proto_number(const char *s, size_t len, uint64_t *out);

/* Space or tab separate words. */
static bool
proto_is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Parses an unsigned decimal of 1..20 digits with overflow check. */
static bool
proto_number(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > PROTO_U64_LEN)
		return false;
	for (i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9)
			return false;
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* Splits a line into a command word and at most one argument, checking bounds. */
enum proto_status
proto_parse(const char *line, size_t len, struct proto_req *req, const char **why)
{
	const char *word[3];
	size_t wlen[3], nwords = 0, i = 0, k;
	const struct proto_word *w = NULL;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	/* The most common request by far, without the general word split. */
	if (len == 2 && (line[0] | 0x20) == 'i' && (line[1] | 0x20) == 'd') {
		req->cmd = PROTO_ID;
		req->arg = 0;
		return PROTO_OK;
	}
	if (memchr(line, '\0', len) != NULL) {
		*why = "NUL byte in request";
		return PROTO_BADREQ;
	}
	while (i < len) {
		size_t start;

		while (i < len && proto_is_space(line[i]))
			i++;
		if (i == len)
			break;
		if (nwords == 3) {
			*why = "too many arguments";
			return PROTO_BADREQ;
		}
		start = i;
		while (i < len && !proto_is_space(line[i]))
			i++;
		word[nwords] = line + start;
		wlen[nwords++] = i - start;
	}
	if (nwords == 0) {
		*why = "empty request";
		return PROTO_BADREQ;
	}
	for (k = 0; k < sizeof(proto_words) / sizeof(proto_words[0]); k++) {
		if (strlen(proto_words[k].name) == wlen[0] &&
		    strncasecmp(proto_words[k].name, word[0], wlen[0]) == 0) {
			w = &proto_words[k];
			break;
		}
	}
	if (w == NULL) {
		*why = "unknown command (try HELP)";
		return PROTO_BADREQ;
	}
	if ((int)nwords - 1 != w->nargs) {
		*why = w->nargs ? "missing or extra argument" : "unexpected argument";
		return PROTO_BADREQ;
	}
	req->cmd = w->cmd;
	req->arg = 0;
	if (w->nargs == 0)
		return PROTO_OK;
	if (!proto_number(word[1], wlen[1], &req->arg)) {
		for (k = 0; k < wlen[1]; k++)
			if (word[1][k] < '0' || word[1][k] > '9') {
				*why = "argument is not a decimal number";
				return PROTO_BADREQ;
			}
		*why = "number too large";
		return PROTO_RANGE;
	}
	if (req->arg < w->min || req->arg > w->max) {
		*why = w->cmd == PROTO_IDS ? "n must be 1..1000" : "n must be 1..4096";
		return PROTO_RANGE;
	}
	return PROTO_OK;
}

/* Decimal digits, written right to left into a small scratch buffer. */
size_t
proto_u64(char *buf, uint64_t v)
{
	char tmp[PROTO_U64_LEN];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

/* Decimal IDs separated by spaces; consecutive ones by incrementing digits. */
size_t
proto_ids(char *buf, const uint64_t *ids, unsigned n)
{
	char *q = buf, *prev = NULL, *d;
	size_t len = 0;
	unsigned k;

	for (k = 0; k < n; k++) {
		if (k > 0)
			*q++ = ' ';
		if (prev != NULL && ids[k] == ids[k - 1] + 1 && ids[k] != 0) {
			memcpy(q, prev, len);
			for (d = q + len - 1; d >= q && *d == '9'; d--)
				*d = '0';
			if (d >= q)
				(*d)++;
			else
				len = proto_u64(q, ids[k]);	/* 999 -> 1000: one digit more */
		} else
			len = proto_u64(q, ids[k]);
		prev = q;
		q += len;
	}
	return (size_t)(q - buf);
}
