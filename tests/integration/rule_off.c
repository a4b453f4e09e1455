/*
 * rule_off.c - turns off, at start, the rule named by RULE_OFF (src/rules.h's
 * names, as idsim's --disable takes them). Linked only into a variant idserver
 * that a test builds in its own directory from the build's objects
 * (test_copy_conn.sh with COPY_CONN_RULE_OFF=1), to show the test finds what
 * the rule prevents; never part of a shipped build, which has no way to turn a
 * rule off (docs/design.md section 14).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"

#ifndef RULE_OFF
#error "define RULE_OFF as a rule's name, e.g. -DRULE_OFF='\"copy-conn\"'"
#endif

static void rule_off_at_start(void) __attribute__((constructor));

/* Sets the rule's bit in rules_off before main runs; an unknown name aborts. */
static void
rule_off_at_start(void)
{
	for (unsigned r = 0; r < RULE_COUNT; r++) {
		if (rules[r].name != NULL && strcmp(rules[r].name, RULE_OFF) == 0) {
			rules_off |= 1u << r;
			return;
		}
	}
	fprintf(stderr, "rule_off.c: no rule named %s\n", RULE_OFF);
	abort();
}
