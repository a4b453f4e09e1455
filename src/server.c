/*
 * server.c - a ticket server's index, name, offset and residue, and the
 * tier's shape (docs/design.md section 12).
 */
#include "server.h"

#include <stdio.h>
#include <string.h>

#include "layout.h"

static void	server_names_build(void);
static bool	server_number_in(const char *s, unsigned lo, unsigned hi);

static const char *const server_roles[SERVER_PAIR] = { "odd", "even" };
static uint64_t server_retired_mask;	/* by index: reported retired (12.5) */

/* The classic pair until the config says otherwise. */
static struct {
	unsigned	increment;
	unsigned	generation;		/* of the increment (docs/design.md 12.4) */
	unsigned	region;
	unsigned	region_bits;
	unsigned	extras;			/* our region's servers after the pair */
	unsigned	extra[SERVER_EXTRA_MAX];	/* ... their offsets, ascending */
	unsigned	others;			/* other regions' pairs after ours */
	unsigned	other[SERVER_OTHER_MAX];
	char		names[SERVER_MAX][16];	/* "odd", "o3", "odd_r<R>", ... */
	char		roles[SERVER_MAX][16];	/* marks rows: "odd", "even", "o3" */
} server_shape = { 2, 0, 0, 0, 0, { 0 }, 0, { 0 }, { "odd", "even" }, { "odd", "even" } };

bool
server_shape_set(unsigned increment, unsigned region, unsigned region_bits)
{
	if (increment < 2 || increment > SERVER_INCREMENT_MAX ||
	    region_bits > SERVER_REGION_BITS_MAX || region >= (1u << region_bits) ||
	    2 * region + 2 > increment)
		return false;
	server_shape.increment = increment;
	server_shape.generation = 0;
	server_retired_mask = 0;
	server_shape.region = region;
	server_shape.region_bits = region_bits;
	server_shape.extras = 0;
	server_shape.others = 0;
	server_names_build();
	return true;
}

/* The lowest offset a server beyond a region's pair may have. */
unsigned
server_extra_min(void)
{
	unsigned pairs = 2u << server_shape.region_bits;

	return (pairs < server_shape.increment ? pairs : server_shape.increment) + 1;
}

bool
server_extras_set(const unsigned *offsets, unsigned n)
{
	unsigned sorted[SERVER_EXTRA_MAX];

	/* With regions, a ticket's region is read from its offset (decode.c): pairs only. */
	if (n > SERVER_EXTRA_MAX || (n > 0 && server_shape.region_bits > 0))
		return false;
	for (unsigned k = 0; k < n; k++) {
		unsigned j = k;

		if (offsets[k] < server_extra_min() || offsets[k] > server_shape.increment)
			return false;
		/* Insertion sort: one order, whatever the setting's. */
		for (; j > 0 && sorted[j - 1] > offsets[k]; j--)
			sorted[j] = sorted[j - 1];
		if (j > 0 && sorted[j - 1] == offsets[k])
			return false;
		sorted[j] = offsets[k];
	}
	memcpy(server_shape.extra, sorted, n * sizeof(sorted[0]));
	server_shape.extras = n;
	server_names_build();
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
	if (n > 0)
		memcpy(server_shape.other, regions, n * sizeof(regions[0]));
	server_shape.others = n;
	server_names_build();
	return true;
}

/* Names and marks rows of every server, from the shape. */
static void
server_names_build(void)
{
	for (unsigned i = 0; i < server_count(); i++) {
		unsigned role = (i - (i < server_own_count() ? 0 : server_own_count())) % SERVER_PAIR;

		if (i < SERVER_PAIR || !server_is_own(i))
			snprintf(server_shape.roles[i], sizeof(server_shape.roles[i]), "%s",
			    server_roles[role]);
		else
			snprintf(server_shape.roles[i], sizeof(server_shape.roles[i]), "o%u",
			    server_offset(i));
		/* Our region's servers are named as their marks rows, other regions' apart. */
		if (server_is_own(i))
			memcpy(server_shape.names[i], server_shape.roles[i],
			    sizeof(server_shape.names[i]));
		else
			snprintf(server_shape.names[i], sizeof(server_shape.names[i]), "%s_r%u",
			    server_roles[role], server_region_at(i));
	}
}

unsigned
server_own_count(void)
{
	return SERVER_PAIR + server_shape.extras;
}

unsigned
server_count(void)
{
	return server_own_count() + SERVER_PAIR * server_shape.others;
}

unsigned
server_region_at(unsigned index)
{
	return server_is_own(index) ? server_shape.region :
	    server_shape.other[(index - server_own_count()) / SERVER_PAIR];
}

bool
server_is_own(unsigned index)
{
	return index < server_own_count();
}

void
server_group(unsigned index, unsigned *first, unsigned *count)
{
	if (server_is_own(index)) {
		*first = 0;
		*count = server_own_count();
		return;
	}
	*first = index - (index - server_own_count()) % SERVER_PAIR;
	*count = SERVER_PAIR;
}

unsigned
server_increment(void)
{
	return server_shape.increment;
}

void
server_retire(unsigned index)
{
	if (index < SERVER_MAX)
		server_retired_mask |= UINT64_C(1) << index;
}

bool
server_retired(unsigned index)
{
	return index < SERVER_MAX && (server_retired_mask >> index & 1) != 0;
}

unsigned
server_generation(void)
{
	return server_shape.generation;
}

bool
server_view_adopt(unsigned generation, unsigned increment)
{
	if (generation <= server_shape.generation || increment < server_shape.increment ||
	    increment > SERVER_INCREMENT_MAX)
		return false;
	server_shape.generation = generation;
	server_shape.increment = increment;
	return true;
}

void
server_view_revert(unsigned generation, unsigned increment)
{
	server_shape.generation = generation;
	server_shape.increment = increment;
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
	return index < server_count() ? server_shape.roles[index] : "?";
}

const char *
server_parity(unsigned index)
{
	return server_roles[(server_offset(index) + 1) % 2];
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

/* True when s is a decimal number in [lo, hi], without a leading zero. */
static bool
server_number_in(const char *s, unsigned lo, unsigned hi)
{
	unsigned v = 0;

	if (*s == '\0' || (s[0] == '0' && s[1] != '\0') || strlen(s) > 2)
		return false;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned)(*s - '0');
	}
	return v >= lo && v <= hi;
}

bool
server_name_shaped(const char *name)
{
	unsigned regions = 1u << SERVER_REGION_BITS_MAX;

	if (strcmp(name, "odd") == 0 || strcmp(name, "even") == 0)
		return true;
	if (strncmp(name, "odd_r", 5) == 0)
		return server_number_in(name + 5, 0, regions - 1);
	if (strncmp(name, "even_r", 6) == 0)
		return server_number_in(name + 6, 0, regions - 1);
	return name[0] == 'o' && server_number_in(name + 1, 1, SERVER_INCREMENT_MAX);
}

unsigned
server_offset(unsigned index)
{
	if (index < SERVER_PAIR)
		return 2 * server_shape.region + index + 1;
	if (server_is_own(index))
		return server_shape.extra[index - SERVER_PAIR];
	return 2 * server_region_at(index) + (index - server_own_count()) % SERVER_PAIR + 1;
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
	return index < SERVER_PAIR && worker <= LAYOUT_WORKER_MAX &&
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
	unsigned first, count;

	server_group(index, &first, &count);
	return first + (index - first + 1) % count;
}
