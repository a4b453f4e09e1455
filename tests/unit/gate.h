/*
 * gate.h - a stand-in for fdatasync that a test holds shut and makes fail,
 * for the state file's writer thread (statefile.h's datasync; docs/design.md
 * section 6.9). Included by one test file each: every function is static.
 */
#ifndef IDGEN_GATE_H
#define IDGEN_GATE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static bool gate_shut;		/* writes wait inside the sync until opened */
static int gate_errno;		/* non-zero: the sync fails with it */
static unsigned gate_entered;	/* syncs begun */

/* The writer's fdatasync: counts, waits while shut, then syncs or fails (as set at its start). */
static int __attribute__((unused))
gate_sync(int fd)
{
	int e;

	pthread_mutex_lock(&gate_mu);
	e = gate_errno;		/* as it was when the sync began */
	gate_entered++;
	pthread_cond_broadcast(&gate_cv);
	while (gate_shut)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
	if (e != 0) {
		errno = e;
		return -1;
	}
	return fdatasync(fd);
}

/* Shuts (or opens) the gate and sets how the syncs after it end. */
static void __attribute__((unused))
gate_set(bool shut, int err)
{
	pthread_mutex_lock(&gate_mu);
	gate_shut = shut;
	gate_errno = err;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
}

static void __attribute__((unused))
gate_reset(void)
{
	gate_set(false, 0);
	pthread_mutex_lock(&gate_mu);
	gate_entered = 0;
	pthread_mutex_unlock(&gate_mu);
}

/* Waits until n syncs have begun. */
static void __attribute__((unused))
gate_wait_entered(unsigned n)
{
	pthread_mutex_lock(&gate_mu);
	while (gate_entered < n)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
}

static unsigned __attribute__((unused))
gate_count(void)
{
	unsigned n;

	pthread_mutex_lock(&gate_mu);
	n = gate_entered;
	pthread_mutex_unlock(&gate_mu);
	return n;
}

#endif
