/*
 * server.c - a ticket server's index, name, offset and residue, and the
 * tier's shape (docs/design.md section 12).
 */
#include "server.h"

#include <string.h>

#include "layout.h"

static const char *const server_names[SERVER_COUNT] = { "odd", "even" };

/* The classic pair until the config says otherwise. */
static struct {
	unsigned	increment;
	unsigned	region;
	unsigned	region_bits;
} server_shape = { 2, 0, 0 };

bool
server_shape_set(unsigned increment, unsigned region, unsigned region_bits)
{
	if (increment < 2 || increment > SERVER_INCREMENT_MAX ||
	    region_bits > SERVER_REGION_BITS_MAX || region >= (1u << region_bits) ||
	    2 * region + 2 > increment)
		return false;
	server_shape.increment = increment;
	server_shape.region = region;
	server_shape.region_bits = region_bits;
	return true;
}

unsigned
server_increment(void)
{
	return server_shape.increment;
}

unsigned
server_region(void)
{
	return server_shape.region;
}

unsigned
server_region_bits(void)
{
	return server_shape.region_bits;
}

const char *
server_name(unsigned index)
{
	return index < SERVER_COUNT ? server_names[index] : "?";
}

bool
server_by_name(const char *name, unsigned *index)
{
	for (unsigned i = 0; i < SERVER_COUNT; i++) {
		if (strcmp(name, server_names[i]) == 0) {
			*index = i;
			return true;
		}
	}
	return false;
}

unsigned
server_offset(unsigned index)
{
	return 2 * server_shape.region + index + 1;
}

bool
server_owns_ticket(unsigned index, uint64_t ticket)
{
	return ticket % server_shape.increment == server_offset(index) % server_shape.increment;
}

unsigned
server_region_of(unsigned worker)
{
	return (worker & LAYOUT_WORKER_MAX) >> (10 - server_shape.region_bits);
}

bool
server_owns_worker(unsigned index, unsigned worker)
{
	return worker <= LAYOUT_WORKER_MAX && server_region_of(worker) == server_shape.region &&
	    worker % 2 == server_offset(index) % 2;
}

void
server_worker_range(unsigned *lo, unsigned *hi)
{
	unsigned width = 10 - server_shape.region_bits;

	*lo = server_shape.region << width;
	*hi = *lo + (1u << width) - 1;
}

unsigned
server_partner(unsigned index)
{
	return (index + 1) % SERVER_COUNT;
}
