/*
 * config.h - settings from an INI file and command-line flags (flags win).
 *
 * One declarative table of keys with type, bounds, default and help; --help,
 * the man page's settings, the sample config and docs/operations.md's settings
 * reference are generated from it (config_doc.c, scripts/gen-settings.sh).
 * Passwords come only from the environment or a file.
 */
#ifndef IDGEN_CONFIG_H
#define IDGEN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "server.h"

struct config {
	char		*listen_host;
	unsigned	 listen_port;
	char		*http_host;
	unsigned	 http_port;
	unsigned	 http_timeout_ms;
	unsigned	 http_max_header_bytes;
	unsigned	 http_max_body_bytes;
	char		*http_cors_origins;
	unsigned	 http_cors_max_age_s;
	char		*grpc_host;
	unsigned	 grpc_port;
	unsigned	 grpc_max_streams;
	unsigned	 grpc_max_message_bytes;
	unsigned	 grpc_max_connections;
	unsigned	 grpc_idle_timeout_ms;
	unsigned	 grpc_max_connections_per_ip;
	unsigned	 grpc_request_timeout_ms;
	unsigned	 max_callers;
	char		*listen_tls;		/* "off" or "on", as http_tls, grpc_tls */
	char		*http_tls;
	char		*grpc_tls;
	char		*tls_cert_file;		/* every TLS listener's, unless its own is set */
	char		*tls_key_file;
	char		*listen_tls_cert_file;
	char		*listen_tls_key_file;
	char		*http_tls_cert_file;
	char		*http_tls_key_file;
	char		*grpc_tls_cert_file;
	char		*grpc_tls_key_file;
	char		*tls_ca_file;		/* client certificates' CA */
	char		*tls_verify_client;	/* "off", "optional" or "required" */
	char		*tls_min_version;	/* "TLSv1.2" or "TLSv1.3" */
	char		*tls_ciphers;		/* TLS 1.2, OpenSSL's cipher list syntax */
	char		*tls_ciphersuites;	/* TLS 1.3 */
	unsigned	 tls_handshake_timeout_ms;
	char		*auth_tokens_file;	/* "" = no authentication */
	unsigned	 auth_fail_delay_ms;
	unsigned	 auth_open_metrics;
	char		*auth_mode;		/* "required" or "optional" (the rollout) */
	char		*odd_host;
	unsigned	 odd_port;
	char		*even_host;
	unsigned	 even_port;
	unsigned	 tier_increment;	/* M: auto_increment_increment */
	unsigned	 region;
	unsigned	 region_bits;
	char		*more_servers;	/* the setting; parsed into extra[] */
	unsigned	 extras;
	struct config_server {
		unsigned	offset;
		char		host[64];
		unsigned	port;
	}		 extra[SERVER_EXTRA_MAX];	/* by offset, as server.h orders them */
	char		*other_regions;	/* the setting; parsed into other[] */
	unsigned	 others;
	struct config_region {
		unsigned	region;
		char		host[SERVER_PAIR][64];	/* odd, even */
		unsigned	port[SERVER_PAIR];
	}		 other[SERVER_OTHER_MAX];
	char		*db_user;
	char		*db_name;
	char		*db_password_file;
	char		*db_password;		/* from IDGEN_DB_PASSWORD or the file */
	char		*db_tls;		/* "off" or "required" */
	char		*db_tls_ca_file;
	char		*db_tls_cert_file;
	char		*db_tls_key_file;
	unsigned	 db_tls_verify_host;
	char		*db_tls_min_version;	/* "TLSv1.2" or "TLSv1.3" */
	char		*state_file;		/* "" turns the local state off */
	unsigned	 connect_timeout_ms;
	unsigned	 query_timeout_ms;
	unsigned	 reprobe_min_ms;
	unsigned	 reprobe_max_ms;
	unsigned	 recheck_ms;
	unsigned	 partner_wait_ms;	/* docs/design.md 6.4: partner first */
	unsigned	 refused_retry_ms;
	unsigned	 prefetch_blocks;
	unsigned	 prefetch_max_blocks;
	unsigned	 prefetch_lead_ms;
	unsigned	 refill_wait_ms;
	unsigned	 max_namespaces;
	unsigned	 ns_idle_ms;
	unsigned	 block_size;
	unsigned	 max_clients;
	unsigned	 max_output_bytes;
	unsigned	 write_timeout_ms;
	unsigned	 idle_timeout_ms;
	unsigned	 partial_timeout_ms;
	unsigned	 max_clients_per_ip;
	unsigned	 refusal_wait_ms;
	unsigned	 max_pending_refusals;
	unsigned	 max_requests_per_event;
	unsigned	 max_output_per_turn;
	unsigned	 client_sndbuf_bytes;
	unsigned	 resp_max_args;
	unsigned	 resp_max_bulk_bytes;
	unsigned	 resp_multi_max_commands;
	unsigned	 resp_multi_max_bytes;
	unsigned	 trim_interval_ms;
	unsigned	 trim_free_bytes;
	unsigned	 drain_timeout_ms;
	char		*log_level;		/* "debug", "info", "warn" or "error" */
	char		*log_format;		/* "text" or "json" */
	unsigned	 lease_window_ms;
	unsigned	 lease_extend_ms;
	unsigned	 max_clock_skew_ms;
	unsigned	 backstep_tolerance_ms;
	unsigned	 clock_wait_ms;
	unsigned	 fallback_reserve_ms;
	unsigned	 fallback_reserve_lead_max_ms;
	bool		 check_only;		/* --check-config: not a setting */
	const char	*dump_format;		/* --dump-settings FORMAT: not a setting */
};

enum config_type {
	CONFIG_STR,
	CONFIG_UINT,
};

/*
 * One row of the settings table: the one place a setting is described. help
 * is a phrase without a final period; `code` marks names and values (bold in
 * the man page, code in Markdown, plain in --help and the sample config).
 */
struct config_key {
	const char		*name;
	enum config_type	 type;
	size_t			 offset;
	const char		*def;
	unsigned		 min;
	unsigned		 max;
	const char		*help;
};

/* A heading of the table, from the key named first on; intro may be NULL. */
struct config_group {
	const char	*first;
	const char	*title;
	const char	*intro;
};

/*
 * Fills cfg from defaults, the --config file and flags, then checks it (numeric
 * host addresses, a user, file types, relations between settings). Returns false
 * with a one-line reason in err; *exit_now is set for --help and --version
 * (printed on stdout; exit 0).
 */
bool	config_load(struct config *cfg, int argc, char **argv, bool *exit_now,
	    char *err, size_t errlen) __attribute__((warn_unused_result));

/* The settings table and its headings, as config_doc.c prints them. */
struct config_table {
	const struct config_key		*keys;
	size_t				 nkeys;
	const struct config_group	*groups;
	size_t				 ngroups;
};

/*
 * config_doc.c: prints the settings table t as FORMAT: "man" (roff for
 * man/idserver.8), "md" (docs/operations.md), "conf" (an INI file of cfg's
 * values, every setting with its help) or "help" (--help's lines). Returns
 * false for an unknown format. The table comes from the caller (config.c), so
 * the printer calls nothing back.
 */
bool	config_doc_print(const struct config *cfg, const struct config_table *t,
	    const char *format, FILE *out);

/*
 * The address of ticket server index (server.h): the odd_* or even_*
 * settings, a more_servers server, or an other_regions pair.
 */
void	config_server_addr(const struct config *cfg, unsigned server, const char **host,
	    unsigned *port);

/* The db_tls* settings (and connect_timeout_ms) as dbtls.h takes them; strings owned by cfg. */
struct dbtls;
void	config_dbtls(struct dbtls *t, const struct config *cfg);

/*
 * The connection settings (db.h) of ticket server index: its address, the
 * db_* login and timeouts, TLS; flags and ops as db_params takes them.
 */
struct db_params;
struct db_ops;
void	config_db_params(struct db_params *p, const struct config *cfg, unsigned server,
	    unsigned flags, const struct db_ops *ops);

/*
 * Reads one "IP:PORT" or "[IPv6]:PORT" (more_servers, other_regions, idgenctl
 * tier add-server) into host and port; *p moves past it. Whether host is a
 * numeric address is the caller's check.
 */
bool	config_parse_addr(const char **p, char *host, size_t hostlen, unsigned *port)
	    __attribute__((warn_unused_result));

void	config_free(struct config *cfg);

#endif
