// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * softcm show, softcm qps, softcm stats: the namespace's ids, QPs and
 * counters, from /proc/net/softcm, /proc/net/softcm_qps and
 * /proc/net/softcm_stats, as a table or as JSON.
 *
 * The proc files are the interface (documented in softcm(8)); this only
 * filters and formats them, so that what `show` prints is what the kernel
 * said, column for column.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tool.h"

#define IDS_PATH	"/proc/net/softcm"
#define STATS_PATH	"/proc/net/softcm_stats"
#define QPS_PATH	"/proc/net/softcm_qps"
#define MAX_COLS	32
#define MAX_LINE	1024

struct row {
	char line[MAX_LINE];
	char *col[MAX_COLS];
	int ncols;
};

struct show_opts {
	const char *state;
	const char *port;
	const char *addr;
	int json;
};

/* Split @r->line on blanks, in place. */
static void split(struct row *r)
{
	char *save, *tok;

	r->ncols = 0;
	r->line[strcspn(r->line, "\n")] = '\0';
	for (tok = strtok_r(r->line, " \t", &save); tok && r->ncols < MAX_COLS;
	     tok = strtok_r(NULL, " \t", &save))
		r->col[r->ncols++] = tok;
}

static FILE *open_proc(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f && errno == ENOENT)
		fprintf(stderr, "softcm: no %s: the softcm module is not loaded (try: modprobe softcm)\n",
			path);
	else if (!f)
		fprintf(stderr, "softcm: %s: %s\n", path, strerror(errno));
	return f;
}

static int col_index(const struct row *hdr, const char *name)
{
	int i;

	for (i = 0; i < hdr->ncols; i++)
		if (!strcmp(hdr->col[i], name))
			return i;
	return -1;
}

/*
 * "10.0.0.1:7471", "[fd00::1]:7471" or "*": does it have this address (as
 * written, without the port) or this port?
 */
static int addr_is(const char *a, const char *want)
{
	const char *colon = strrchr(a, ':');
	size_t len;

	if (!colon)
		return 0;
	if (a[0] == '[') {
		a++;
		len = colon - 1 - a;
	} else {
		len = colon - a;
	}
	return strlen(want) == len && !strncasecmp(a, want, len);
}

static int port_is(const char *a, const char *want)
{
	const char *colon = strrchr(a, ':');

	return colon && !strcmp(colon + 1, want);
}

static int wanted(const struct row *hdr, const struct row *r, const struct show_opts *o)
{
	int state = col_index(hdr, "state"), cm = col_index(hdr, "cm_state");
	int local = col_index(hdr, "local"), peer = col_index(hdr, "peer");

	if (r->ncols != hdr->ncols)
		return 0;
	if (o->state && strcasecmp(r->col[state], o->state) &&
	    strcasecmp(r->col[cm], o->state))
		return 0;
	if (o->port && !port_is(r->col[local], o->port) && !port_is(r->col[peer], o->port))
		return 0;
	if (o->addr && !addr_is(r->col[local], o->addr) && !addr_is(r->col[peer], o->addr))
		return 0;
	return 1;
}

/*
 * A column JSON shows as a number: pids, handles and ages of the ids;
 * every column of digits of the QPs (the MTU and the counters: their
 * QPNs and PSNs are hexadecimal strings).
 */
static int numeric(const char *path, const char *name, const char *v)
{
	static const char *const names[] = { "pid", "handle", "age_ms" };
	size_t i;

	if (!*v || strspn(v, "0123456789") != strlen(v))
		return 0;
	if (!strcmp(path, QPS_PATH))
		return 1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

/* Our values have no quotes, backslashes or control characters. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || iscntrl((unsigned char)*s))
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	putchar('"');
}

static void print_json_row(const char *path, const struct row *hdr, const struct row *r,
			   int first)
{
	int i;

	printf("%s\n  {", first ? "" : ",");
	for (i = 0; i < hdr->ncols; i++) {
		printf("%s\"%s\": ", i ? ", " : "", hdr->col[i]);
		if (numeric(path, hdr->col[i], r->col[i]))
			printf("%s", r->col[i]);
		else if (!strcmp(r->col[i], "-"))
			printf("null");
		else
			json_str(r->col[i]);
	}
	putchar('}');
}

static void print_table(const struct row *hdr, struct row *rows, int n)
{
	int width[MAX_COLS], i, j;

	for (i = 0; i < hdr->ncols; i++)
		width[i] = strlen(hdr->col[i]);
	for (j = 0; j < n; j++)
		for (i = 0; i < hdr->ncols; i++)
			if ((int)strlen(rows[j].col[i]) > width[i])
				width[i] = strlen(rows[j].col[i]);
	for (i = 0; i < hdr->ncols; i++)
		printf("%-*s%s", width[i], hdr->col[i], i + 1 < hdr->ncols ? "  " : "\n");
	for (j = 0; j < n; j++)
		for (i = 0; i < hdr->ncols; i++)
			printf("%-*s%s", width[i], rows[j].col[i], i + 1 < hdr->ncols ? "  " : "\n");
}

/*
 * The listing @path (a header, then a row per object) printed as a
 * table or as JSON: the rows @o wants when @o is given, else all.  0 or 1.
 */
static int list_table(const char *path, const struct show_opts *o, int json)
{
	struct row hdr, *rows = NULL, *tmp;
	int n = 0, cap = 0, i, ret = 1;
	FILE *f;

	f = open_proc(path);
	if (!f)
		return 1;
	if (!fgets(hdr.line, sizeof(hdr.line), f)) {
		fprintf(stderr, "softcm: %s is empty\n", path);
		goto out;
	}
	split(&hdr);
	if (o && (col_index(&hdr, "state") < 0 || col_index(&hdr, "cm_state") < 0 ||
		  col_index(&hdr, "local") < 0 || col_index(&hdr, "peer") < 0)) {
		fprintf(stderr, "softcm: %s: unexpected header\n", path);
		goto out;
	}
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			tmp = realloc(rows, cap * sizeof(*rows));
			if (!tmp) {
				fprintf(stderr, "softcm: out of memory\n");
				goto out;
			}
			rows = tmp;
		}
		if (!fgets(rows[n].line, sizeof(rows[n].line), f))
			break;
		split(&rows[n]);
		if (rows[n].ncols == hdr.ncols && (!o || wanted(&hdr, &rows[n], o)))
			n++;
	}
	if (ferror(f)) {
		fprintf(stderr, "softcm: reading %s: %s\n", path, strerror(errno));
		goto out;
	}
	if (json) {
		putchar('[');
		for (i = 0; i < n; i++)
			print_json_row(path, &hdr, &rows[i], !i);
		printf("%s]\n", n ? "\n" : "");
	} else {
		print_table(&hdr, rows, n);
	}
	ret = 0;
out:
	free(rows);
	fclose(f);
	return ret;
}

static void show_usage(FILE *f)
{
	fprintf(f, "Usage: softcm show [-s STATE] [-p PORT] [-a ADDR] [-j]\n");
}

int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "port", required_argument, NULL, 'p' },
		{ "address", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct show_opts o = { 0 };
	int c;

	while ((c = getopt_long(argc, argv, "s:p:a:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.state = optarg;
			break;
		case 'p':
			o.port = optarg;
			break;
		case 'a':
			o.addr = optarg;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'h':
			show_usage(stdout);
			return 0;
		default:
			show_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		show_usage(stderr);
		return 2;
	}
	return list_table(IDS_PATH, &o, o.json);
}

int cmd_qps(int argc, char **argv)
{
	int json = 0, c;

	while ((c = getopt(argc, argv, "jh")) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			printf("Usage: softcm qps [-j]\n");
			return 0;
		default:
			fprintf(stderr, "Usage: softcm qps [-j]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "Usage: softcm qps [-j]\n");
		return 2;
	}
	return list_table(QPS_PATH, NULL, json);
}

int cmd_stats(int argc, char **argv)
{
	int json = 0, nonzero = 0, first = 1, c, ret = 1;
	struct row r;
	FILE *f;

	while ((c = getopt(argc, argv, "jzh")) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'z':
			nonzero = 1;
			break;
		case 'h':
			printf("Usage: softcm stats [-z] [-j]\n");
			return 0;
		default:
			fprintf(stderr, "Usage: softcm stats [-z] [-j]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "Usage: softcm stats [-z] [-j]\n");
		return 2;
	}
	f = open_proc(STATS_PATH);
	if (!f)
		return 1;
	if (json)
		putchar('{');
	while (fgets(r.line, sizeof(r.line), f)) {
		split(&r);
		if (r.ncols != 2)
			continue;
		if (nonzero && !strcmp(r.col[1], "0"))
			continue;
		if (json)
			printf("%s\n  \"%s\": %s", first ? "" : ",", r.col[0], r.col[1]);
		else
			printf("%-16s %s\n", r.col[0], r.col[1]);
		first = 0;
	}
	if (ferror(f)) {
		fprintf(stderr, "softcm: reading %s: %s\n", STATS_PATH, strerror(errno));
		goto out;
	}
	if (json)
		printf("%s}\n", first ? "" : "\n");
	ret = 0;
out:
	fclose(f);
	return ret;
}
