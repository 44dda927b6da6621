// SPDX-License-Identifier: GPL-2.0
/*
 * recount: everything at once, for a while.
 *
 * Processes fork and exit in storms; a subject process starts and joins
 * threads without pause; readers dump threads, processes and CPUs and read
 * the subject; listeners register on random cpumasks and go; recount is
 * switched off and on under the load. Throughout, no value a reader sees
 * decreases and a thread is never more than its process. At every
 * checkpoint, with the subject at rest and recount on, the subject is
 * exactly its live threads plus its exited ones, and per kind as in total;
 * at the end no listener registration is left behind.
 *
 * RECOUNT_STRESS_SECONDS=<n> sets the duration (10 s by default; `make test
 * STRESS=1` runs 300 s).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"
#include "recount_check.h"

#define MAX_CPUS	64
#define READERS		3
#define SUBJECT_THREADS	4

static atomic_int stop;
/* Held by the flipper while recount is off, and by the test's checkpoints. */
static pthread_mutex_t flip_lock = PTHREAD_MUTEX_INITIALIZER;

/* What the threads found wrong, the first of it kept for the report. */
static atomic_ulong violations, checks;
static char first_violation[256];

static void violation(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&violations, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(first_violation, sizeof(first_violation), fmt, ap);
	va_end(ap);
}

/* The subject: threads come and go until it is told to rest. */
struct subject {
	atomic_int rest;	/* asked to come to rest */
	pid_t tids[SUBJECT_THREADS];	/* its live threads, at rest */
};

static struct subject *subj;

static void *subject_thread(void *p)
{
	spin_user((1 + (long)p % 3) * NSEC_PER_MSEC);
	spin_kernel(NSEC_PER_MSEC / 2);
	return NULL;
}

struct resting {
	int fd;
	pid_t *tid;
};

static void *rest_main(void *p)
{
	struct resting *r = p;
	char c;

	spin_kernel(NSEC_PER_MSEC / 4);
	__atomic_store_n(r->tid, sys_gettid(), __ATOMIC_RELEASE);
	if (read(r->fd, &c, 1) < 0)
		abort();
	return NULL;
}

/*
 * Rounds: churn threads until asked to rest; then keep SUBJECT_THREADS
 * threads blocked on @wake, tell the parent on @ready, and wait with them.
 */
static void subject_main(int ready, int wake)
{
	struct resting rest[SUBJECT_THREADS];
	pthread_t th[SUBJECT_THREADS];
	long n = 0;
	int i;
	char c;

	for (;;) {
		while (!atomic_load(&subj->rest)) {
			for (i = 0; i < SUBJECT_THREADS; i++)
				if (pthread_create(&th[i], NULL, subject_thread, (void *)n++))
					_exit(1);
			for (i = 0; i < SUBJECT_THREADS; i++)
				pthread_join(th[i], NULL);
		}
		for (i = 0; i < SUBJECT_THREADS; i++) {
			rest[i] = (struct resting){ .fd = wake, .tid = &subj->tids[i] };
			subj->tids[i] = 0;
			if (pthread_create(&th[i], NULL, rest_main, &rest[i]))
				_exit(1);
		}
		for (i = 0; i < SUBJECT_THREADS; i++)
			while (!__atomic_load_n(&subj->tids[i], __ATOMIC_ACQUIRE))
				sleep_ns(NSEC_PER_MSEC);
		if (write(ready, "r", 1) != 1)
			_exit(1);
		/* The parent reads, then wakes the resting threads and us. */
		if (read(wake, &c, 1) != 1)
			_exit(1);
		if (c == 'q')
			_exit(0);
		for (i = 0; i < SUBJECT_THREADS; i++)
			pthread_join(th[i], NULL);
	}
}

/* Fork storms: children with a few threads that spin a little and exit. */
static void *forker_main(void *p)
{
	unsigned int r = (unsigned long)p;

	while (!atomic_load(&stop)) {
		pid_t pid = fork();

		if (pid == 0) {
			pthread_t th[3];
			int i, n = rand_r(&r) % 4;

			for (i = 0; i < n; i++)
				pthread_create(&th[i], NULL, subject_thread, (void *)(long)i);
			spin_kernel(NSEC_PER_MSEC / 4);
			_exit(0);	/* the threads die with the process */
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return NULL;
}

/* Readers: dumps and reads; monotonic values, threads within processes. */
struct reader {
	pthread_t thread;
	pid_t subject;
	unsigned int seed;
	struct rnl_usage cpu[MAX_CPUS];
	bool seen[MAX_CPUS];
	struct rnl_usage process;
	/* the subject's threads of the dump in progress, at most per metric */
	struct rnl_usage max_thread;
};

static void check_dumped(const struct rnl_record *rec, void *arg)
{
	struct reader *rd = arg;
	const char *m;

	atomic_fetch_add(&checks, 1);
	if (rec->has_cpu && rec->cpu < MAX_CPUS) {
		m = rd->seen[rec->cpu] ? rnl_usage_exceeds(&rd->cpu[rec->cpu], &rec->usage) : NULL;
		if (m)
			violation("cpu %u: %s decreased by %llu", rec->cpu, m,
				  rnl_usage_drop(&rd->cpu[rec->cpu], &rec->usage, m));
		rd->cpu[rec->cpu] = rec->usage;
		rd->seen[rec->cpu] = true;
		return;
	}
	if (rec->has_pid && rec->tgid == (__u32)rd->subject) {
		/* Compared with the process read after the dump. */
		rnl_usage_max(&rd->max_thread, &rec->usage);
	}
	m = rnl_kinds_differ(rec);
	if (m && !rec->has_cpu)
		violation("%s %u: per-kind %s does not add up", rec->has_pid ? "thread" : "process",
			  rec->has_pid ? rec->pid : rec->tgid, m);
}

static void *reader_main(void *p)
{
	struct reader *rd = p;
	int intr, multi, err, scope;
	struct rnl_reply r;
	const char *m;
	struct rnl nl;
	__u32 tgid;

	if (rnl_open(&nl)) {
		violation("reader: cannot open a socket");
		return NULL;
	}
	while (!atomic_load(&stop)) {
		memset(&rd->max_thread, 0, sizeof(rd->max_thread));
		/* Threads half the time, of the subject or of everyone. */
		scope = rand_r(&rd->seed) % 4;
		tgid = 0;
		if (scope >= RECOUNT_SCOPE_CPUS) {
			scope = RECOUNT_SCOPE_THREADS;
			tgid = rand_r(&rd->seed) % 2 ? rd->subject : 0;
		}
		err = rnl_dump(&nl, scope, tgid, check_dumped, rd, &intr, &multi, &r);
		if (err)
			violation("dump: %s (%s)", strerror(-err), r.extack);
		err = rnl_get(&nl, RECOUNT_A_TGID, rd->subject, &r);
		if (err) {
			violation("subject: %s (%s)", strerror(-err), r.extack);
			continue;
		}
		m = rnl_usage_exceeds(&rd->process, &r.rec.usage);
		if (m)
			violation("subject: %s decreased by %llu", m,
				  rnl_usage_drop(&rd->process, &r.rec.usage, m));
		m = rnl_usage_exceeds(&rd->max_thread, &r.rec.usage);
		if (m)
			violation("a thread of the subject has more %s than the subject", m);
		rd->process = r.rec.usage;
	}
	rnl_close(&nl);
	return NULL;
}

/* Listeners come and go; each record they get is whole. */
static void *listeners_main(void *p)
{
	unsigned int seed = 42;
	char mask[16];
	int ncpus = get_nprocs_conf();

	while (!atomic_load(&stop)) {
		struct rnl_record rec;
		struct rnl_reply r;
		struct rnl nl;
		int first = rand_r(&seed) % ncpus, i;
		int last = first + rand_r(&seed) % (ncpus - first);

		if (rnl_open(&nl))
			continue;
		snprintf(mask, sizeof(mask), "%d-%d", first, last);
		if (rnl_listen(&nl, true, mask, &r))
			violation("register %s: %s (%s)", mask, strerror(-r.error), r.extack);
		for (i = rand_r(&seed) % 20; i > 0; i--) {
			if (rnl_next_exit(&nl, &rec, 5) != 1)
				continue;
			if (!rec.has_exit || (!rec.has_pid && !rec.has_tgid))
				violation("an exit record without exit or ids");
		}
		if (rand_r(&seed) % 2 && rnl_listen(&nl, false, mask, &r))
			violation("deregister %s: %s (%s)", mask, strerror(-r.error), r.extack);
		rnl_close(&nl);
	}
	return NULL;
}

/* Switch recount off for a moment, again and again. */
static void *flipper_main(void *p)
{
	while (!atomic_load(&stop)) {
		sleep_ns(300 * NSEC_PER_MSEC);
		pthread_mutex_lock(&flip_lock);
		if (recount_sysctl_set(0))
			violation("cannot switch recount off");
		sleep_ns(30 * NSEC_PER_MSEC);
		if (recount_sysctl_set(1))
			violation("cannot switch recount on");
		pthread_mutex_unlock(&flip_lock);
	}
	return NULL;
}

static unsigned int listeners_now(struct rnl *nl)
{
	struct rnl_reply r;

	return rnl_get_info(nl, &r) ? ~0u : r.rec.listeners;
}

TEST_F_TIMEOUT(recount, everything_at_once, 900)
{
	const char *env = getenv("RECOUNT_STRESS_SECONDS");
	unsigned long long seconds = env ? strtoull(env, NULL, 0) : 10, end;
	pthread_t forkers[2], listeners, flipper;
	struct reader rd[READERS];
	int ready[2], wake[2], i, rounds = 0;
	unsigned int listeners_before;
	pid_t subject;
	char c;

	subj = mmap(NULL, sizeof(*subj), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	ASSERT_NE(MAP_FAILED, subj);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(wake));
	i = getpid();
	subject = fork();
	ASSERT_GE(subject, 0);
	if (subject == 0) {
		/* Not left creating threads if the test fails before it stops it. */
		if (die_with(i))
			_exit(1);
		subject_main(ready[1], wake[0]);
	}

	listeners_before = listeners_now(&self->nl);
	ASSERT_NE(~0u, listeners_before);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&forkers[i], NULL, forker_main, (void *)(long)i));
	for (i = 0; i < READERS; i++) {
		memset(&rd[i], 0, sizeof(rd[i]));
		rd[i].subject = subject;
		rd[i].seed = i + 1;
		ASSERT_EQ(0, pthread_create(&rd[i].thread, NULL, reader_main, &rd[i]));
	}
	ASSERT_EQ(0, pthread_create(&listeners, NULL, listeners_main, NULL));
	ASSERT_EQ(0, pthread_create(&flipper, NULL, flipper_main, NULL));

	end = now_ns() + seconds * NSEC_PER_SEC;
	do {
		struct rnl_record proc, thr;
		struct rnl_usage live = {};

		sleep_ns(2 * NSEC_PER_SEC);
		/* Checkpoint: recount on, the subject at rest. */
		pthread_mutex_lock(&flip_lock);
		ASSERT_EQ(0, recount_sysctl_set(1));
		atomic_store(&subj->rest, 1);
		ASSERT_EQ(1, read(ready[0], &c, 1));
		AT_REST(subject, &thr);
		rnl_usage_add(&live, &thr.usage);
		for (i = 0; i < SUBJECT_THREADS; i++) {
			AT_REST(subj->tids[i], &thr);
			EXPECT_HOLDS(rnl_kinds_differ(&thr));
			rnl_usage_add(&live, &thr.usage);
		}
		GET(RECOUNT_A_TGID, subject, &proc);
		rnl_usage_add(&live, &proc.exited);
		EXPECT_HOLDS(rnl_usage_differs(&live, &proc.usage));
		EXPECT_HOLDS(rnl_kinds_differ(&proc));
		rounds++;
		atomic_store(&subj->rest, 0);
		pthread_mutex_unlock(&flip_lock);
		/* One byte for each resting thread, one for the subject. */
		ASSERT_EQ(SUBJECT_THREADS + 1, write(wake[1], "ccccccccc", SUBJECT_THREADS + 1));
	} while (now_ns() < end && !violations);

	atomic_store(&stop, 1);
	pthread_join(flipper, NULL);
	pthread_join(listeners, NULL);
	for (i = 0; i < READERS; i++)
		pthread_join(rd[i].thread, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(forkers[i], NULL);
	atomic_store(&subj->rest, 1);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(SUBJECT_THREADS + 1, write(wake[1], "qqqqqqqqq", SUBJECT_THREADS + 1));
	ASSERT_EQ(subject, waitpid(subject, &i, 0));
	ASSERT_EQ(0, recount_sysctl_set(1));

	TH_LOG("%llu s: %d checkpoints, %lu records checked", seconds, rounds,
	       atomic_load(&checks));
	EXPECT_EQ(0, atomic_load(&violations)) TH_LOG("%lu violations, first: %s",
						      atomic_load(&violations), first_violation);
	EXPECT_GT(rounds, 0);
	EXPECT_GT(atomic_load(&checks), 0);
	/* Every listener is gone with its socket. */
	EXPECT_EQ(listeners_before, listeners_now(&self->nl));
}

TEST_HARNESS_MAIN
