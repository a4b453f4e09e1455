/*
 * tls.c - TLS on the listeners: OpenSSL server contexts from the tls_*
 * settings, sessions on bufferevent_openssl, reload on SIGHUP
 * (docs/design.md section 7.1).
 */
#include "tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "clk.h"
#include "log.h"

struct tls_listener {
	struct tls		*t;
	enum tls_where		 where;
	SSL_CTX			*ctx;		/* NULL: this listener is cleartext */
	const char		*cert;		/* its own file, else tls_cert_file */
	const char		*key;
};

struct tls {
	const struct config	*cfg;
	struct tls_listener	 l[TLS_WHERE_N];
	struct tls_counters	 stats;
};

static const char *const tls_names[TLS_WHERE_N] = { "listen", "http", "grpc" };

static SSL_CTX	*tls_ctx_new(const struct tls_listener *l, char *err, size_t errlen);
static bool	tls_ctx_verify(SSL_CTX *ctx, const struct config *cfg, char *err,
		    size_t errlen);
static int	tls_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		    const unsigned char *in, unsigned int inlen, void *arg);
static int64_t	tls_not_after(SSL_CTX *ctx);
static void	tls_why(const char *what, const char *file, const char *key, char *err,
		    size_t errlen);

/* OpenSSL's reason for the last failure, in one line naming the setting. */
static void
tls_why(const char *what, const char *file, const char *key, char *err, size_t errlen)
{
	char reason[256] = "unknown error";
	unsigned long e = ERR_peek_error();	/* the first: "no start line", not "PEM lib" */

	if (e != 0)
		ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	snprintf(err, errlen, "%s '%s': %s (%s)", what, file, reason, key);
}

/*
 * gRPC is HTTP/2 only: "h2" when the client offers it, a fatal alert when it
 * offers other protocols only; a client without ALPN goes on (prior knowledge).
 */
static int
tls_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char h2[] = { 2, 'h', '2' };
	unsigned char *sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, h2, sizeof(h2), in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* Client certificates (tls_verify_client optional or required) from tls_ca_file. */
static bool
tls_ctx_verify(SSL_CTX *ctx, const struct config *cfg, char *err, size_t errlen)
{
	STACK_OF(X509_NAME) *names;
	bool required = strcmp(cfg->tls_verify_client, "required") == 0;

	if (strcmp(cfg->tls_verify_client, "off") == 0)
		return true;
	if (SSL_CTX_load_verify_locations(ctx, cfg->tls_ca_file, NULL) != 1 ||
	    (names = SSL_load_client_CA_file(cfg->tls_ca_file)) == NULL) {
		tls_why("cannot load the client CA", cfg->tls_ca_file, "tls_ca_file", err,
		    errlen);
		return false;
	}
	SSL_CTX_set_client_CA_list(ctx, names);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    (required ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
	return true;
}

/*
 * A server context from the listener's files: TLS from tls_min_version, the
 * ciphers of tls_ciphers (1.2) and tls_ciphersuites (1.3), no
 * renegotiation or compression, the certificate chain and its key (checked to
 * match), client certificates when asked, ALPN h2 for gRPC. Sessions resume
 * (tickets, and the cache with an id context so client certificates allow it).
 */
static SSL_CTX *
tls_ctx_new(const struct tls_listener *l, char *err, size_t errlen)
{
	const struct config *cfg = l->t->cfg;
	char certkey[40], keykey[40];
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	bool own = l->cert != cfg->tls_cert_file;

	snprintf(certkey, sizeof(certkey), "%s%s", own ? tls_names[l->where] : "",
	    own ? "_tls_cert_file" : "tls_cert_file");
	snprintf(keykey, sizeof(keykey), "%s%s", own ? tls_names[l->where] : "",
	    own ? "_tls_key_file" : "tls_key_file");
	if (ctx == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, strcmp(cfg->tls_min_version, "TLSv1.3") == 0 ?
	    TLS1_3_VERSION : TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
	    SSL_OP_CIPHER_SERVER_PREFERENCE);
	if (SSL_CTX_set_cipher_list(ctx, cfg->tls_ciphers) != 1) {
		tls_why("no cipher selected by", cfg->tls_ciphers, "tls_ciphers", err, errlen);
		goto fail;
	}
	if (SSL_CTX_set_ciphersuites(ctx, cfg->tls_ciphersuites) != 1) {
		tls_why("no TLS 1.3 cipher suite selected by", cfg->tls_ciphersuites,
		    "tls_ciphersuites", err, errlen);
		goto fail;
	}
	/* An idle session holds no read or write buffer. */
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_id_context(ctx, (const unsigned char *)tls_names[l->where],
	    (unsigned)strlen(tls_names[l->where]));
	if (SSL_CTX_use_certificate_chain_file(ctx, l->cert) != 1) {
		tls_why("cannot load the certificate", l->cert, certkey, err, errlen);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, l->key, SSL_FILETYPE_PEM) != 1) {
		tls_why("cannot load the key", l->key, keykey, err, errlen);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		tls_why("the key does not match the certificate", l->key, keykey, err, errlen);
		goto fail;
	}
	if (!tls_ctx_verify(ctx, cfg, err, errlen))
		goto fail;
	if (l->where == TLS_GRPC)
		SSL_CTX_set_alpn_select_cb(ctx, tls_alpn_cb, NULL);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

/* The notAfter of the certificate ctx serves, in unix seconds (0: unreadable). */
static int64_t
tls_not_after(SSL_CTX *ctx)
{
	X509 *x = SSL_CTX_get0_certificate(ctx);
	struct tm tm;

	if (x == NULL || ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) != 1)
		return 0;
	return (int64_t)timegm(&tm);
}

const char *
tls_where_name(enum tls_where where)
{
	return tls_names[where];
}

bool
tls_init(struct tls **out, const struct config *cfg, char *err, size_t errlen)
{
	const char *on[TLS_WHERE_N] = { cfg->listen_tls, cfg->http_tls, cfg->grpc_tls };
	const char *cert[TLS_WHERE_N] = { cfg->listen_tls_cert_file, cfg->http_tls_cert_file,
	    cfg->grpc_tls_cert_file };
	const char *key[TLS_WHERE_N] = { cfg->listen_tls_key_file, cfg->http_tls_key_file,
	    cfg->grpc_tls_key_file };
	unsigned ports[TLS_WHERE_N] = { cfg->listen_port, cfg->http_port, cfg->grpc_port };
	struct tls *t;
	bool any = false;

	*out = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	t->cfg = cfg;
	for (int w = 0; w < TLS_WHERE_N; w++) {
		struct tls_listener *l = &t->l[w];

		l->t = t;
		l->where = (enum tls_where)w;
		if (strcmp(on[w], "on") != 0 || ports[w] == 0)
			continue;
		l->cert = cert[w][0] != '\0' ? cert[w] : cfg->tls_cert_file;
		l->key = key[w][0] != '\0' ? key[w] : cfg->tls_key_file;
		if ((l->ctx = tls_ctx_new(l, err, errlen)) == NULL) {
			tls_free(t);
			return false;
		}
		t->stats.not_after[w] = tls_not_after(l->ctx);
		log_info("TLS on the %s listener: %s, from %s, client certificates %s",
		    tls_names[w], l->cert, cfg->tls_min_version, cfg->tls_verify_client);
		any = true;
	}
	if (any)
		*out = t;
	else
		tls_free(t);
	return true;
}

struct tls_listener *
tls_listener(struct tls *t, enum tls_where where)
{
	return t != NULL && t->l[where].ctx != NULL ? &t->l[where] : NULL;
}

struct bufferevent *
tls_accept(struct tls_listener *l, struct event_base *base, evutil_socket_t fd)
{
	struct timeval tv = clk_tv_ms(l->t->cfg->tls_handshake_timeout_ms);
	struct bufferevent *bev;
	SSL *ssl = SSL_new(l->ctx);

	if (ssl == NULL) {
		ERR_clear_error();
		return NULL;
	}
	bev = bufferevent_openssl_socket_new(base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
	    BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		return NULL;	/* out of memory: whether libevent kept ssl is not said */
	/* A client that only closes its side (no close_notify) has ended, not failed. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	bufferevent_set_timeouts(bev, &tv, &tv);
	return bev;
}

enum tls_event_kind
tls_event(struct tls_listener *l, struct bufferevent *bev, short what)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	bool up = ssl != NULL && SSL_is_init_finished(ssl);

	ERR_clear_error();
	if (what & BEV_EVENT_CONNECTED) {
		l->t->stats.handshakes++;
		bufferevent_set_timeouts(bev, NULL, NULL);
		return TLS_EV_UP;
	}
	if (!up) {
		if (what & BEV_EVENT_TIMEOUT)
			l->t->stats.handshake_timeouts++;
		else
			l->t->stats.handshake_failures++;
		return TLS_EV_FAIL;
	}
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR))
		return TLS_EV_EOF;
	return TLS_EV_FAIL;
}

void
tls_close_notify(struct bufferevent *bev)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);

	if (ssl != NULL && SSL_is_init_finished(ssl))
		(void)SSL_shutdown(ssl);
	/* The error queue is the thread's: leave nothing for the next session. */
	ERR_clear_error();
}

const struct tls_counters *
tls_counters(const struct tls *t)
{
	return &t->stats;
}

bool
tls_reload(struct tls *t, char *msg, size_t len)
{
	char err[512];
	bool ok = true;
	size_t n = 0;

	msg[0] = '\0';
	t->stats.reloads++;
	t->stats.reload_failed_last = 0;
	for (int w = 0; w < TLS_WHERE_N; w++) {
		struct tls_listener *l = &t->l[w];
		SSL_CTX *ctx;
		int k;

		if (l->ctx == NULL)
			continue;
		if ((ctx = tls_ctx_new(l, err, sizeof(err))) == NULL) {
			k = snprintf(msg + n, len - n, "%sTLS reload of the %s listener failed, "
			    "keeping the certificate it had: %s", n ? "; " : "", tls_names[w], err);
			ok = false;
			t->stats.reload_failures++;
			t->stats.reload_failed_last++;
		} else {
			/* Open sessions hold a reference to the old context: freed with the last. */
			SSL_CTX_free(l->ctx);
			l->ctx = ctx;
			t->stats.not_after[w] = tls_not_after(ctx);
			k = snprintf(msg + n, len - n, "%sTLS on the %s listener reloaded from %s",
			    n ? "; " : "", tls_names[w], l->cert);
		}
		n = k < 0 ? n : n + (size_t)k < len ? n + (size_t)k : len - 1;
	}
	return ok;
}

void
tls_free(struct tls *t)
{
	if (t == NULL)
		return;
	for (int w = 0; w < TLS_WHERE_N; w++)
		SSL_CTX_free(t->l[w].ctx);	/* nothing for NULL */
	free(t);
}
