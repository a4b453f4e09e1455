/*
 * wiretls.c - TLS under the wire: OpenSSL's client context built from a
 * client's options, the handshake on a connected socket, and reads and
 * writes with send(2)'s and recv(2)'s results (docs/design.md section 11.7).
 */
#include "wiretls.h"

#include "clk.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define WIRETLS_STALE_RECORDS	8	/* records read ahead of a request (tickets) */

struct wiretls {
	SSL_CTX	*ctx;
	char	*name;		/* the name certificates must carry; NULL: the host */
};

struct wiretls_conn {
	SSL		*ssl;		/* NULL: not connected */
	SSL_SESSION	*sess;		/* the latest session the server gave, for the next */
	uint64_t	 handshakes;
	uint64_t	 resumed;
	char		 err[160];
};

/* One setting: the option's value, else the environment's; and which it was. */
struct wiretls_setting {
	const char	*val;
	const char	*what;
};

static struct wiretls_setting wiretls_setting(const char *, const char *, const char *);
static bool	wiretls_load(struct wiretls *, struct wiretls_setting, struct wiretls_setting,
		    struct wiretls_setting, char *, size_t);
static int	wiretls_new_session(SSL *, SSL_SESSION *);
static void	wiretls_reason(char *, size_t);
static void	wiretls_pipe_block(sigset_t *);
static void	wiretls_pipe_restore(const sigset_t *);
static void	wiretls_alert(struct wiretls_conn *);

/* The option's value when set, else the environment variable's; "" is unset. */
static struct wiretls_setting
wiretls_setting(const char *opt, const char *optname, const char *env)
{
	struct wiretls_setting	 s = { opt, optname };

	if (opt == NULL) {
		s.val = getenv(env);
		s.what = env;
	}
	if (s.val != NULL && *s.val == '\0')
		s.val = NULL;
	return s;
}

/* OpenSSL's last error, as its reason text, into buf; the queue cleared. */
static void
wiretls_reason(char *buf, size_t len)
{
	unsigned long	 e = ERR_peek_last_error();
	const char	*r = e != 0 ? ERR_reason_error_string(e) : NULL;

	if (r != NULL)
		snprintf(buf, len, "%s", r);
	else if (e != 0)
		snprintf(buf, len, "error %lx", e);
	else
		snprintf(buf, len, "unknown error");
	ERR_clear_error();
}

bool
wiretls_new(const struct idgen_options *o, struct wiretls **tp, char *err, size_t errlen)
{
	struct wiretls_setting	 ca, cert, key, name, set[4];
	struct wiretls		*t;
	const char		*env;
	bool			 on;
	unsigned		 i;

	*tp = NULL;
	ca = wiretls_setting(o->tls_ca_file, "tls_ca_file", "IDGEN_TLS_CA");
	cert = wiretls_setting(o->tls_cert_file, "tls_cert_file", "IDGEN_TLS_CERT");
	key = wiretls_setting(o->tls_key_file, "tls_key_file", "IDGEN_TLS_KEY");
	name = wiretls_setting(o->tls_server_name, "tls_server_name", "IDGEN_TLS_SERVER_NAME");
	switch (o->tls) {
	case IDGEN_TLS_ON:
		on = true;
		break;
	case IDGEN_TLS_OFF:
		on = false;
		break;
	case IDGEN_TLS_ENV:
		env = getenv("IDGEN_TLS");
		if (env == NULL || strcmp(env, "") == 0 || strcmp(env, "0") == 0)
			on = false;
		else if (strcmp(env, "1") == 0)
			on = true;
		else {
			snprintf(err, errlen, "bad TLS options: IDGEN_TLS is '%.16s', want 1 "
			    "(on) or 0 (off)", env);
			return false;
		}
		break;
	default:
		snprintf(err, errlen, "bad TLS options: tls is %d, want IDGEN_TLS_ON, "
		    "IDGEN_TLS_OFF or IDGEN_TLS_ENV", o->tls);
		return false;
	}
	set[0] = ca, set[1] = cert, set[2] = key, set[3] = name;
	for (i = 0; i < 4 && !on; i++)
		if (set[i].val != NULL) {
			/* A CA given with TLS off would look like protection and be cleartext. */
			snprintf(err, errlen, "bad TLS options: %s is set but TLS is off "
			    "(IDGEN_TLS=1, the tls option, or idgen --tls turns it on)",
			    set[i].what);
			return false;
		}
	if (!on)
		return true;
	if ((cert.val == NULL) != (key.val == NULL)) {
		snprintf(err, errlen, "bad TLS options: %s and %s go together (a client "
		    "certificate and its key)", cert.what, key.what);
		return false;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (name.val != NULL && (t->name = strdup(name.val)) == NULL)) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return false;
	}
	if (!wiretls_load(t, ca, cert, key, err, errlen)) {
		wiretls_free(t);
		return false;
	}
	*tp = t;
	return true;
}

/* The context: TLS 1.2 up, the server verified, the files loaded. */
static bool
wiretls_load(struct wiretls *t, struct wiretls_setting ca, struct wiretls_setting cert,
    struct wiretls_setting key, char *err, size_t errlen)
{
	char	 why[128];

	ERR_clear_error();
	if ((t->ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		wiretls_reason(why, sizeof(why));
		snprintf(err, errlen, "TLS: cannot make a context: %s", why);
		return false;
	}
	SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	/* An idserver's close without close_notify is a close, as in cleartext. */
	SSL_CTX_set_options(t->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/* Sessions come to wiretls_new_session, which keeps each endpoint's latest. */
	SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_CLIENT |
	    SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(t->ctx, wiretls_new_session);
	if (ca.val != NULL ? SSL_CTX_load_verify_locations(t->ctx, ca.val, NULL) != 1 :
	    SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
		wiretls_reason(why, sizeof(why));
		snprintf(err, errlen, "TLS: cannot load the CA file '%.64s' (%s): %s",
		    ca.val ? ca.val : "the system's", ca.val ? ca.what : "default paths", why);
		return false;
	}
	if (cert.val != NULL && SSL_CTX_use_certificate_chain_file(t->ctx, cert.val) != 1) {
		wiretls_reason(why, sizeof(why));
		snprintf(err, errlen, "TLS: cannot load the certificate '%.64s' (%s): %s",
		    cert.val, cert.what, why);
		return false;
	}
	if (key.val != NULL && (SSL_CTX_use_PrivateKey_file(t->ctx, key.val,
	    SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(t->ctx) != 1)) {
		wiretls_reason(why, sizeof(why));
		snprintf(err, errlen, "TLS: cannot load the key '%.64s' (%s): %s", key.val,
		    key.what, why);
		return false;
	}
	return true;
}

void
wiretls_free(struct wiretls *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	free(t->name);
	free(t);
}

/* A session the server gave (a TLS 1.3 ticket, or 1.2's): the endpoint's next. */
static int
wiretls_new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct wiretls_conn	*c = SSL_get_app_data(ssl);

	if (c == NULL)
		return 0;
	SSL_SESSION_free(c->sess);
	c->sess = sess;
	return 1;	/* the reference is ours */
}

/*
 * OpenSSL writes with write(2): on a socket the peer closed, SIGPIPE would
 * reach the application. Held blocked around the call, and a SIGPIPE it
 * raised taken back.
 */
static void
wiretls_pipe_block(sigset_t *old)
{
	sigset_t	 pipe;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, old);
}

static void
wiretls_pipe_restore(const sigset_t *old)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t	 pipe, pending;
	int		 saved = errno;

	if (sigismember(old, SIGPIPE))
		return;		/* blocked already (the refill thread blocks all) */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE))
		(void)sigtimedwait(&pipe, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, old, NULL);
	errno = saved;
}

bool
wiretls_start(struct wiretls *t, struct wiretls_conn **cp, int fd, const char *host,
    const char *name, uint64_t deadline, char *err, size_t errlen)
{
	struct wiretls_conn	*c = *cp;
	const char		*vn = t->name != NULL ? t->name : host;
	unsigned char		 addr[16];
	sigset_t		 old;
	long			 vr;
	short			 ev;
	int			 rc, e;
	char			 why[128];

	if (c == NULL && (c = *cp = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", name);
		return false;
	}
	wiretls_reset(c);
	ERR_clear_error();
	if ((c->ssl = SSL_new(t->ctx)) == NULL || SSL_set_fd(c->ssl, fd) != 1) {
		wiretls_reason(why, sizeof(why));
		snprintf(err, errlen, "%s: TLS: %s", name, why);
		wiretls_reset(c);
		return false;
	}
	SSL_set_app_data(c->ssl, c);
	/* An address is checked against the certificate's IP entries, a name
	 * against its DNS entries (and sent as SNI). */
	if (inet_pton(AF_INET, vn, addr) == 1 || inet_pton(AF_INET6, vn, addr) == 1)
		rc = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), vn);
	else
		rc = SSL_set1_host(c->ssl, vn) == 1 && SSL_set_tlsext_host_name(c->ssl, vn) == 1;
	if (rc != 1) {
		snprintf(err, errlen, "%s: TLS: bad server name '%.64s'", name, vn);
		wiretls_reset(c);
		return false;
	}
	if (c->sess != NULL)
		(void)SSL_set_session(c->ssl, c->sess);
	wiretls_pipe_block(&old);
	for (;;) {
		ERR_clear_error();
		if ((rc = SSL_connect(c->ssl)) == 1)
			break;
		e = SSL_get_error(c->ssl, rc);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
			ev = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
			if ((rc = clk_wait_fd(fd, ev, deadline)) == 1)
				continue;
			snprintf(err, errlen, rc == 0 ? "%s: TLS handshake not done within "
			    "connect_timeout_ms" : "%s: TLS handshake: poll failed", name);
		} else if ((vr = SSL_get_verify_result(c->ssl)) != X509_V_OK) {
			snprintf(err, errlen, "%s: TLS: the server's certificate does not "
			    "verify for '%.64s': %s (check the CA: tls_ca_file, IDGEN_TLS_CA)",
			    name, vn, X509_verify_cert_error_string(vr));
			ERR_clear_error();
		} else if (e == SSL_ERROR_SSL) {
			wiretls_reason(why, sizeof(why));
			snprintf(err, errlen, "%s: TLS handshake: %s", name, why);
		} else
			snprintf(err, errlen, "%s: TLS handshake: %s", name,
			    errno != 0 ? strerror(errno) : "the server closed the connection");
		wiretls_pipe_restore(&old);
		wiretls_reset(c);
		return false;
	}
	wiretls_pipe_restore(&old);
	c->handshakes++;
	if (SSL_session_reused(c->ssl))
		c->resumed++;
	return true;
}

/* An I/O call's result as send(2)/recv(2) give it. */
static ssize_t
wiretls_result(struct wiretls_conn *c, int n, short *ev)
{
	char	 why[128];

	switch (SSL_get_error(c->ssl, n)) {
	case SSL_ERROR_WANT_READ:
		*ev = POLLIN;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_WANT_WRITE:
		*ev = POLLOUT;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		if (errno != 0 && ERR_peek_last_error() == 0)
			return -1;
		/* FALLTHROUGH */
	default:
		wiretls_reason(why, sizeof(why));
		snprintf(c->err, sizeof(c->err), "TLS: %s", why);
		errno = EPROTO;
		return -1;
	}
}

/* Reads what the server sent before it closed: an alert becomes the error (EPROTO). */
static void
wiretls_alert(struct wiretls_conn *c)
{
	char	 buf[256];
	int	 saved = errno, n;

	ERR_clear_error();
	n = SSL_read(c->ssl, buf, sizeof(buf));
	if (n <= 0 && SSL_get_error(c->ssl, n) == SSL_ERROR_SSL) {
		wiretls_reason(buf, sizeof(buf));
		snprintf(c->err, sizeof(c->err), "TLS: %.120s", buf);
		errno = EPROTO;
		return;
	}
	ERR_clear_error();
	errno = saved;
}

ssize_t
wiretls_send(struct wiretls_conn *c, const char *p, size_t len, short *ev)
{
	sigset_t	 old;
	ssize_t		 r;
	int		 n;

	ERR_clear_error();
	errno = 0;
	wiretls_pipe_block(&old);
	n = SSL_write(c->ssl, p, len > INT32_MAX ? INT32_MAX : (int)len);
	r = n > 0 ? n : wiretls_result(c, n, ev);
	wiretls_pipe_restore(&old);
	/*
	 * A server that refused us after the handshake (TLS 1.3: no client
	 * certificate) sent an alert before it closed: its reason, if it came.
	 */
	if (r < 0 && (errno == EPIPE || errno == ECONNRESET))
		wiretls_alert(c);
	/* Nothing was written: a write that returns 0 is an error here. */
	if (r == 0) {
		errno = EPIPE;
		r = -1;
	}
	return r;
}

ssize_t
wiretls_recv(struct wiretls_conn *c, char *p, size_t len, short *ev)
{
	int	 n;

	ERR_clear_error();
	errno = 0;
	n = SSL_read(c->ssl, p, len > INT32_MAX ? INT32_MAX : (int)len);
	return n > 0 ? n : wiretls_result(c, n, ev);
}

const char *
wiretls_error(const struct wiretls_conn *c)
{
	return c->err;
}

/*
 * Reads what arrived ahead of a request: session tickets are taken in (the
 * next session), anything else (data, close_notify, EOF, an alert) is news.
 */
bool
wiretls_stale(struct wiretls_conn *c)
{
	struct pollfd	 pfd = { .fd = SSL_get_fd(c->ssl), .events = POLLIN | POLLRDHUP };
	unsigned	 i;
	char		 b;
	int		 n;

	for (i = 0; i < WIRETLS_STALE_RECORDS; i++) {
		if (SSL_pending(c->ssl) == 0 && poll(&pfd, 1, 0) == 0)
			return false;
		ERR_clear_error();
		if ((n = SSL_peek(c->ssl, &b, 1)) > 0)
			return true;
		if (SSL_get_error(c->ssl, n) != SSL_ERROR_WANT_READ) {
			ERR_clear_error();
			return true;
		}
	}
	return false;
}

void
wiretls_reset(struct wiretls_conn *c)
{
	if (c == NULL || c->ssl == NULL)
		return;
	/*
	 * Marked shut down without a word on the wire (a forked child's copy
	 * must not write): OpenSSL would otherwise make the session it holds
	 * unresumable.
	 */
	SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(c->ssl);
	c->ssl = NULL;
	ERR_clear_error();
}

void
wiretls_conn_free(struct wiretls_conn *c)
{
	if (c == NULL)
		return;
	wiretls_reset(c);
	SSL_SESSION_free(c->sess);
	free(c);
}

void
wiretls_counts(const struct wiretls_conn *c, uint64_t *handshakes, uint64_t *resumed)
{
	*handshakes = c != NULL ? c->handshakes : 0;
	*resumed = c != NULL ? c->resumed : 0;
}
