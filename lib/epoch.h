/*
 * epoch.h - fork safety: the process epoch, the fork handlers, and the list
 * of open clients they reset (docs/design.md section 11.4).
 *
 * A child process must never hand out an ID its parent holds. Every held
 * range and thread share is tagged with the process's epoch, kept in a page
 * the kernel wipes in a child (MADV_WIPEONFORK) and cleared by a
 * pthread_atfork handler as well; a client or share whose epoch is not the
 * current one is dropped before anything is handed out. This is the only
 * process-wide state of the library besides the clients' serial numbers.
 */
#ifndef IDGEN_EPOCH_H
#define IDGEN_EPOCH_H

#include <stdatomic.h>
#include <stdint.h>

struct idgen_client;

/*
 * The epoch's page (or a plain variable without MADV_WIPEONFORK): not static
 * because idgen_next's fast path (share.c) reads it inline, with no call.
 * Hidden here as well as by -fvisibility=hidden, which covers only
 * definitions: so the fast path reads it PC-relative, not through the GOT.
 * 0 means a process that has not taken its epoch yet (epoch_current()).
 */
extern _Atomic uint64_t	*epoch_page __attribute__((visibility("hidden")));

/* Resets a client a child inherited (c's mutex held): client.c's, handed in. */
typedef void	(*epoch_forked_fn)(struct idgen_client *c, uint64_t epoch);

/*
 * The wipe-on-fork page and the fork handlers, once per process; forked is
 * called for each client of a new process (the same function every call).
 */
void		epoch_init(epoch_forked_fn forked);

/* The current process's epoch; a wiped page means a new process. */
uint64_t	epoch_current(void);

/* Detects a process copy the fork handlers did not see (c's mutex held). */
void		epoch_check(struct idgen_client *c);

/* Adds c to the clients the fork handlers reset, or takes it off. */
void		epoch_register(struct idgen_client *c);
void		epoch_unregister(struct idgen_client *c);

#endif
