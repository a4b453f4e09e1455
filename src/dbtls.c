/*
 * dbtls.c - TLS options on a Connector/C handle, and the check that a
 * connection which must be encrypted is (docs/design.md section 2.9).
 */
#include "dbtls.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <mysql.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

/* The handshake's wait (connect_timeout_ms): one value per process, as the config. */
static int dbtls_wait_ms = 1000;

static int	dbtls_io_wait(my_socket fd, my_bool is_read, int timeout);
static bool	dbtls_why(const char *what, const char *file, const char *key, char *err,
		    size_t errlen);

/*
 * Connector/C 3.3 waits for each step of the TLS handshake with poll() for its
 * connect timeout, a number of seconds, taken as milliseconds: a server more
 * than a millisecond away failed the handshake. Given as MARIADB_OPT_IO_WAIT,
 * this wait is used instead, and waits at least connect_timeout_ms. The
 * library runs the handshake outside its non-blocking API, so on idserver's
 * connections it holds the loop for its round trip either way: here, or in a
 * blocking read when the driver left the socket blocking (docs/design.md
 * section 2.9).
 */
static int
dbtls_io_wait(my_socket fd, my_bool is_read, int timeout)
{
	struct pollfd p = { .fd = fd, .events = is_read ? POLLIN : POLLOUT };
	int rc;

	if (timeout < dbtls_wait_ms)
		timeout = dbtls_wait_ms;
	do
		rc = poll(&p, 1, timeout);
	while (rc == -1 && errno == EINTR);
	if (rc == 0)
		errno = ETIMEDOUT;
	return rc;
}

/*
 * Connector/C 3.3: SSL_ENFORCE asks for TLS; a CA file makes the handshake
 * verify the chain; VERIFY_SERVER_CERT verifies the chain (against the system
 * store when no CA file is given), refuses a server that offers no TLS before
 * authenticating, and checks the host, which for us is always an IP address.
 */
bool
dbtls_apply(struct st_mysql *m, const struct dbtls *t)
{
	my_bool on = 1, verify = t->verify_host ? 1 : 0;
	const char *versions = strcmp(t->min_version, "TLSv1.3") == 0 ? "TLSv1.3" :
	    "TLSv1.2,TLSv1.3";

	if (!t->required)
		return true;
	dbtls_wait_ms = t->handshake_ms > 0 ? (int)t->handshake_ms : 1000;
	if (mysql_optionsv(m, MARIADB_OPT_IO_WAIT, dbtls_io_wait) != 0 ||
	    mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on) != 0 ||
	    mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify) != 0 ||
	    mysql_optionsv(m, MARIADB_OPT_TLS_VERSION, versions) != 0)
		return false;
	if (t->ca_file[0] != '\0' && mysql_optionsv(m, MYSQL_OPT_SSL_CA, t->ca_file) != 0)
		return false;
	/*
	 * Without the host check the library goes on in cleartext with a server
	 * (or whoever is in between) that offers no TLS, and dbtls_check refuses
	 * the session only after the login: allow only logins that never send the
	 * password itself, not mysql_clear_password or dialog.
	 */
	if (!t->verify_host && mysql_optionsv(m, MARIADB_OPT_RESTRICTED_AUTH,
	    "mysql_native_password,client_ed25519") != 0)
		return false;
	if (t->cert_file[0] != '\0' &&
	    (mysql_optionsv(m, MYSQL_OPT_SSL_CERT, t->cert_file) != 0 ||
	    mysql_optionsv(m, MYSQL_OPT_SSL_KEY, t->key_file) != 0))
		return false;
	return true;
}

bool
dbtls_check(struct st_mysql *m, const struct dbtls *t, char *why, size_t len)
{
	if (!t->required || mysql_get_ssl_cipher(m) != NULL)
		return true;
	snprintf(why, len, "the server does not offer TLS and db_tls = required: not used "
	    "in cleartext (configure ssl_cert and ssl_key on it)");
	return false;
}

void
dbtls_describe(struct st_mysql *m, char *buf, size_t len)
{
	const char *cipher = mysql_get_ssl_cipher(m), *version = NULL;

	buf[0] = '\0';
	if (cipher == NULL)
		return;
	if (mariadb_get_infov(m, MARIADB_CONNECTION_TLS_VERSION, &version) != 0 ||
	    version == NULL)
		version = "TLS";
	snprintf(buf, len, "%s %s", version, cipher);
}

const char *
dbtls_auth_hint(unsigned err, const struct dbtls *t)
{
	return err == 1045 && !t->required ? " (db_tls = off: a MariaDB user created REQUIRE "
	    "SSL, or X509, is refused so over cleartext; if it is, set db_tls = required)" : "";
}

/* OpenSSL's first reason for the last failure, in one line naming the setting. */
static bool
dbtls_why(const char *what, const char *file, const char *key, char *err, size_t errlen)
{
	char reason[256] = "unknown error";
	unsigned long e = ERR_peek_error();

	if (e != 0)
		ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	snprintf(err, errlen, "%s: cannot load '%s' as %s: %s", key, file, what, reason);
	return false;
}

bool
dbtls_load_files(const struct dbtls *t, char *err, size_t errlen)
{
	SSL_CTX *ctx;
	bool ok = true;

	if (!t->required)
		return true;
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		snprintf(err, errlen, "out of memory");
		return false;
	}
	if (t->ca_file[0] != '\0' && SSL_CTX_load_verify_locations(ctx, t->ca_file, NULL) != 1)
		ok = dbtls_why("CA certificates (PEM)", t->ca_file, "db_tls_ca_file", err, errlen);
	else if (t->cert_file[0] != '\0' &&
	    SSL_CTX_use_certificate_chain_file(ctx, t->cert_file) != 1)
		ok = dbtls_why("a certificate chain (PEM)", t->cert_file, "db_tls_cert_file", err,
		    errlen);
	else if (t->key_file[0] != '\0' &&
	    SSL_CTX_use_PrivateKey_file(ctx, t->key_file, SSL_FILETYPE_PEM) != 1)
		ok = dbtls_why("a private key (PEM)", t->key_file, "db_tls_key_file", err, errlen);
	else if (t->key_file[0] != '\0' && SSL_CTX_check_private_key(ctx) != 1)
		ok = dbtls_why("the key of db_tls_cert_file", t->key_file, "db_tls_key_file", err,
		    errlen);
	SSL_CTX_free(ctx);
	return ok;
}
