/*
 * genlog.h - where the log lines of the lease code go in libidgen: the last
 * one is kept in the generator's buffer, nothing is written (genlog.c).
 */
#ifndef IDGEN_GENLOG_H
#define IDGEN_GENLOG_H

#include <stddef.h>

/* Keeps this thread's log lines in buf (len bytes): the last one. */
void	genlog_to(char *buf, size_t len);

#endif
