/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading /proc/net/softcm_qps: a QP's counter by its column's name.
 */
#ifndef SOFTCM_TEST_QPS_HELPERS_H
#define SOFTCM_TEST_QPS_HELPERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* All of @fd's text from its start, in @buf of @size; its length. */
static size_t read_all(int fd, char *buf, size_t size)
{
	size_t used = 0;
	ssize_t n;

	while (used < size - 1 && (n = pread(fd, buf + used, size - 1 - used, used)) > 0)
		used += n;
	buf[used] = '\0';
	return used;
}

/*
 * Column @name of QP @qpn's line in @fd, a /proc/net/softcm_qps; -1 if
 * the QP or the column is not there.
 */
static long long qp_counter(int fd, uint32_t qpn, const char *name)
{
	static char buf[1 << 16];
	char want[16], *line, *save = NULL, *tok, *tsave;
	int col = -1, i;

	read_all(fd, buf, sizeof(buf));
	snprintf(want, sizeof(want), "0x%06x", qpn);
	line = strtok_r(buf, "\n", &save);
	for (i = 0, tok = line ? strtok_r(line, " ", &tsave) : NULL; tok;
	     i++, tok = strtok_r(NULL, " ", &tsave))
		if (!strcmp(tok, name))
			col = i;
	if (col < 0)
		return -1;
	while ((line = strtok_r(NULL, "\n", &save))) {
		tok = strtok_r(line, " ", &tsave);
		if (!tok || strcmp(tok, want))
			continue;
		for (i = 1; i <= col && (tok = strtok_r(NULL, " ", &tsave)); i++)
			;
		return tok ? strtoll(tok, NULL, 0) : -1;
	}
	return -1;
}

/*
 * qp_counter() once it reads at least @want, or when @ms have passed: a
 * counter moves just after what it counts (a response is counted once
 * its send returns, and the peer may complete before that).
 */
static inline long long qp_counter_reaches(int fd, uint32_t qpn, const char *name, long long want,
					   int ms)
{
	struct timespec t = { 0, 1000000 };
	long long v;

	while ((v = qp_counter(fd, qpn, name)) < want && ms-- > 0)
		nanosleep(&t, NULL);
	return v;
}

#endif
