/*
 * server.c - a ticket server's index, name, offset and residue.
 */
#include "server.h"

#include <string.h>

static const char *const server_names[SERVER_COUNT] = { "odd", "even" };

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
	return index + 1;
}

bool
server_owns(unsigned index, uint64_t value)
{
	return value % SERVER_INCREMENT == server_offset(index) % SERVER_INCREMENT;
}

unsigned
server_partner(unsigned index)
{
	return (index + 1) % SERVER_COUNT;
}
