/*
 * genseam.c - MariaDB's database operations (src/db.c) wrapped so that each
 * callback runs under the client's mutex, followed by the generator's hook
 * (docs/design.md section 11.8).
 */
#include "genseam.h"

#include <stdlib.h>

/* One connection: MariaDB's, and the callbacks lease.c gave it. */
struct genseam_conn {
	struct db_conn		 hdr;	/* first: lease.c holds a pointer to it */
	struct db_conn		*real;
	struct genseam		*s;
	db_cb			 cb;
	void			*arg;
	db_cb			 lost_cb;
	void			*lost_arg;
};

static struct db_conn	*genseam_create(struct event_base *, const struct db_params *,
			    const char *);
static void		 genseam_destroy(struct db_conn *);
static bool		 genseam_connect(struct db_conn *, db_cb, void *);
static bool		 genseam_query(struct db_conn *, const char *, db_cb, void *);
static void		 genseam_close(struct db_conn *);
static void		 genseam_on_lost(struct db_conn *, db_cb, void *);
static bool		 genseam_connected(const struct db_conn *);
static void		 genseam_cb(struct db_conn *, const struct db_result *, void *);
static void		 genseam_lost_cb(struct db_conn *, const struct db_result *, void *);

void
genseam_init(struct genseam *s, pthread_mutex_t *mu, void (*after)(void *), void *arg)
{
	s->ops = (struct db_ops){ genseam_create, genseam_destroy, genseam_connect,
	    genseam_query, genseam_close, genseam_on_lost, genseam_connected };
	s->mu = mu;
	s->after = after;
	s->arg = arg;
}

/* A MariaDB connection behind the seam: params->ops is the seam itself. */
static struct db_conn *
genseam_create(struct event_base *base, const struct db_params *params, const char *name)
{
	struct genseam_conn	*w = calloc(1, sizeof(*w));
	struct db_params	 p = *params;

	if (w == NULL)
		return NULL;
	p.ops = NULL;
	w->s = (struct genseam *)(void *)params->ops;
	w->hdr.ops = &w->s->ops;
	if ((w->real = db_new(base, &p, name)) == NULL) {
		free(w);
		return NULL;
	}
	return &w->hdr;
}

static void
genseam_destroy(struct db_conn *c)
{
	struct genseam_conn	*w = (struct genseam_conn *)(void *)c;

	db_free(w->real);
	free(w);
}

static bool
genseam_connect(struct db_conn *c, db_cb cb, void *arg)
{
	struct genseam_conn	*w = (struct genseam_conn *)(void *)c;

	w->cb = cb;
	w->arg = arg;
	return db_connect(w->real, genseam_cb, w);
}

static bool
genseam_query(struct db_conn *c, const char *sql, db_cb cb, void *arg)
{
	struct genseam_conn	*w = (struct genseam_conn *)(void *)c;

	w->cb = cb;
	w->arg = arg;
	return db_query(w->real, sql, genseam_cb, w);
}

static void
genseam_close(struct db_conn *c)
{
	db_close(((struct genseam_conn *)(void *)c)->real);
}

static void
genseam_on_lost(struct db_conn *c, db_cb cb, void *arg)
{
	struct genseam_conn	*w = (struct genseam_conn *)(void *)c;

	w->lost_cb = cb;
	w->lost_arg = arg;
	db_on_lost(w->real, cb != NULL ? genseam_lost_cb : NULL, w);
}

static bool
genseam_connected(const struct db_conn *c)
{
	return db_connected(((const struct genseam_conn *)(const void *)c)->real);
}

/* An operation's outcome, handed to lease.c under the mutex, then the hook. */
static void
genseam_cb(struct db_conn *real, const struct db_result *r, void *arg)
{
	struct genseam_conn	*w = arg;
	struct genseam		*s = w->s;
	db_cb			 cb = w->cb;

	(void)real;
	pthread_mutex_lock(s->mu);
	cb(&w->hdr, r, w->arg);
	s->after(s->arg);
	pthread_mutex_unlock(s->mu);
}

/* The server closed an idle connection: likewise. */
static void
genseam_lost_cb(struct db_conn *real, const struct db_result *r, void *arg)
{
	struct genseam_conn	*w = arg;
	struct genseam		*s = w->s;

	(void)real;
	pthread_mutex_lock(s->mu);
	w->lost_cb(&w->hdr, r, w->lost_arg);
	s->after(s->arg);
	pthread_mutex_unlock(s->mu);
}
