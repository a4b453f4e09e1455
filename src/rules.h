/*
 * rules.h - switches that turn off one rule of the uniqueness argument each,
 * for the simulation only (build/idsim --disable RULE; docs/design.md section
 * 14). Production never sets rules_off: every RULE_ON() is then one load and
 * one test of a bit that is always clear.
 *
 * Compiled with -DIDGEN_RULES_FIXED, RULE_ON() is the constant true and the
 * compiler drops the switches: no rule can be turned off, so the simulation
 * refuses to build that way (sim/idsim.c). `make rules-fixed` builds such an
 * idserver in build/rules-fixed/, and bench row 19 runs it beside the shipped
 * one to show what the switches cost production (design 14, "What the seams
 * cost production"). The shipped build keeps the switches.
 */
#ifndef IDGEN_RULES_H
#define IDGEN_RULES_H

enum rule {
	RULE_TICKET_KNOWN,	/* ticket.c: t > known[R] as sent (6.3) */
	RULE_OWN_MARK,		/* ticket.c: the transaction's own-mark UPDATE matched (6.3) */
	RULE_STATE_MARKS,	/* tier.c: the state file's marks bind from the start (6.2, layer 1) */
	RULE_WITNESS,		/* ticket.c: copies brought up before a new connection serves (6.5) */
	RULE_CHECK_READ,	/* ticket.c, tier.c: a connect-time check's marks merged when read (6.4) */
	RULE_PARTNER_WAIT,	/* tier.c: a partner cannot answer only after partner_wait_ms (6.4) */
	RULE_CLAIM_NOW,		/* lease.c: a claim takes only a row whose window_end < now (3.3) */
	RULE_WRITE_AHEAD,	/* snowflake.c: no ts above the reservation on disk (6.7) */
	RULE_STAMP,		/* lease.c: resumed only from the very file at its latest write (6.8) */
	RULE_OWNER,		/* lease.c: resumed only when the file's writer is provably dead (6.8) */
	RULE_COPY_FIRST,	/* tier.c: a block banked once another server holds its copy (6.5) */
	RULE_NS_KNOWN,		/* ticket.c: a namespace ticket above known[N][R] as sent (13.6) */
	RULE_NS_OWN_MARK,	/* ticket.c: the namespace ticket's own-row UPDATE matched (13.6) */
	RULE_NS_STATE_MARKS,	/* tier.c: the state file's namespace marks bind (13.5) */
	RULE_NS_WRITE_AHEAD,	/* tier.c: a namespace ticket's mark in the file first (13.6) */
	RULE_NS_REMEMBER,	/* tier.c: marks a check read kept in the state file (13.6) */
	RULE_NS_PARTNER_FIRST,	/* tier.c: the others read after a connect, first (13.6) */
	RULE_NS_WITNESS,	/* tier.c: a new connection's copies before it serves (13.6) */
	RULE_NS_COPY_FIRST,	/* tier.c: a namespace block banked once another server holds
				 * its copy (13.6) */
	RULE_SEAL,		/* ticket.c: banked only from its own row unsealed in the
				 * connection's generation, the view's (12.4) */
	RULE_KNOWN_AT_ANSWER,	/* ticket.c: t > known[R] as its answer is taken, else unused
				 * (6.3, 13.6; both sequences) */
	RULE_LEASE_GUARD,	/* sim/tserver.c only: the schema's triggers on idgen_leases
				 * refuse a held row freed by hand (6.5) */
	RULE_WITNESS_LANDED,	/* ticket.c: a server whose witness was refused (read-only)
				 * is not used, its copies not counted as landed (6.5) */
	RULE_REGION_LAYOUT,	/* check.c: a server of a tier of regions has R = 5 and
				 * B = 2^20 (12.3) */
	RULE_SYNC_CHECKED,	/* statefile.c: a failed fdatasync is no durable write (6.9) */
	RULE_COPY_CONN,		/* tier.c: a ticket whose connection ended before its block
				 * was banked is not used (6.5; both sequences) */
	RULE_RETIRE_CARRY,	/* ctl/add.c: tier retire-server carries the retired server's
				 * copies of the others' marks to the others (12.5) */
	RULE_MARK_GUARD,	/* sim/tserver.c only: the schema's triggers on idgen_marks
				 * and idgen_ns_marks refuse a mark lowered by hand (6.5) */
	RULE_COUNT,
};

struct rule_info {
	const char	*name;		/* as --disable takes it */
	const char	*what;
};

extern unsigned rules_off;		/* bit (1 << rule): disabled; 0 in production */
extern const struct rule_info rules[RULE_COUNT];

#ifdef IDGEN_RULES_FIXED
#define RULE_ON(r)	1
#else
#define RULE_ON(r)	((rules_off & (1u << (r))) == 0)
#endif

#endif
