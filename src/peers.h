/*
 * peers.h - open connections counted per peer address, so that one address
 * cannot take every connection slot of a listener: max_clients_per_ip on the
 * text/RESP port (conn.c), grpc_max_connections_per_ip on gRPC (proto_grpc.c).
 * Each listener owns a table of its own; the caller checks and moves a count.
 */
#ifndef IDGEN_PEERS_H
#define IDGEN_PEERS_H

#include <sys/socket.h>

/* Slots of a table (open addressing; a slot per address with connections open). */
#define PEERS_SLOTS	8192

struct peer {
	unsigned char	key[16];	/* IPv4-mapped, or an IPv6 /64 (tagged) */
	unsigned	count;		/* connections open from it */
};

struct peers {
	struct peer	*slots;		/* PEERS_SLOTS, NULL if out of memory */
};

/* An empty table; out of memory, nothing is limited per address and all else works. */
void	peers_init(struct peers *p);

/*
 * The slot of sa's address (created with count 0), or NULL when the table is
 * full or absent or sa is not IPv4/IPv6: slots with count 0 are reused, so it
 * holds the addresses with connections open.
 */
struct peer *peers_get(struct peers *p, const struct sockaddr *sa);

void	peers_free(struct peers *p);

#endif
