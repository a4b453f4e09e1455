/*
 * config_doc.c - the settings table printed for people: --help, the man page's
 * settings, docs/operations.md's reference and the sample config, so that each
 * setting is described once (src/config.c) and scripts/gen-settings.sh writes
 * the rest (test_config regenerates them and fails on a difference).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#define DOC_WIDTH	79
#define DOC_HELP_COL	36

enum doc_style {
	DOC_PLAIN,	/* backticks dropped: --help, the sample config */
	DOC_MAN,	/* roff: `x` is \fBx\fR, - is \-, \ is \e */
	DOC_MD,		/* Markdown table cell: backticks kept, | escaped */
};

static void	doc_text(FILE *out, const char *s, enum doc_style style);
static void	doc_wrap(FILE *out, const char *first, const char *rest, const char *text);
static const char *doc_value(const struct config *cfg, const struct config_key *k,
		    char *buf, size_t len);
static const struct config_group *doc_group(const char *name);
static void	doc_bounds(const struct config_key *k, char *buf, size_t len);
static void	doc_help(FILE *out);
static void	doc_man(FILE *out);
static void	doc_md(FILE *out);
static void	doc_conf(FILE *out, const struct config *cfg);

/* The table being printed (config_doc_print's argument; one print at a time). */
static const struct config_table *doc_tab;

/* Writes s in style: markup and the characters the target gives a meaning to. */
static void
doc_text(FILE *out, const char *s, enum doc_style style)
{
	bool code = false;

	for (; *s != '\0'; s++) {
		if (*s == '`') {
			if (style == DOC_MD)
				fputc('`', out);
			else if (style == DOC_MAN)
				fputs(code ? "\\fR" : "\\fB", out);
			code = !code;
		} else if (style == DOC_MAN && *s == '\\')
			fputs("\\e", out);
		else if (style == DOC_MAN && *s == '-')
			fputs("\\-", out);
		else if (style == DOC_MAN && (*s == ':' || *s == ','))
			fprintf(out, "%c\\:", *s);	/* a place to break a long word */
		else if (style == DOC_MD && *s == '|')
			fputs("\\|", out);
		else
			fputc(*s, out);
	}
}

/*
 * Writes text (plain, backticks dropped) in lines of at most DOC_WIDTH
 * columns, the first after first, the others after rest; a word (or `code`
 * span) longer than a line gets one of its own.
 */
static void
doc_wrap(FILE *out, const char *first, const char *rest, const char *text)
{
	const char *prefix = first, *p = text;
	size_t col = 0, w;
	bool bare = true;

	fputs(prefix, out);
	col = strlen(prefix);
	while (*p != '\0') {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		/* A word: up to a space outside `code`, which is never broken. */
		bool code = false;
		size_t shown = 0;
		for (w = 0; p[w] != '\0' && (p[w] != ' ' || code); w++) {
			if (p[w] == '`')
				code = !code;
			else
				shown++;
		}
		if (!bare && col + 1 + shown > DOC_WIDTH) {
			fputc('\n', out);
			prefix = rest;
			fputs(prefix, out);
			col = strlen(prefix);
			bare = true;
		}
		if (!bare) {
			fputc(' ', out);
			col++;
		}
		for (size_t i = 0; i < w; i++)
			if (p[i] != '`')
				fputc(p[i], out);
		col += shown;
		bare = false;
		p += w;
	}
	fputc('\n', out);
}

/* The value of k in cfg, as it would be written in the INI file. */
static const char *
doc_value(const struct config *cfg, const struct config_key *k, char *buf, size_t len)
{
	const void *field = (const char *)cfg + k->offset;

	if (k->type == CONFIG_STR) {
		const char *const *sp = field;

		return *sp != NULL ? *sp : k->def;
	}
	snprintf(buf, len, "%u", *(const unsigned *)field);
	return buf;
}

/* The group that begins at the setting name, or NULL. */
static const struct config_group *
doc_group(const char *name)
{
	for (size_t i = 0; i < doc_tab->ngroups; i++)
		if (strcmp(doc_tab->groups[i].first, name) == 0)
			return &doc_tab->groups[i];
	return NULL;
}

/* The accepted values of a number ("1..65535"); empty for a string. */
static void
doc_bounds(const struct config_key *k, char *buf, size_t len)
{
	if (k->type == CONFIG_UINT)
		snprintf(buf, len, "%u..%u", k->min, k->max);
	else
		buf[0] = '\0';
}

/* --help: a flag a line, its help wrapped in a column of its own. */
static void
doc_help(FILE *out)
{
	char flag[80], text[1024], rest[DOC_HELP_COL + 1], bounds[32];

	memset(rest, ' ', DOC_HELP_COL);
	rest[DOC_HELP_COL] = '\0';
	for (size_t i = 0; i < doc_tab->nkeys; i++) {
		const struct config_key *k = &doc_tab->keys[i];

		snprintf(flag, sizeof(flag), "  --%s %s", k->name,
		    k->type == CONFIG_UINT ? "N" : "STR");
		if (strlen(flag) >= DOC_HELP_COL - 1)
			snprintf(flag + strlen(flag), sizeof(flag) - strlen(flag), "\n%s", rest);
		else
			snprintf(flag + strlen(flag), sizeof(flag) - strlen(flag), "%*s",
			    (int)(DOC_HELP_COL - strlen(flag)), "");
		doc_bounds(k, bounds, sizeof(bounds));
		snprintf(text, sizeof(text), "%s (default: %s%s%s)", k->help,
		    k->def[0] != '\0' ? k->def : "none", bounds[0] != '\0' ? "; " : "", bounds);
		doc_wrap(out, flag, rest, text);
	}
}

/* The man page's settings: a .SS per group, a .TP per setting. */
static void
doc_man(FILE *out)
{
	const struct config_group *g;
	char bounds[32];

	for (size_t i = 0; i < doc_tab->nkeys; i++) {
		const struct config_key *k = &doc_tab->keys[i];

		if ((g = doc_group(k->name)) != NULL) {
			fprintf(out, ".SS %s\n", g->title);
			if (g->intro != NULL) {
				fputs("\\&", out);
				doc_text(out, g->intro, DOC_MAN);
				fputc('\n', out);
			}
		}
		fputs(".TP\n.BI \\-\\-", out);
		doc_text(out, k->name, DOC_MAN);
		fprintf(out, " \" %s\"\n\\&", k->type == CONFIG_UINT ? "N" : "STR");
		doc_text(out, k->help, DOC_MAN);
		fputs(".\n", out);
		doc_bounds(k, bounds, sizeof(bounds));
		if (bounds[0] != '\0')
			fprintf(out, "Range: %s.\n", bounds);
		if (k->def[0] == '\0')
			fputs("Default: none.\n", out);
		else {
			fputs("Default: \\fB", out);
			doc_text(out, k->def, DOC_MAN);
			fputs("\\fR.\n", out);
		}
	}
}

/* docs/operations.md's reference: per group a heading line and a table. */
static void
doc_md(FILE *out)
{
	const struct config_group *g;
	char bounds[32];

	for (size_t i = 0; i < doc_tab->nkeys; i++) {
		const struct config_key *k = &doc_tab->keys[i];

		if ((g = doc_group(k->name)) != NULL) {
			fprintf(out, "%s**%s.**", i > 0 ? "\n" : "", g->title);
			if (g->intro != NULL) {
				fputc(' ', out);
				doc_text(out, g->intro, DOC_MD);
			}
			fputs("\n\n| setting | default | range | meaning |\n"
			    "| --- | --- | --- | --- |\n", out);
		}
		doc_bounds(k, bounds, sizeof(bounds));
		fprintf(out, "| `%s` | ", k->name);
		if (k->def[0] == '\0')
			fputs("(none)", out);
		else {
			fputc('`', out);
			doc_text(out, k->def, DOC_MD);
			fputc('`', out);
		}
		fprintf(out, " | %s | ", bounds);
		doc_text(out, k->help, DOC_MD);
		fputs(" |\n", out);
	}
}

/* An INI file of cfg's values, each after its help as a comment. */
static void
doc_conf(FILE *out, const struct config *cfg)
{
	const struct config_group *g;
	char buf[32], bounds[32], text[1536];
	const char *v;

	fputs("; idserver settings: every setting with its help, from the settings table\n"
	    "; (src/config.c; idserver --dump-settings conf prints them). Every setting is\n"
	    "; also a flag (--listen_port 4343); flags win. See idserver --help, idserver(8).\n",
	    out);
	for (size_t i = 0; i < doc_tab->nkeys; i++) {
		const struct config_key *k = &doc_tab->keys[i];

		if ((g = doc_group(k->name)) != NULL) {
			fprintf(out, "\n; == %s ==\n", g->title);
			if (g->intro != NULL)
				doc_wrap(out, "; ", "; ", g->intro);
		}
		v = doc_value(cfg, k, buf, sizeof(buf));
		doc_bounds(k, bounds, sizeof(bounds));
		if (strcmp(v, k->def) != 0)
			snprintf(text, sizeof(text), "%s (default: %s%s%s)", k->help,
			    k->def[0] != '\0' ? k->def : "none", bounds[0] != '\0' ? "; " : "",
			    bounds);
		else if (bounds[0] != '\0')
			snprintf(text, sizeof(text), "%s (%s)", k->help, bounds);
		else
			snprintf(text, sizeof(text), "%s", k->help);
		doc_wrap(out, "; ", "; ", text);
		fprintf(out, "%s =%s%s\n", k->name, v[0] != '\0' ? " " : "", v);
	}
}

bool
config_doc_print(const struct config *cfg, const struct config_table *t, const char *format,
    FILE *out)
{
	doc_tab = t;
	if (strcmp(format, "help") == 0)
		doc_help(out);
	else if (strcmp(format, "man") == 0)
		doc_man(out);
	else if (strcmp(format, "md") == 0)
		doc_md(out);
	else if (strcmp(format, "conf") == 0)
		doc_conf(out, cfg);
	else
		return false;
	return true;
}
