/*
 * decode.c - an ID's fields by the layout's rules, for every decode there is.
 */
#include "decode.h"

#include <string.h>

/* Region first: it says which fields an ID has. */
enum layout_region
decode_id(uint64_t id, uint64_t block_size, struct decode *d)
{
	memset(d, 0, sizeof(*d));
	d->id = id;
	d->region = layout_region(id);
	b58_encode(id, d->b58);
	switch (d->region) {
	case LAYOUT_INVALID:
		break;
	case LAYOUT_TICKET:
		/* B is not in the ID: a decode without it cannot name the ticket. */
		if (block_size == 0)
			break;
		d->ticket = layout_ticket_of(id, block_size);
		d->odd = d->ticket % 2 != 0;
		d->server = d->odd ? "odd" : "even";
		break;
	case LAYOUT_SNOWFLAKE:
		decode_snowflake(id, d);
		break;
	}
	return d->region;
}

void
decode_regions(struct decode *d, unsigned increment, unsigned region_bits)
{
	unsigned width = LAYOUT_WORKER_BITS - region_bits, offset;

	if (region_bits == 0 || region_bits >= LAYOUT_WORKER_BITS || increment < 2)
		return;
	switch (d->region) {
	case LAYOUT_TICKET:
		if (d->server == NULL)
			return;		/* B unknown: no ticket */
		offset = (unsigned)(d->ticket % increment);
		d->area = ((offset == 0 ? increment : offset) - 1) / 2;
		d->regions = true;
		break;
	case LAYOUT_SNOWFLAKE:
		d->area = d->worker >> width;
		d->datacenter_id = d->area;
		d->worker_id = d->worker & ((1u << width) - 1);
		d->regions = true;
		break;
	case LAYOUT_INVALID:
		break;
	}
}

/* ts, worker and seq, the time as Unix ms and ISO text, the 5/5 split. */
void
decode_snowflake(uint64_t id, struct decode *d)
{
	struct layout_snowflake sf = layout_snowflake_split(id);

	d->unix_ms = layout_ts_to_unix_ms(sf.ts);
	layout_format_iso(d->unix_ms, d->iso, sizeof(d->iso));
	d->worker = sf.worker;
	d->datacenter_id = layout_datacenter_of(sf.worker);
	d->worker_id = layout_dc_worker_of(sf.worker);
	d->seq = sf.seq;
}
