/*
 * peers.c - open connections counted per peer address (IPv4 as IPv4-mapped
 * IPv6, IPv6 per /64), in one fixed open-addressing table per listener.
 */
#include "peers.h"

#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Allocates the table; a failure leaves it absent (nothing is limited). */
void
peers_init(struct peers *p)
{
	p->slots = calloc(PEERS_SLOTS, sizeof(*p->slots));
}

/* The slot of sa's address, found or created; NULL when there is none to give. */
struct peer *
peers_get(struct peers *p, const struct sockaddr *sa)
{
	static const unsigned char unused[16];
	unsigned char key[16] = { 0 };
	uint64_t h = UINT64_C(14695981039346656037);
	struct peer *free_slot = NULL;
	unsigned i;

	if (p->slots == NULL || sa == NULL)
		return NULL;
	if (sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		/*
		 * One /64 counts as one address: it is what one site or host gets,
		 * and it holds 2^64 addresses (docs/design.md section 5). The tag
		 * byte keeps the key apart from IPv4-mapped ones and from "unused".
		 */
		if (!IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(const void *)key)) {
			memset(key + 8, 0, 8);
			key[15] = 1;
		}
	} else
		return NULL;
	for (i = 0; i < 16; i++)
		h = (h ^ key[i]) * UINT64_C(1099511628211);
	for (i = 0; i < PEERS_SLOTS; i++) {
		struct peer *a = &p->slots[(h + i) % PEERS_SLOTS];

		if (a->count > 0 && memcmp(a->key, key, 16) == 0)
			return a;
		if (a->count == 0 && free_slot == NULL)
			free_slot = a;
		if (a->count == 0 && memcmp(a->key, unused, 16) == 0)
			break;		/* never used: the address is not further on */
	}
	if (free_slot != NULL)
		memcpy(free_slot->key, key, 16);
	return free_slot;
}

/* Frees the table. */
void
peers_free(struct peers *p)
{
	free(p->slots);
	p->slots = NULL;
}
