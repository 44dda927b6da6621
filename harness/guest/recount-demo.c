// SPDX-License-Identifier: GPL-2.0
/*
 * The workload of 'make run': a process with three threads that compute,
 * sleep and make syscalls for about a second each, then show what recount
 * measured for each thread and for the process, with getdelays.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t done, shown;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct job {
	const char *name;
	void (*fn)(void);
	pid_t tid;
};

static void compute(void)
{
	unsigned long long end = now_ns() + 1000000000ULL;
	volatile double x = 1.0;

	while (now_ns() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 0.5;
}

static void nap(void)
{
	struct timespec ts = { .tv_sec = 1 };

	nanosleep(&ts, NULL);
}

static void syscalls(void)
{
	unsigned long long end = now_ns() + 1000000000ULL;
	static char buf[4096];
	int fd = open("/dev/zero", O_RDONLY);

	while (now_ns() < end) {
		getppid();
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	}
	close(fd);
}

static void *run(void *arg)
{
	struct job *j = arg;

	j->tid = syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), j->name);
	j->fn();
	pthread_barrier_wait(&done);
	/* Stay alive, blocked, until the main thread has shown our values. */
	pthread_barrier_wait(&shown);
	return NULL;
}

int main(void)
{
	struct job jobs[] = {
		{ "compute", compute }, { "sleep", nap }, { "syscalls", syscalls },
	};
	pthread_t th[3];
	char cmd[64];
	int i;

	printf("recount-demo: process %d starts three threads: compute (spins in user\n"
	       "mode), sleep (sleeps), syscalls (reads /dev/zero), each for 1 s\n\n",
	       getpid());
	fflush(stdout);
	pthread_barrier_init(&done, NULL, 4);
	pthread_barrier_init(&shown, NULL, 4);
	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, run, &jobs[i]);
	pthread_barrier_wait(&done);
	for (i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "getdelays -p %d", jobs[i].tid);
		if (system(cmd))
			return 1;
	}
	pthread_barrier_wait(&shown);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("\nAll threads have exited; the process still counts them:\n");
	fflush(stdout);
	snprintf(cmd, sizeof(cmd), "getdelays -t %d", getpid());
	return system(cmd) ? 1 : 0;
}
