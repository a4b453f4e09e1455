/*
 * server.c - a ticket server's index, name, offset and residue, and the
 * tier's shape (docs/design.md section 12).
 */
#include "server.h"

#include <stdio.h>
#include <string.h>

#include "layout.h"

static const char *const server_roles[SERVER_PAIR] = { "odd", "even" };

/* The classic pair until the config says otherwise. */
static struct {
	unsigned	increment;
	unsigned	region;
	unsigned	region_bits;
	unsigned	others;			/* other regions' pairs after ours */
	unsigned	other[SERVER_OTHER_MAX];
	char		names[SERVER_MAX][16];	/* "odd_r<R>", "even_r<R>" */
} server_shape = { 2, 0, 0, 0, { 0 }, { "odd", "even" } };

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
	server_shape.others = 0;
	return true;
}

bool
server_others_set(const unsigned *regions, unsigned n)
{
	if (n > SERVER_OTHER_MAX)
		return false;
	for (unsigned k = 0; k < n; k++) {
		if (regions[k] == server_shape.region ||
		    regions[k] >= (1u << server_shape.region_bits) ||
		    2 * regions[k] + 2 > server_shape.increment)
			return false;
		for (unsigned j = 0; j < k; j++)
			if (regions[j] == regions[k])
				return false;
	}
	for (unsigned k = 0; k < n; k++) {
		server_shape.other[k] = regions[k];
		for (unsigned r = 0; r < SERVER_PAIR; r++)
			snprintf(server_shape.names[SERVER_PAIR * (k + 1) + r],
			    sizeof(server_shape.names[0]), "%s_r%u", server_roles[r], regions[k]);
	}
	server_shape.others = n;
	return true;
}

unsigned
server_count(void)
{
	return SERVER_PAIR * (1 + server_shape.others);
}

unsigned
server_region_at(unsigned index)
{
	return index < SERVER_PAIR ? server_shape.region :
	    server_shape.other[index / SERVER_PAIR - 1];
}

bool
server_is_own(unsigned index)
{
	return index < SERVER_PAIR;
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
	return index < server_count() ? server_shape.names[index] : "?";
}

const char *
server_role(unsigned index)
{
	return server_roles[index % SERVER_PAIR];
}

bool
server_by_name(const char *name, unsigned *index)
{
	for (unsigned i = 0; i < server_count(); i++) {
		if (strcmp(name, server_shape.names[i]) == 0) {
			*index = i;
			return true;
		}
	}
	return false;
}

unsigned
server_offset(unsigned index)
{
	return 2 * server_region_at(index) + index % SERVER_PAIR + 1;
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
	return server_is_own(index) && worker <= LAYOUT_WORKER_MAX &&
	    server_region_of(worker) == server_shape.region &&
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
	return index ^ 1u;
}
