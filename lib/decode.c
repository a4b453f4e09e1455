/*
 * decode.c - idgen_decode() and idgen_decode_text() (and their _tier forms for a
 * tier of regions): an ID decoded locally, with no server, by the decode
 * idserver uses too (common/decode.c).
 */
#include "client.h"
#include "decode.h"
#include "errmsg.h"
#include "reply.h"

#include <string.h>

_Static_assert(sizeof(((struct idgen_decoded *)0)->time) == LAYOUT_ISO_LEN &&
    sizeof(((struct idgen_decoded *)0)->b58) == B58_LEN + 1,
    "the public decoded fields hold the common decode's text");

/* The public struct grew into its reserved room: the same size, the same ABI. */
_Static_assert(sizeof(struct idgen_decoded) == 128, "struct idgen_decoded changed size");

/* What an ID says, by common/decode.c's rules, in the public struct. */
IDGEN_EXPORT int
idgen_decode_tier(uint64_t id, uint64_t block_size, unsigned tier_increment,
    unsigned region_bits, struct idgen_decoded *d)
{
	struct decode	 dec;

	memset(d, 0, sizeof(*d));
	d->id = id;
	/* The library has no pair to ask: B is the caller's, or the default. */
	if (block_size == 0)
		block_size = IDGEN_DEFAULT_BLOCK_SIZE;
	if (region_bits > 0 && (region_bits > 5 || tier_increment < 2 || tier_increment > 64))
		return errmsg_set(IDGEN_EINVAL, "region_bits is 0..5 and tier_increment 2..64");
	switch (decode_id(id, block_size, &dec)) {
	case LAYOUT_TICKET:
		d->kind = IDGEN_TICKET;
		d->ticket = dec.ticket;
		d->odd = dec.odd;
		break;
	case LAYOUT_SNOWFLAKE:
		d->kind = IDGEN_SNOWFLAKE;
		d->unix_ms = dec.unix_ms;
		d->worker = dec.worker;
		d->seq = dec.seq;
		memcpy(d->time, dec.iso, sizeof(d->time));
		break;
	case LAYOUT_INVALID:
	default:
		return errmsg_set(IDGEN_EINVAL, "an ID is 1..9223372036854775807");
	}
	decode_regions(&dec, tier_increment, region_bits);
	d->datacenter_id = dec.datacenter_id;
	d->worker_id = dec.worker_id;
	d->region = dec.area;
	d->has_region = dec.regions;
	memcpy(d->b58, dec.b58, sizeof(d->b58));
	return IDGEN_OK;
}

IDGEN_EXPORT int
idgen_decode(uint64_t id, uint64_t block_size, struct idgen_decoded *d)
{
	return idgen_decode_tier(id, block_size, 2, 0, d);
}

/* The same from its text: decimal, or the 11-character base58 form. */
IDGEN_EXPORT int
idgen_decode_text_tier(const char *s, uint64_t block_size, unsigned tier_increment,
    unsigned region_bits, struct idgen_decoded *d)
{
	const char	*why, *e;
	uint64_t	 id;
	size_t		 len;

	len = s != NULL ? strlen(s) : 0;
	if (len > 0 && b58_is_form(s, len)) {
		if (!b58_decode(s, len, &id, &why))
			return errmsg_set(IDGEN_EINVAL, "\"%.16s\": %s", s, why);
	} else if ((e = reply_u64(s, s + len, &id)) == NULL || e != s + len)
		return errmsg_set(IDGEN_EINVAL, "\"%.24s\" is not an ID (decimal, "
		    "or 11 characters of base58)", s != NULL ? s : "");
	return idgen_decode_tier(id, block_size, tier_increment, region_bits, d);
}

IDGEN_EXPORT int
idgen_decode_text(const char *s, uint64_t block_size, struct idgen_decoded *d)
{
	return idgen_decode_text_tier(s, block_size, 2, 0, d);
}
