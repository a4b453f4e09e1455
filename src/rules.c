/*
 * rules.c - the names of the rules the simulation can switch off (rules.h).
 */
#include "rules.h"

unsigned rules_off;

const struct rule_info rules[RULE_COUNT] = {
	[RULE_TICKET_KNOWN] = { "ticket-known",
	    "a ticket is used only above known[R] as it was when asked for (ticket.c, 6.3)" },
	[RULE_OWN_MARK] = { "own-mark",
	    "the ticket transaction's own-mark UPDATE must match its row (ticket.c, 6.3)" },
	[RULE_STATE_MARKS] = { "state-marks",
	    "the state file's marks bind a restarted idserver (tier.c, layer 1 of 6.2)" },
	[RULE_WITNESS] = { "witness",
	    "a new connection raises its copies of the others' marks before serving (ticket.c, 6.5)" },
	[RULE_CHECK_READ] = { "check-read",
	    "a connect-time check's marks are merged when its answer is taken, not after the "
	    "rights and witness (ticket.c, tier.c, 6.4)" },
	[RULE_COPY_FIRST] = { "copy-first",
	    "a ticket's block is banked only once another server of its region holds a copy "
	    "of its mark, or none is up (tier.c, 6.5)" },
	[RULE_NS_KNOWN] = { "ns-ticket-known",
	    "a namespace ticket is used only above known[N][R] as it was when asked for "
	    "(ticket.c, 13.6)" },
	[RULE_NS_OWN_MARK] = { "ns-own-mark",
	    "a namespace ticket transaction's own-row UPDATE must match its row (ticket.c, 13.6)" },
	[RULE_NS_STATE_MARKS] = { "ns-state-marks",
	    "the state file's namespace marks bind a restarted idserver (tier.c, 13.5)" },
	[RULE_NS_WRITE_AHEAD] = { "ns-write-ahead",
	    "a namespace ticket's mark is in the state file before its block is banked "
	    "(tier.c, 13.6)" },
	[RULE_NS_REMEMBER] = { "ns-remember",
	    "every namespace mark a check reads is kept in the state file (tier.c, 13.6)" },
	[RULE_NS_PARTNER_FIRST] = { "ns-partner-first",
	    "a new connection serves a namespace only once every other server up or connecting "
	    "answered a namespace check sent after it connected (tier.c, 13.6)" },
	[RULE_NS_WITNESS] = { "ns-witness",
	    "a new connection raises its copies of the others' namespace marks before serving "
	    "(tier.c, 13.6)" },
	[RULE_NS_COPY_FIRST] = { "ns-copy-first",
	    "a namespace ticket's block is banked only once another server of the region holds "
	    "a copy of its mark, or none is up (tier.c, 13.6)" },
	[RULE_SEAL] = { "seal",
	    "a ticket is banked only when its server's own row, read under the ticket's lock, "
	    "is unsealed and in the generation its connection was checked under, the view's "
	    "(ticket.c, 12.4)" },
	[RULE_KNOWN_AT_ANSWER] = { "known-at-answer",
	    "a ticket covered by a mark learned while it was in flight (a copy read before its "
	    "answer) is not used (ticket.c, 6.3, 13.6; both sequences)" },
	[RULE_WITNESS_LANDED] = { "witness-landed",
	    "a server that refuses its connect's witness or the rights before it (read-only, "
	    "a full disk) is not used, nor its copies counted as landed (ticket.c, 6.5)" },
	[RULE_PARTNER_WAIT] = { "partner-wait",
	    "a new connection waits for its partner's check until the partner has answered "
	    "nothing for partner_wait_ms, not only until its first failure; a namespace's too "
	    "(tier.c; 6.4, 13.6)" },
	[RULE_CLAIM_NOW] = { "claim-now",
	    "a claim takes only a worker row whose window_end is below the claimant's now "
	    "(lease.c, 3.3)" },
	[RULE_WRITE_AHEAD] = { "write-ahead",
	    "no Snowflake ts is minted above the reservation on disk (snowflake.c, 6.7)" },
	[RULE_STAMP] = { "stamp",
	    "a lease is resumed only from the very file at its latest write (lease.c, 6.8 rule 4)" },
	[RULE_OWNER] = { "owner",
	    "a lease is resumed only when the file's writer is provably dead (lease.c, 6.8)" },
	[RULE_LEASE_GUARD] = { "lease-guard",
	    "the simulated servers refuse, as the schema's triggers on idgen_leases do, an edit "
	    "that deletes, renumbers, empties or moves back a row whose window may be open "
	    "(schema/40-leases.sql, 6.5; simulation only: production has the real triggers)" },
	[RULE_REGION_LAYOUT] = { "region-layout",
	    "a server whose meta row has region bits is used only with region_bits 5 and "
	    "block_size 2^20, the layout of every region (check.c's check_server, 12.3)" },
	[RULE_SYNC_CHECKED] = { "sync-checked",
	    "a write whose fdatasync failed is not durable: no block banked, no reservation "
	    "counted on it (statefile.c, 6.9)" },
	[RULE_RETIRE_CARRY] = { "retire-carry",
	    "tier retire-server, once every idserver refused the server, raises its copies of the "
	    "others' marks on every other server of the region (ctl/add.c, 12.5)" },
	[RULE_COPY_CONN] = { "copy-conn",
	    "a ticket waiting for its state file write or its copy is not used once the "
	    "connection it was drawn on ends (lost, or its server refused): a copy landing "
	    "after a restore may be a re-draw's (tier.c, 6.5; both sequences)" },
	[RULE_MARK_GUARD] = { "mark-guard",
	    "the simulated servers refuse, as the schema's triggers on idgen_marks and "
	    "idgen_ns_marks do, an UPDATE that lowers (high_water + 1) * block_size or renames "
	    "a row above 0, and a DELETE of a row above 0 (schema/10-tables.sql, 6.5; "
	    "simulation only: production has the real triggers)" },
};
