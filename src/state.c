/*
 * state.c - format and parse the local state record, checksummed.
 *
 * A text file a person can read:
 *
 *	idgen-state 1
 *	host <name>
 *	servers <odd ip:port> <even ip:port> <db>
 *	mark odd <high_water> <uuid or ->
 *	mark even <high_water> <uuid or ->
 *	lease none | lease <worker> odd|even <holder> <start> <end> <reserved>
 *	check <FNV-1a 64 of every byte above, hex>
 */
#include "state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_role[2] = { "odd", "even" };

static uint64_t	state_hash(const char *buf, size_t len);
static bool	state_word(const char **p, const char *end, char *out, size_t outlen);
static bool	state_u64(const char **p, const char *end, uint64_t *v);
static bool	state_line_end(const char **p, const char *end);
static bool	state_safe(const char *s);

/* FNV-1a, 64 bits: catches torn and hand-edited files. */
static uint64_t
state_hash(const char *buf, size_t len)
{
	uint64_t h = UINT64_C(14695981039346656037);
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)buf[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* True when s has no white space or control bytes (it is one word of a line). */
static bool
state_safe(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* Formats the record; the checksum covers everything before its line. */
size_t
state_format(const struct state_rec *r, char *buf, size_t len)
{
	const struct state_lease *l = &r->lease;
	int n, m, i;

	if (!state_safe(r->host) || !state_safe(l->holder) || r->host[0] == '\0')
		return 0;
	n = snprintf(buf, len, "idgen-state %d\nhost %s\nservers %s\n", STATE_VERSION,
	    r->host, r->servers);
	for (i = 0; i < 2 && n >= 0 && (size_t)n < len; i++) {
		if (!state_safe(r->mark[i].uuid))
			return 0;
		n += snprintf(buf + n, len - (size_t)n, "mark %s %" PRIu64 " %s\n",
		    state_role[i], r->mark[i].high_water,
		    r->mark[i].uuid[0] ? r->mark[i].uuid : "-");
	}
	if (n < 0 || (size_t)n >= len)
		return 0;
	if (l->held && l->holder[0] != '\0' && (l->server == STATE_ODD || l->server == STATE_EVEN))
		n += snprintf(buf + n, len - (size_t)n, "lease %u %s %s %" PRIu64 " %" PRIu64
		    " %" PRIu64 "\n", l->worker, state_role[l->server], l->holder,
		    l->window_start, l->window_end, l->reserved);
	else
		n += snprintf(buf + n, len - (size_t)n, "lease none\n");
	if (n < 0 || (size_t)n >= len)
		return 0;
	m = snprintf(buf + n, len - (size_t)n, "check %016" PRIx64 "\n",
	    state_hash(buf, (size_t)n));
	if (m < 0 || (size_t)(n + m) >= len)
		return 0;
	return (size_t)(n + m);
}

/* Reads one space-separated word of the current line. */
static bool
state_word(const char **p, const char *end, char *out, size_t outlen)
{
	size_t n = 0;

	while (*p < end && **p == ' ')
		(*p)++;
	while (*p < end && **p != ' ' && **p != '\n') {
		if (n + 1 >= outlen)
			return false;
		out[n++] = *(*p)++;
	}
	out[n] = '\0';
	return n > 0;
}

/* Reads one decimal word, strictly. */
static bool
state_u64(const char **p, const char *end, uint64_t *v)
{
	char w[24], *e;

	if (!state_word(p, end, w, sizeof(w)) || w[0] < '0' || w[0] > '9')
		return false;
	*v = strtoull(w, &e, 10);
	return *e == '\0';
}

/* The rest of the line must be empty. */
static bool
state_line_end(const char **p, const char *end)
{
	if (*p >= end || **p != '\n')
		return false;
	(*p)++;
	return true;
}

/* Parses and verifies a record; any deviation is corruption, never a guess. */
bool
state_parse(const char *buf, size_t len, struct state_rec *r, char *why, size_t whylen)
{
	const char *p = buf, *end = buf + len, *check;
	char w[192];
	uint64_t v, sum;
	int i;

	memset(r, 0, sizeof(*r));
	check = NULL;
	for (const char *q = buf; q + 6 <= end; q++)
		if ((q == buf || q[-1] == '\n') && memcmp(q, "check ", 6) == 0)
			check = q;
	if (check == NULL) {
		snprintf(why, whylen, "no checksum line (truncated?)");
		return false;
	}
	p = check + 5;
	if (!state_word(&p, end, w, sizeof(w)) || strlen(w) != 16 ||
	    strspn(w, "0123456789abcdef") != 16 || !state_line_end(&p, end) || p != end) {
		snprintf(why, whylen, "bad checksum line");
		return false;
	}
	sum = strtoull(w, NULL, 16);
	if (sum != state_hash(buf, (size_t)(check - buf))) {
		snprintf(why, whylen, "checksum mismatch (torn or edited)");
		return false;
	}
	end = check;
	p = buf;
	if (!state_word(&p, end, w, sizeof(w)) || strcmp(w, "idgen-state") != 0 ||
	    !state_u64(&p, end, &v) || !state_line_end(&p, end)) {
		snprintf(why, whylen, "not an idgen state file");
		return false;
	}
	if (v != STATE_VERSION) {
		snprintf(why, whylen, "state file version %" PRIu64 ", this build reads %d", v,
		    STATE_VERSION);
		return false;
	}
	if (!state_word(&p, end, w, sizeof(w)) || strcmp(w, "host") != 0 ||
	    !state_word(&p, end, r->host, sizeof(r->host)) || !state_line_end(&p, end))
		goto bad;
	if (!state_word(&p, end, w, sizeof(w)) || strcmp(w, "servers") != 0)
		goto bad;
	while (p < end && *p == ' ')
		p++;
	{
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl == NULL || (size_t)(nl - p) >= sizeof(r->servers))
			goto bad;
		memcpy(r->servers, p, (size_t)(nl - p));
		r->servers[nl - p] = '\0';
		p = nl + 1;
	}
	for (i = 0; i < 2; i++) {
		if (!state_word(&p, end, w, sizeof(w)) || strcmp(w, "mark") != 0 ||
		    !state_word(&p, end, w, sizeof(w)) || strcmp(w, state_role[i]) != 0 ||
		    !state_u64(&p, end, &r->mark[i].high_water) ||
		    !state_word(&p, end, r->mark[i].uuid, sizeof(r->mark[i].uuid)) ||
		    !state_line_end(&p, end))
			goto bad;
		if (strcmp(r->mark[i].uuid, "-") == 0)
			r->mark[i].uuid[0] = '\0';
	}
	if (!state_word(&p, end, w, sizeof(w)) || strcmp(w, "lease") != 0 ||
	    !state_word(&p, end, w, sizeof(w)))
		goto bad;
	if (strcmp(w, "none") != 0) {
		struct state_lease *l = &r->lease;
		char role[8];

		if (w[0] < '0' || w[0] > '9' || (v = strtoull(w, NULL, 10)) > 1023 ||
		    !state_word(&p, end, role, sizeof(role)) ||
		    !state_word(&p, end, l->holder, sizeof(l->holder)) ||
		    !state_u64(&p, end, &l->window_start) ||
		    !state_u64(&p, end, &l->window_end) || !state_u64(&p, end, &l->reserved))
			goto bad;
		l->worker = (unsigned)v;
		if (strcmp(role, "odd") == 0)
			l->server = STATE_ODD;
		else if (strcmp(role, "even") == 0)
			l->server = STATE_EVEN;
		else
			goto bad;
		/* Each worker number lives on the server of its parity. */
		if ((l->worker % 2 == 1) != (l->server == STATE_ODD) ||
		    l->window_end < l->window_start || l->reserved > l->window_end)
			goto bad;
		l->held = true;
	}
	if (!state_line_end(&p, end) || p != end)
		goto bad;
	return true;
bad:
	for (i = 1, end = p; end > buf; end--)
		if (end[-1] == '\n')
			i++;
	snprintf(why, whylen, "malformed near line %d", i);
	memset(r, 0, sizeof(*r));
	return false;
}

/* Raises a role's high-water mark (never lowers it); true when the record changed. */
bool
state_raise_mark(struct state_rec *r, int role, uint64_t high_water, const char *uuid)
{
	struct state_mark *m = &r->mark[role];
	bool changed = false;

	if (uuid != NULL && uuid[0] != '\0' && state_safe(uuid) &&
	    strlen(uuid) < sizeof(m->uuid) && strcmp(uuid, m->uuid) != 0) {
		snprintf(m->uuid, sizeof(m->uuid), "%s", uuid);
		changed = true;
	}
	if (high_water > m->high_water) {
		m->high_water = high_water;
		changed = true;
	}
	return changed;
}
