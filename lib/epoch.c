/*
 * epoch.c - fork detection for libidgen: the process epoch on a wipe-on-fork
 * page, the pthread_atfork handlers, and the registry of open clients.
 */
#include "epoch.h"

#include "client_impl.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_once_t		 epoch_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t		 epoch_mem;	/* if no wipe-on-fork page */
_Atomic uint64_t		*epoch_page = &epoch_mem;
static _Atomic uint64_t		 epoch_last;	/* last epoch given out */
static pthread_mutex_t		 epoch_registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct idgen_client	*epoch_registry;
/* client.c's reset, handed in: this file knows no file above it. */
static _Atomic(epoch_forked_fn)	 epoch_forked;

static void	epoch_init_once(void);
static void	epoch_atfork_prepare(void);
static void	epoch_atfork_parent(void);
static void	epoch_atfork_child(void);

/* Runs epoch_init_once() the first time any client is opened. */
void
epoch_init(epoch_forked_fn forked)
{
	atomic_store(&epoch_forked, forked);
	pthread_once(&epoch_once, epoch_init_once);
}

/* The wipe-on-fork epoch page and the fork handlers, once per process. */
static void
epoch_init_once(void)
{
	void	*p;

	p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
#ifdef MADV_WIPEONFORK
		if (madvise(p, (size_t)sysconf(_SC_PAGESIZE), MADV_WIPEONFORK) == 0)
			epoch_page = p;
		else
#endif
			munmap(p, (size_t)sysconf(_SC_PAGESIZE));
	}
	(void)pthread_atfork(epoch_atfork_prepare, epoch_atfork_parent,
	    epoch_atfork_child);
}

/* Before fork: every client's state made consistent (its mutex held). */
static void
epoch_atfork_prepare(void)
{
	struct idgen_client	*c;

	pthread_mutex_lock(&epoch_registry_mu);
	for (c = epoch_registry; c != NULL; c = c->next_client)
		pthread_mutex_lock(&c->mu);
}

/* After fork, in the parent: the locks taken before it, released. */
static void
epoch_atfork_parent(void)
{
	struct idgen_client	*c;

	for (c = epoch_registry; c != NULL; c = c->next_client)
		pthread_mutex_unlock(&c->mu);
	pthread_mutex_unlock(&epoch_registry_mu);
}

/* In the child: a new epoch, and every client drops what the parent holds. */
static void
epoch_atfork_child(void)
{
	struct idgen_client	*c;
	epoch_forked_fn		 forked = atomic_load(&epoch_forked);
	uint64_t		 e;

	atomic_store(epoch_page, 0);
	e = epoch_current();
	for (c = epoch_registry; c != NULL; c = c->next_client) {
		forked(c, e);
		pthread_mutex_unlock(&c->mu);
	}
	pthread_mutex_unlock(&epoch_registry_mu);
}

/* The current process's epoch; a wiped page means a new process. */
uint64_t
epoch_current(void)
{
	uint64_t	 v = atomic_load_explicit(epoch_page, memory_order_relaxed);
	uint64_t	 zero = 0;

	if (LIKELY(v != 0))
		return v;
	/* Above every epoch the parent gave out: never equal to its own. */
	v = atomic_fetch_add(&epoch_last, 1) + 1;
	if (!atomic_compare_exchange_strong(epoch_page, &zero, v))
		v = zero;
	return v;
}

/* A copy without fork() (a raw clone) is seen here, at the next call. */
void
epoch_check(struct idgen_client *c)
{
	uint64_t	 e = epoch_current();

	if (c->epoch != e)
		atomic_load(&epoch_forked)(c, e);
}

/* Newest first: the order does not matter to the handlers. */
void
epoch_register(struct idgen_client *c)
{
	pthread_mutex_lock(&epoch_registry_mu);
	c->next_client = epoch_registry;
	epoch_registry = c;
	pthread_mutex_unlock(&epoch_registry_mu);
}

/* Before a client is freed, so no fork handler touches it afterwards. */
void
epoch_unregister(struct idgen_client *c)
{
	struct idgen_client	**pp;

	pthread_mutex_lock(&epoch_registry_mu);
	for (pp = &epoch_registry; *pp != NULL; pp = &(*pp)->next_client)
		if (*pp == c) {
			*pp = c->next_client;
			break;
		}
	pthread_mutex_unlock(&epoch_registry_mu);
}
