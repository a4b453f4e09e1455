/*
 * reply.c - parse the text protocol's reply lines (ERR, one ID, a block).
 */
#include "reply.h"

#include <string.h>

bool
reply_err(const char *p, const char *e, const char **code, size_t *codelen,
    const char **msg, size_t *msglen)
{
	const char	*c, *ce;

	if (e - p < 3 || memcmp(p, "ERR", 3) != 0 || (e - p > 3 && p[3] != ' '))
		return false;
	c = e - p > 3 ? p + 4 : e;
	ce = memchr(c, ' ', (size_t)(e - c));
	if (ce == NULL)
		ce = e;
	*code = c;
	*codelen = (size_t)(ce - c);
	*msg = ce < e ? ce + 1 : e;
	*msglen = (size_t)(e - *msg);
	return true;
}

bool
reply_id(const char *p, const char *e, uint64_t *id)
{
	const char	*q;
	uint64_t	 v;

	if ((q = reply_u64(p, e, &v)) == NULL || q != e || v == 0 || v > REPLY_ID_MAX)
		return false;
	*id = v;
	return true;
}

bool
reply_block(const char *p, const char *e, uint64_t *first, uint64_t *n)
{
	const char	*q;
	uint64_t	 f, k;

	if ((q = reply_u64(p, e, &f)) == NULL || q == e || *q != ' ' ||
	    (q = reply_u64(q + 1, e, &k)) == NULL || q != e)
		return false;
	if (f == 0 || k == 0 || k > REPLY_ID_MAX || f > REPLY_ID_MAX - (k - 1))
		return false;
	*first = f;
	*n = k;
	return true;
}
