/*
 * fmt.c - decimal IDs, fast: a run of consecutive IDs is the common reply.
 */
#include "fmt.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Decimal digits, written right to left into a small scratch buffer. */
size_t
fmt_u64(char *buf, uint64_t v)
{
	char tmp[FMT_U64_LEN];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

/* Decimal IDs separated by spaces. */
size_t
fmt_ids(char *buf, const uint64_t *ids, unsigned n)
{
	return fmt_ids_framed(buf, ids, n, "", "", ' ', NULL);
}

/*
 * Copies n bytes (at most 32) that do not overlap, in fixed-size moves the
 * compiler inlines: a library call per ID was a fifth of a batch reply's time.
 */
static inline void
fmt_copy32(char *d, const char *s, size_t n)
{
	if (n >= 16) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

/*
 * Each ID as pre, its digits, post; sep between two (none: FMT_SEP_NONE).
 * An ID one above the previous one is the previous entry copied and its last
 * digits incremented; a carry out of the first digit formats it anew.
 */
size_t
fmt_ids_framed(char *buf, const uint64_t *ids, unsigned n, const char *pre,
    const char *post, int sep, char **starts)
{
	size_t prelen = strlen(pre), postlen = strlen(post), len = 0, e;
	char *q = buf, *prev = NULL, *d;
	unsigned k;

	for (k = 0; k < n; k++) {
		if (k > 0 && sep != FMT_SEP_NONE)
			*q++ = (char)sep;
		if (starts != NULL)
			starts[k] = q;
		e = prelen + len + postlen;
		if (prev != NULL && ids[k] == ids[k - 1] + 1 && ids[k] != 0) {
			if (e <= 32)
				fmt_copy32(q, prev, e);
			else
				memcpy(q, prev, e);
			for (d = q + prelen + len - 1; d >= q + prelen && *d == '9'; d--)
				*d = '0';
			if (d >= q + prelen) {
				(*d)++;
				prev = q;
				q += e;
				continue;
			}
			/* 999 -> 1000: one digit more. */
		}
		memcpy(q, pre, prelen);
		len = fmt_u64(q + prelen, ids[k]);
		memcpy(q + prelen + len, post, postlen);
		prev = q;
		q += prelen + len + postlen;
	}
	return (size_t)(q - buf);
}

/* The DECODE line, shared by the text protocol and HTTP's text/plain form. */
size_t
fmt_decode(char *buf, const struct decode *d, bool from_b58)
{
	size_t size = FMT_DECODE_LEN;
	int n;

	if (d->region == LAYOUT_TICKET)
		n = snprintf(buf, size, "ticket block=%" PRIu64 " server=%s", d->ticket,
		    d->server);
	else
		n = snprintf(buf, size, "snowflake time=%s worker=%u seq=%u", d->iso, d->worker,
		    d->seq);
	/* A tier of regions names the ID's region (docs/design.md section 12). */
	if (d->regions)
		n += snprintf(buf + n, size - (size_t)n, " region=%u", d->area);
	/* Given the base58 form, the reply names the number too. */
	if (from_b58)
		n += snprintf(buf + n, size - (size_t)n, " id=%" PRIu64, d->id);
	n += snprintf(buf + n, size - (size_t)n, "\n");
	return (size_t)n < size ? (size_t)n : size - 1;
}
