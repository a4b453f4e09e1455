/*
 * idgen.c - the idgen command: IDs, dense blocks and local decoding on top of
 * libidgen, for shells and scripts (see idgen(1) and docs/design.md
 * section 11).
 *
 * Exit status: 0 success, 1 service error, 2 usage error. With --json, an
 * error is one line of JSON on stderr, {"error":{"code":"usage" or
 * "service","message":...}}, and the exit status is the same.
 */
#include "clk.h"
#include "idgen.h"
#include "layout.h"
#include "reply.h"
#include "wire.h"
#include "wiretls.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_DEFAULT_SERVER	"127.0.0.1:4242"
#define CLI_DEFAULT_TIMEOUT_MS	2000
#define CLI_TIMEOUT_MAX_MS	600000
#define CLI_EXIT_SERVICE	1
#define CLI_EXIT_USAGE		2
#define CLI_EXACT_LIMIT		(UINT64_C(1) << 53)	/* first ID a JS number rounds */

/* Long options without a short form. */
enum {
	CLI_OPT_TLS = 256,
	CLI_OPT_CACERT,
	CLI_OPT_CERT,
	CLI_OPT_KEY,
	CLI_OPT_SERVERNAME,
};

struct cli {
	const char	*servers;
	const char	*ns;		/* --ns, else $IDGEN_NS; NULL: the default sequence */
	bool		 json;
	unsigned	 timeout_ms;
	uint64_t	 block_size;
	unsigned	 tier_increment;	/* for decode: the tier's shape */
	unsigned	 region_bits;
	char		*token;		/* --token-file's first line; NULL: IDGEN_TOKEN */
	char		*auth;		/* "AUTH <token>\n" for stats and ping, or NULL */
	size_t		 authlen;
	int		 tls;		/* enum idgen_tls: --tls, else IDGEN_TLS */
	const char	*cacert;	/* --cacert, --cert, --key, --servername; */
	const char	*cert;		/* NULL: the environment's (IDGEN_TLS_*) */
	const char	*key;
	const char	*servername;
	struct wiretls	*wtls;		/* TLS of stats and ping, or NULL */
};

#define CLI_STATS_MAX	(256 * 1024)	/* STATS text kept until its END */

/* One STATS or PING exchange: lines kept, the reply's end noticed. */
struct cli_exchange {
	bool		 keep;
	bool		 err;
	bool		 pong;
	char		 errline[IDGEN_ERR_LEN];
	char		*text;		/* "name value\n" lines of STATS */
	size_t		 len;
};

/* --json was given: errors are JSON too (set before the options are read). */
static bool	cli_json_errors;

static void	cli_usage(FILE *);
static void	cli_json_string(FILE *, const char *);
static int	cli_error(int, const char *, ...) __attribute__((format(printf, 2, 3)));
static void	cli_warn_unneeded(const char *);
static int	cli_count(const char *, unsigned, unsigned, unsigned *);
static idgen_client *cli_open(const struct cli *, unsigned, int *);
static void	cli_json_num(const char *, uint64_t);
static int	cli_ids(const struct cli *, const char *, unsigned);
static int	cli_decode(const struct cli *, int, char **);
static bool	cli_stats_line(void *, const char *, const char *);
static void	cli_stats_print(const struct cli *, const char *, size_t);
static int	cli_stats(const struct cli *);
static int	cli_token_file(struct cli *, const char *);
static int	cli_command(struct cli *, int, char **);
static int	cli_ping(const struct cli *);
static void	cli_tls_options(const struct cli *, struct idgen_options *);
static bool	cli_usage_error(const char *);

static void
cli_usage(FILE *f)
{
	fprintf(f,
	    "usage: idgen [--server LIST] [--ns NAME] [--json] [--timeout MS]\n"
	    "             [--block-size B] [--tier-increment M --region-bits R]\n"
	    "             [--token-file F]\n"
	    "             [--tls [--cacert F] [--cert F --key F] [--servername N]]\n"
	    "             COMMAND [ARG...]\n"
	    "\n"
	    "commands:\n"
	    "  id             print one new ID\n"
	    "  ids N          print N new IDs (1..%d), ascending, one per line\n"
	    "  block N        take a dense block of N IDs (1..%d); prints \"FIRST N\"\n"
	    "  decode ID...   decode IDs locally (no server needed); an ID may be\n"
	    "                 decimal or its 11-character base58 form\n"
	    "  stats          print the first reachable idserver's STATS lines\n"
	    "  ping           check each idserver: \"PONG host:port N us\" or "
	    "\"DOWN host:port reason\"\n"
	    "\n"
	    "options:\n"
	    "  -s, --server LIST    idservers, host:port[,host:port...] (default "
	    "$IDGEN_SERVER,\n"
	    "                       else %s); or a tier's address,\n"
	    "                       mariadb://USER@HOST:PORT,HOST:PORT/DATABASE: Snowflake\n"
	    "                       IDs minted here from a worker number leased from the\n"
	    "                       tier (password: $IDGEN_DB_PASSWORD); or both,\n"
	    "                       host:port,...,mariadb://...: the idservers while any\n"
	    "                       answers, the tier's lease when none does\n"
	    "  -n, --ns NAME        take IDs of namespace NAME (id, ids, block; letters,\n"
	    "                       digits, _; 1..%d bytes; default $IDGEN_NS, else the\n"
	    "                       default sequence); an unknown one is a service error\n"
	    "  -j, --json           JSON output (IDs as strings; numbers below 2^53 only;\n"
	    "                       errors as {\"error\":{...}} on stderr)\n"
	    "  -t, --timeout MS     how long a command waits for a server (default %d)\n"
	    "  -b, --block-size B   the pair's ticket block size, for decode (default "
	    "%" PRIu64 ")\n"
	    "  -M, --tier-increment M  the tier's tier_increment, for decode (default 2)\n"
	    "  -R, --region-bits R  the tier's region_bits, for decode (default 0: one\n"
	    "                       region); with R > 0 decode names each ID's region\n"
	    "  -T, --token-file F   the token idserver asks for (auth_tokens_file): the\n"
	    "                       file's first line (default $IDGEN_TOKEN; never\n"
	    "                       on the command line, where ps would show it)\n"
	    "      --tls            TLS to the idservers (listen_tls; default $IDGEN_TLS=1):\n"
	    "                       TLS 1.2 or later, each server's certificate verified\n"
	    "      --cacert F       CA certificates (PEM) servers' certificates chain to\n"
	    "                       (default $IDGEN_TLS_CA, else the system's store)\n"
	    "      --cert F         client certificate (PEM) for tls_verify_client\n"
	    "                       (default $IDGEN_TLS_CERT); with --key\n"
	    "      --key F          its private key (default $IDGEN_TLS_KEY)\n"
	    "      --servername N   the name (or IP) certificates must carry (default\n"
	    "                       $IDGEN_TLS_SERVER_NAME, else each server's host)\n"
	    "  -h, --help           this text\n"
	    "  -V, --version        the version\n"
	    "\n"
	    "exit status: 0 success, 1 service error, 2 usage error\n",
	    IDGEN_IDS_MAX, IDGEN_BLOCK_MAX, CLI_DEFAULT_SERVER, IDGEN_NS_MAX,
	    CLI_DEFAULT_TIMEOUT_MS, IDGEN_DEFAULT_BLOCK_SIZE);
}

/*
 * --token-file: the token is the file's first line (a token never goes on
 * the command line, where ps shows it). 0, or the exit status of a refusal.
 */
static int
cli_token_file(struct cli *cli, const char *path)
{
	char line[WIRE_TOKEN_MAX + 3];
	FILE *f = fopen(path, "r");
	bool ok;

	if (f == NULL)
		return cli_error(CLI_EXIT_USAGE, "--token-file: cannot read %s: %s", path,
		    strerror(errno));
	ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (!ok)
		return cli_error(CLI_EXIT_USAGE, "--token-file: %s is empty", path);
	line[strcspn(line, "\r\n")] = '\0';
	if (cli->token != NULL) {
		explicit_bzero(cli->token, strlen(cli->token));
		free(cli->token);
	}
	cli->token = strdup(line);
	explicit_bzero(line, sizeof(line));
	if (cli->token == NULL)
		return cli_error(CLI_EXIT_SERVICE, "out of memory");
	return 0;
}

/* s as a JSON string: quotes, backslashes and control characters escaped. */
static void
cli_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	fputc('"', f);
}

/*
 * An error on stderr: "idgen: <message>", or with --json one line
 * {"error":{"code":"usage"|"service","message":"<message>"}}. Returns rc.
 */
static int
cli_error(int rc, const char *fmt, ...)
{
	char	 msg[IDGEN_ERR_LEN + 128];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!cli_json_errors) {
		fprintf(stderr, "idgen: %s\n", msg);
		return rc;
	}
	fprintf(stderr, "{\"error\":{\"code\":\"%s\",\"message\":",
	    rc == CLI_EXIT_USAGE ? "usage" : "service");
	cli_json_string(stderr, msg);
	fprintf(stderr, "}}\n");
	return rc;
}

/*
 * Once per run, on stderr: an idserver answered the token with "no token
 * configured" (it has no auth_tokens_file yet, a rollout of tokens) and was
 * used all the same. name: the idserver, or NULL when the library's.
 */
static void
cli_warn_unneeded(const char *name)
{
	static bool	 warned;
	char		 msg[IDGEN_ERR_LEN + 128];

	if (warned)
		return;
	warned = true;
	snprintf(msg, sizeof(msg), "warning: %s has no auth_tokens_file: the token is not "
	    "needed there (used without it)", name != NULL ? name : "an idserver");
	if (!cli_json_errors) {
		fprintf(stderr, "idgen: %s\n", msg);
		return;
	}
	fprintf(stderr, "{\"warning\":{\"code\":\"auth_unneeded\",\"message\":");
	cli_json_string(stderr, msg);
	fprintf(stderr, "}}\n");
}

/* Parses a count in [lo, hi]; CLI_EXIT_USAGE with a message otherwise. */
static int
cli_count(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	const char	*e;
	uint64_t	 v;

	if (s == NULL || (e = reply_u64(s, s + strlen(s), &v)) == NULL || *e != '\0' ||
	    v < lo || v > hi) {
		return cli_error(CLI_EXIT_USAGE, "\"%s\": expected a number %u..%u",
		    s ? s : "", lo, hi);
	}
	*out = (unsigned)v;
	return 0;
}

/*
 * A client that takes exactly n IDs per request and keeps none in reserve;
 * NULL with *rc set (a bad --server is a usage error, the rest service errors).
 */
static idgen_client *
cli_open(const struct cli *cli, unsigned n, int *rc)
{
	struct idgen_options	 o;
	idgen_client		*c;
	char			 err[IDGEN_ERR_LEN];

	idgen_options_init(&o);
	o.token = cli->token;
	o.ns = cli->ns;
	cli_tls_options(cli, &o);
	o.timeout_ms = cli->timeout_ms;
	o.connect_timeout_ms = cli->timeout_ms;
	o.fetch_ids = n;
	o.chunk = n;
	o.max_batch = 1;
	o.min_held = 0;
	o.max_held = n;
	o.lead_ms = 0;
	if ((c = idgen_open(cli->servers, &o, err, sizeof(err))) == NULL)
		*rc = cli_error(cli_usage_error(err) ? CLI_EXIT_USAGE : CLI_EXIT_SERVICE, "%s", err);
	return c;
}

/* An error of idgen_open that the command line caused (exit status 2). */
static bool
cli_usage_error(const char *err)
{
	return strncmp(err, "bad idserver endpoint", 21) == 0 ||
	    strncmp(err, "no idserver", 11) == 0 || strncmp(err, "more than", 9) == 0 ||
	    strncmp(err, "bad namespace", 13) == 0 || strncmp(err, "bad TLS options", 15) == 0 ||
	    strncmp(err, "TLS: cannot load", 16) == 0;
}

/* The TLS options of the command line (the rest from the environment). */
static void
cli_tls_options(const struct cli *cli, struct idgen_options *o)
{
	o->tls = cli->tls;
	o->tls_ca_file = cli->cacert;
	o->tls_cert_file = cli->cert;
	o->tls_key_file = cli->key;
	o->tls_server_name = cli->servername;
}

/*
 * "name":N, only when N is exact as a JavaScript number (below 2^53, a ticket
 * ID): a Snowflake ID is given by its _str member alone, as over HTTP.
 */
static void
cli_json_num(const char *name, uint64_t id)
{
	if (id < CLI_EXACT_LIMIT)
		printf("\"%s\":%" PRIu64 ",", name, id);
}

/* id, ids N, block N. */
static int
cli_ids(const struct cli *cli, const char *cmd, unsigned n)
{
	uint64_t	 ids[IDGEN_IDS_MAX], first = 0;
	struct idgen_stats st;
	idgen_client	*c;
	unsigned	 i;
	int		 rc;

	if ((c = cli_open(cli, n, &rc)) == NULL)
		return rc;
	if (strcmp(cmd, "block") == 0)
		rc = idgen_block(c, n, &first);
	else if (strcmp(cmd, "ids") == 0)
		rc = idgen_ids(c, n, ids);
	else
		rc = idgen_next(c, &ids[0]);
	idgen_stats(c, &st);
	if (st.auth_unneeded > 0)
		cli_warn_unneeded(NULL);
	if (rc != IDGEN_OK) {
		rc = cli_error(CLI_EXIT_SERVICE, "%s: %s", cmd, idgen_last_error());
		idgen_close(c);
		return rc;
	}
	idgen_close(c);
	if (strcmp(cmd, "block") == 0) {
		if (cli->json) {
			printf("{");
			cli_json_num("first", first);
			printf("\"first_str\":\"%" PRIu64 "\",\"count\":%u}\n", first, n);
		} else
			printf("%" PRIu64 " %u\n", first, n);
	} else if (strcmp(cmd, "id") == 0) {
		if (cli->json) {
			printf("{");
			cli_json_num("id", ids[0]);
			printf("\"id_str\":\"%" PRIu64 "\"}\n", ids[0]);
		} else
			printf("%" PRIu64 "\n", ids[0]);
	} else if (cli->json) {
		/* ids only when every ID is exact as a JavaScript number. */
		for (i = 0; i < n && ids[i] < CLI_EXACT_LIMIT; i++)
			;
		printf("{");
		if (i == n) {
			printf("\"ids\":[");
			for (i = 0; i < n; i++)
				printf("%s%" PRIu64, i ? "," : "", ids[i]);
			printf("],");
		}
		printf("\"ids_str\":[");
		for (i = 0; i < n; i++)
			printf("%s\"%" PRIu64 "\"", i ? "," : "", ids[i]);
		printf("]}\n");
	} else
		for (i = 0; i < n; i++)
			printf("%" PRIu64 "\n", ids[i]);
	return fflush(stdout) == 0 ? 0 : CLI_EXIT_SERVICE;
}

/*
 * decode ID...: local, offline. The JSON is the server's (HTTP /v1/decode,
 * RESP DECODE): source, block, server; timestamp_ms, time, worker,
 * datacenter_id, worker_id, seq.
 */
static int
cli_decode(const struct cli *cli, int argc, char **argv)
{
	struct idgen_decoded	 d;
	int			 i, rc = 0;

	if (argc == 0)
		return cli_error(CLI_EXIT_USAGE, "decode: give at least one ID");
	for (i = 0; i < argc; i++) {
		if (idgen_decode_text_tier(argv[i], cli->block_size, cli->tier_increment,
		    cli->region_bits, &d) != IDGEN_OK) {
			rc = cli_error(CLI_EXIT_USAGE, "decode: %s", idgen_last_error());
			continue;
		}
		if (cli->json) {
			printf("{");
			cli_json_num("id", d.id);
			printf("\"id_str\":\"%" PRIu64 "\",\"b58\":\"%s\",", d.id, d.b58);
		}
		if (d.kind == IDGEN_TICKET && cli->json)
			printf("\"source\":\"ticket\",\"block\":%" PRIu64 ",\"server\":\"%s\"",
			    d.ticket, d.odd ? "odd" : "even");
		else if (d.kind == IDGEN_TICKET)
			printf("%" PRIu64 " ticket block=%" PRIu64 " server=%s", d.id,
			    d.ticket, d.odd ? "odd" : "even");
		else if (cli->json)
			printf("\"source\":\"snowflake\",\"timestamp_ms\":%" PRId64 ","
			    "\"time\":\"%s\",\"worker\":%u,\"datacenter_id\":%u,"
			    "\"worker_id\":%u,\"seq\":%u", d.unix_ms, d.time, d.worker,
			    d.datacenter_id, d.worker_id, d.seq);
		else
			printf("%" PRIu64 " snowflake time=%s worker=%u seq=%u", d.id,
			    d.time, d.worker, d.seq);
		/* A tier of regions: the region, as the server's DECODE ends. */
		if (d.has_region)
			printf(cli->json ? ",\"region\":%u" : " region=%u", d.region);
		printf(cli->json ? "}\n" : "\n");
	}
	return rc;
}

/* A STATS or PING reply line: printed, or noticed as the end of the reply. */
static bool
cli_stats_line(void *arg, const char *p, const char *e)
{
	struct cli_exchange	*x = arg;
	const char		*code, *msg;
	size_t			 cl, ml;

	if (reply_err(p, e, &code, &cl, &msg, &ml)) {
		x->err = true;
		snprintf(x->errline, sizeof(x->errline), "%.*s", (int)(e - p), p);
		return true;
	}
	if (e - p == 4 && memcmp(p, "PONG", 4) == 0) {
		x->pong = true;
		return true;
	}
	if (e - p == 3 && memcmp(p, "END", 3) == 0)
		return true;
	/* Kept until END: a server failing half-way prints nothing of its own. */
	if (x->keep && x->text != NULL && x->len + (size_t)(e - p) + 1 < CLI_STATS_MAX) {
		memcpy(x->text + x->len, p, (size_t)(e - p));
		x->len += (size_t)(e - p);
		x->text[x->len++] = '\n';
	}
	return false;
}

/*
 * Prints STATS lines as text, or as one JSON object typed as HTTP /stats
 * types them: a number (decimal digits) is a JSON number below 2^53, a
 * string at or above it; text is a string.
 */
static void
cli_stats_print(const struct cli *cli, const char *t, size_t len)
{
	const char	*p = t, *e = t + len, *nl, *sp, *v, *num;
	uint64_t	 n;
	bool		 first = true;

	if (!cli->json) {
		fwrite(t, 1, len, stdout);
		return;
	}
	putchar('{');
	for (; p < e && (nl = memchr(p, '\n', (size_t)(e - p))) != NULL; p = nl + 1) {
		/* "STAT name value": names and values hold no quote or backslash. */
		if (nl - p < 5 || memcmp(p, "STAT ", 5) != 0 ||
		    (sp = memchr(p + 5, ' ', (size_t)(nl - p - 5))) == NULL)
			continue;
		printf("%s\"%.*s\":", first ? "" : ",", (int)(sp - p - 5), p + 5);
		first = false;
		v = sp + 1;
		if ((num = reply_u64(v, nl, &n)) == nl && n < CLI_EXACT_LIMIT) {
			printf("%" PRIu64, n);
			continue;
		}
		putchar('"');
		for (; v < nl; v++)
			if (*v == '"' || *v == '\\')
				printf("\\%c", *v);
			else if ((unsigned char)*v >= 0x20)
				putchar(*v);
		putchar('"');
	}
	printf("}\n");
}

/* stats: the first idserver that answers. */
static int
cli_stats(const struct cli *cli)
{
	struct cli_exchange	 x;
	struct wire		 w;
	const char		*p, *e;
	char			 err[IDGEN_ERR_LEN];
	unsigned		 got;

	for (p = cli->servers; ; p = e + 1) {
		if ((e = strchr(p, ',')) == NULL)
			e = p + strlen(p);
		if (!wire_init(&w, p, (size_t)(e - p), err, sizeof(err)))
			return cli_error(CLI_EXIT_USAGE, "%s", err);
		w.auth = cli->auth;
		w.authlen = cli->authlen;
		w.tls = cli->wtls;
		memset(&x, 0, sizeof(x));
		x.keep = true;
		if ((x.text = malloc(CLI_STATS_MAX)) == NULL) {
			wire_free(&w);
			return cli_error(CLI_EXIT_SERVICE, "out of memory");
		}
		err[0] = '\0';
		got = wire_exchange(&w, "STATS\n", 6, 1, cli->timeout_ms, cli->timeout_ms,
		    cli_stats_line, &x, err, sizeof(err));
		if (w.auth_unneeded > 0)
			cli_warn_unneeded(w.name);
		if (got == 1 && !x.err) {
			cli_stats_print(cli, x.text, x.len);
			free(x.text);
			wire_free(&w);
			return fflush(stdout) == 0 ? 0 : CLI_EXIT_SERVICE;
		}
		(void)cli_error(CLI_EXIT_SERVICE, "stats: %s", x.err ? x.errline : err);
		free(x.text);
		wire_free(&w);
		if (*e == '\0')
			break;
	}
	return CLI_EXIT_SERVICE;
}

/* ping: every idserver, with its round-trip time. */
static int
cli_ping(const struct cli *cli)
{
	struct cli_exchange	 x;
	struct wire		 w;
	const char		*p, *e, *why;
	char			 err[IDGEN_ERR_LEN];
	size_t			 n;
	int64_t			 t0;
	int			 rc = 0;
	long			 us;
	unsigned		 got;

	for (p = cli->servers; ; p = e + 1) {
		if ((e = strchr(p, ',')) == NULL)
			e = p + strlen(p);
		if (!wire_init(&w, p, (size_t)(e - p), err, sizeof(err)))
			return cli_error(CLI_EXIT_USAGE, "%s", err);
		w.auth = cli->auth;
		w.authlen = cli->authlen;
		w.tls = cli->wtls;
		memset(&x, 0, sizeof(x));
		t0 = clk_mono_ns();
		err[0] = '\0';
		got = wire_exchange(&w, "PING\n", 5, 1, cli->timeout_ms, cli->timeout_ms,
		    cli_stats_line, &x, err, sizeof(err));
		if (w.auth_unneeded > 0)
			cli_warn_unneeded(w.name);
		if (got == 1 && x.pong) {
			us = (long)((clk_mono_ns() - t0) / 1000);
			if (cli->json)
				printf("{\"server\":\"%s\",\"up\":true,\"us\":%ld}\n",
				    w.name, us);
			else
				printf("PONG %s %ld us\n", w.name, us);
		} else {
			/* The wire's messages start with the endpoint's name: once is enough. */
			why = x.err ? x.errline : err[0] ? err : "unexpected reply";
			n = strlen(w.name);
			if (strncmp(why, w.name, n) == 0 && strncmp(why + n, ": ", 2) == 0)
				why += n + 2;
			if (cli->json) {
				printf("{\"server\":\"%s\",\"up\":false,\"error\":\"",
				    w.name);
				for (; *why; why++)
					if (*why == '"' || *why == '\\')
						printf("\\%c", *why);
					else if ((unsigned char)*why >= 0x20)
						putchar(*why);
				printf("\"}\n");
			} else
				printf("DOWN %s %s\n", w.name, why);
			rc = CLI_EXIT_SERVICE;
		}
		wire_free(&w);
		if (*e == '\0')
			break;
	}
	return fflush(stdout) == 0 ? rc : CLI_EXIT_SERVICE;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "tier-increment", required_argument, NULL, 'M' },
		{ "region-bits", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "ns", required_argument, NULL, 'n' },
		{ "tls", no_argument, NULL, CLI_OPT_TLS },
		{ "cacert", required_argument, NULL, CLI_OPT_CACERT },
		{ "cert", required_argument, NULL, CLI_OPT_CERT },
		{ "key", required_argument, NULL, CLI_OPT_KEY },
		{ "servername", required_argument, NULL, CLI_OPT_SERVERNAME },
		{ NULL, 0, NULL, 0 },
	};
	struct cli	 cli = { .timeout_ms = CLI_DEFAULT_TIMEOUT_MS, .tier_increment = 2 };
	const char	*e;
	unsigned	 n;
	uint64_t	 v;
	int		 ch, rc;

	/* Known before any option is read, so that an error in one is JSON too. */
	for (ch = 1; ch < argc && strcmp(argv[ch], "--") != 0; ch++)
		if (strcmp(argv[ch], "-j") == 0 || strcmp(argv[ch], "--json") == 0)
			cli_json_errors = true;
	if (cli_json_errors)
		opterr = 0;	/* getopt's own message would be plain text */
	cli.servers = getenv("IDGEN_SERVER");
	if (cli.servers == NULL || *cli.servers == '\0')
		cli.servers = CLI_DEFAULT_SERVER;
	cli.ns = getenv("IDGEN_NS");
	if (cli.ns != NULL && *cli.ns == '\0')
		cli.ns = NULL;
	while ((ch = getopt_long(argc, argv, "s:n:jt:b:M:R:T:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			cli.servers = optarg;
			break;
		case 'n':
			cli.ns = optarg;
			break;
		case 'j':
			cli.json = true;
			break;
		case 't':
			if ((rc = cli_count(optarg, 1, CLI_TIMEOUT_MAX_MS, &n)) != 0)
				return rc;
			cli.timeout_ms = n;
			break;
		case 'b':
			if ((e = reply_u64(optarg, optarg + strlen(optarg), &v)) == NULL ||
			    *e != '\0' || v < 4096 || v > (UINT64_C(1) << 32)) {
				return cli_error(CLI_EXIT_USAGE, "--block-size: expected 4096..%"
				    PRIu64, UINT64_C(1) << 32);
			}
			cli.block_size = v;
			break;
		case 'M':
			if ((rc = cli_count(optarg, 2, 64, &n)) != 0)
				return rc;
			cli.tier_increment = n;
			break;
		case 'R':
			if ((rc = cli_count(optarg, 0, 5, &n)) != 0)
				return rc;
			cli.region_bits = n;
			break;
		case 'T':
			if ((rc = cli_token_file(&cli, optarg)) != 0)
				return rc;
			break;
		case CLI_OPT_TLS:
			cli.tls = IDGEN_TLS_ON;
			break;
		case CLI_OPT_CACERT:
			cli.cacert = optarg;
			break;
		case CLI_OPT_CERT:
			cli.cert = optarg;
			break;
		case CLI_OPT_KEY:
			cli.key = optarg;
			break;
		case CLI_OPT_SERVERNAME:
			cli.servername = optarg;
			break;
		case 'h':
			cli_usage(stdout);
			return 0;
		case 'V':
			printf("idgen %s\n", IDGEN_VERSION);
			return 0;
		default:
			if (cli_json_errors)
				return cli_error(CLI_EXIT_USAGE, "bad option %s (see idgen --help)",
				    argv[optind - 1]);
			cli_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		if (cli_json_errors)
			return cli_error(CLI_EXIT_USAGE, "no command (see idgen --help)");
		cli_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	rc = cli_command(&cli, argc - optind, argv + optind);
	wiretls_free(cli.wtls);
	/* The token's copies, wiped. */
	wire_auth_free(cli.auth, cli.authlen);
	if (cli.token != NULL) {
		explicit_bzero(cli.token, strlen(cli.token));
		free(cli.token);
	}
	return rc;
}

/* Runs the command argv[0] with its arguments; the exit status. */
static int
cli_command(struct cli *cli, int argc, char **argv)
{
	struct idgen_options o;
	const char	*cmd = argv[0];
	char		 err[IDGEN_ERR_LEN];
	unsigned	 n;
	int		 rc;

	argc--;
	argv++;
	if (strcmp(cmd, "decode") == 0)
		return cli_decode(cli, argc, argv);
	if (!wire_auth_line(cli->token, &cli->auth, &cli->authlen, err, sizeof(err)))
		return cli_error(CLI_EXIT_USAGE, "%s", err);
	if (strcmp(cmd, "id") == 0 || strcmp(cmd, "stats") == 0 ||
	    strcmp(cmd, "ping") == 0) {
		if (argc != 0)
			return cli_error(CLI_EXIT_USAGE, "%s takes no argument", cmd);
		if (strcmp(cmd, "id") == 0)
			return cli_ids(cli, cmd, 1);
		/* stats and ping talk through the wire module: its TLS context here. */
		idgen_options_init(&o);
		cli_tls_options(cli, &o);
		if (!wiretls_new(&o, &cli->wtls, err, sizeof(err)))
			return cli_error(cli_usage_error(err) ? CLI_EXIT_USAGE : CLI_EXIT_SERVICE,
			    "%s", err);
		return strcmp(cmd, "stats") == 0 ? cli_stats(cli) : cli_ping(cli);
	}
	if (strcmp(cmd, "ids") == 0 || strcmp(cmd, "block") == 0) {
		if (argc != 1)
			return cli_error(CLI_EXIT_USAGE, "%s takes one argument, N", cmd);
		if ((rc = cli_count(argv[0], 1, strcmp(cmd, "ids") == 0 ?
		    IDGEN_IDS_MAX : IDGEN_BLOCK_MAX, &n)) != 0)
			return rc;
		return cli_ids(cli, cmd, n);
	}
	return cli_error(CLI_EXIT_USAGE, "unknown command \"%s\" (see idgen --help)", cmd);
}
