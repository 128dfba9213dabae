/* SPDX-License-Identifier: Apache-2.0 */
/* stats.c - timing and peak-memory sampling for --stats (see stats.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "heapref/dump.h"
#include "stats.h"

struct stats {
	pthread_t sampler;
	pthread_mutex_t lock;
	bool stop;
	long peak_anon_kb;      /* since the last mark */
	struct timespec wall0;
	double cpu0;
};

static long rss_anon_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "RssAnon:", 8))
			kb = strtol(line + 8, NULL, 10);
	fclose(f);
	return kb;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void note_sample(struct stats *s)
{
	long kb = rss_anon_kb();

	pthread_mutex_lock(&s->lock);
	if (kb > s->peak_anon_kb)
		s->peak_anon_kb = kb;
	pthread_mutex_unlock(&s->lock);
}

static void *sample_loop(void *arg)
{
	struct stats *s = arg;
	const struct timespec tick = { 0, 1000000 };

	for (;;) {
		bool stop;

		note_sample(s);
		pthread_mutex_lock(&s->lock);
		stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			return NULL;
		nanosleep(&tick, NULL);
	}
}

struct stats *stats_start(void)
{
	struct stats *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	clock_gettime(CLOCK_MONOTONIC, &s->wall0);
	s->cpu0 = cpu_seconds();
	if (pthread_create(&s->sampler, NULL, sample_loop, s) != 0) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return s;
}

void stats_mark(struct stats *s, const char *phase, FILE *out)
{
	struct timespec now;
	double wall, cpu;
	long peak;

	if (!s)
		return;
	note_sample(s);
	clock_gettime(CLOCK_MONOTONIC, &now);
	cpu = cpu_seconds();
	wall = (double)(now.tv_sec - s->wall0.tv_sec) + (double)(now.tv_nsec - s->wall0.tv_nsec) / 1e9;
	pthread_mutex_lock(&s->lock);
	peak = s->peak_anon_kb;
	s->peak_anon_kb = 0;
	pthread_mutex_unlock(&s->lock);
	fprintf(out, "stats: %-12s %8.3f s wall %8.3f s CPU   peak anonymous RSS %8.1f MB\n", phase,
		wall, cpu - s->cpu0, (double)peak / 1024.0);
	s->wall0 = now;
	s->cpu0 = cpu;
}

void stats_reading(const struct stats *s, const struct hr_dump *dump, FILE *out)
{
	struct hr_dump_reading r;
	char steal[96] = "";

	if (!s || !hr_dump_format_minor(dump))
		return;
	r = hr_dump_reading(dump);
	if (r.steal_at)
		snprintf(steal, sizeof(steal), "; the second took on the first's rest from byte %" PRIu64,
			 r.steal_at);
	if (!r.second_at)
		fprintf(out, "heapref: reading: one thread\n");
	else
		fprintf(out, "heapref: reading: two threads, the second from byte %" PRIu64 "%s%s\n",
			r.second_at, r.second_kept ? "" : " (dropped: no record starts there)", steal);
}

void stats_stop(struct stats *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->sampler, NULL);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
