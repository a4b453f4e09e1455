/*
 * dbtls.h - TLS to the ticket servers: the settings, applied to a Connector/C
 * handle before it connects and checked once it has (docs/design.md section 2.9).
 *
 * Shared by db.c (idserver's non-blocking connections) and idgenctl (blocking
 * ones), so both reach a server the same way. With TLS required, a server is
 * used only over an encrypted session whose certificate chains to the
 * configured CA and, by default, names the address connected to.
 */
#ifndef IDGEN_DBTLS_H
#define IDGEN_DBTLS_H

#include <stdbool.h>
#include <stddef.h>

#define DBTLS_ERR	2026	/* CR_SSL_CONNECTION_ERROR: handshake, certificate, or no TLS */

struct st_mysql;	/* Connector/C's MYSQL; only dbtls.c and its callers see inside */

struct dbtls {
	bool		 required;	/* db_tls = required */
	bool		 verify_host;	/* the certificate must name the address */
	const char	*ca_file;	/* "": the system's trust store */
	const char	*cert_file;	/* "": no client certificate */
	const char	*key_file;
	const char	*min_version;	/* "TLSv1.2" or "TLSv1.3" */
	unsigned	 handshake_ms;	/* bound on each wait of the handshake */
};

/* Sets the handle's TLS options; false when the client library refuses one. */
bool	dbtls_apply(struct st_mysql *m, const struct dbtls *t)
	    __attribute__((warn_unused_result));

/*
 * After a successful connect: false, with the reason, when TLS is required but
 * the session is not encrypted (a library that goes on in cleartext when the
 * server offers no TLS and the host is not verified).
 */
bool	dbtls_check(struct st_mysql *m, const struct dbtls *t, char *why, size_t len)
	    __attribute__((warn_unused_result));

/*
 * A hint to append to a connect's error: access denied (1045) with db_tls =
 * off may be a user created REQUIRE SSL, whose refusal says nothing of TLS.
 * "" otherwise.
 */
const char *dbtls_auth_hint(unsigned err, const struct dbtls *t);

/*
 * Loads the CA file, client certificate and key as a connect would (the key
 * checked against the certificate), for --check-config; false with the first
 * problem, naming its setting. True at once when db_tls is off.
 */
bool	dbtls_load_files(const struct dbtls *t, char *err, size_t errlen)
	    __attribute__((warn_unused_result));

/* "TLSv1.3 TLS_AES_256_GCM_SHA384", or "" for a cleartext session. */
void	dbtls_describe(struct st_mysql *m, char *buf, size_t len);

#endif
