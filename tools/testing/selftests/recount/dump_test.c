// SPDX-License-Identifier: GPL-2.0
/*
 * recount: dumps of every thread, process and CPU.
 *
 * A dump lists, in pid order, every task the caller may read, resumes across
 * messages (each flagged NLM_F_MULTI), lists each task that lives through
 * it exactly once, and never flags NLM_F_DUMP_INTR: tasks that come and go
 * make no record inconsistent, and a client told to retry would retry forever.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sys/sysinfo.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

#define STABLE 600

struct seen {
	pid_t want[STABLE];
	int count[STABLE];
	int records, others;
	__u32 tgid;
	bool change;
	int cpus[64];
};

static void *nothing(void *p)
{
	return p;
}

static void count_record(const struct rnl_record *rec, void *arg)
{
	struct seen *s = arg;
	pthread_t th;
	int i;

	/*
	 * The kernel filled the first message of the dump, and fills the next
	 * when we read on: create a thread in between, so that the rest of
	 * the dump must be flagged.
	 */
	if (!s->records++ && s->change && !pthread_create(&th, NULL, nothing, NULL))
		pthread_join(th, NULL);
	if (rec->has_cpu && rec->cpu < 64)
		s->cpus[rec->cpu]++;
	for (i = 0; i < STABLE; i++) {
		if (s->want[i] && rec->has_pid && rec->pid == (__u32)s->want[i]) {
			s->count[i]++;
			return;
		}
	}
	if (s->tgid && rec->tgid != s->tgid)
		s->others++;
}

static void *block(void *p)
{
	int fd = *(int *)p;
	char c;

	if (read(fd, &c, 1) < 0)
		return NULL;
	return NULL;
}

static int churning;

/* Threads come and go, as long as churning. */
static void *churn(void *p)
{
	pthread_t th;

	while (__atomic_load_n(&churning, __ATOMIC_RELAXED)) {
		if (!pthread_create(&th, NULL, nothing, NULL))
			pthread_join(th, NULL);
	}
	return NULL;
}

FIXTURE(dump) {
	struct rnl nl;
	pthread_t stable[STABLE];
	pid_t tids[STABLE];
	int fds[2];
};

FIXTURE_SETUP(dump)
{
	int err = rnl_open(&self->nl), i;

	if (err == -ENOENT)
		SKIP(return, "the kernel has no RECOUNT netlink family (CONFIG_RECOUNT=n)");
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, pipe(self->fds));
	for (i = 0; i < STABLE; i++)
		ASSERT_EQ(0, pthread_create(&self->stable[i], NULL, block, &self->fds[0]));
}

FIXTURE_TEARDOWN(dump)
{
	close(self->fds[1]);
	rnl_close(&self->nl);
}

/* The tids of this process's threads but the caller, from /proc. */
static int stable_tids(pid_t *tids, int max)
{
	char path[64];
	int n = 0;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", getpid());
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max) {
		pid_t tid = atoi(e->d_name);

		if (tid > 0 && tid != getpid() && tid != sys_gettid())
			tids[n++] = tid;
	}
	closedir(d);
	return n;
}

/*
 * A dump of this process's threads, while threads come and go, ends, lists
 * every stable thread exactly once, lists nothing of other processes, and
 * flags no message NLM_F_DUMP_INTR, though a thread comes and goes after the
 * first message of every dump: clients retry a dump so flagged (libmnl
 * returns EINTR), and on a busy host the retries would never end.
 */
TEST_F(dump, each_stable_thread_once_while_others_come_and_go)
{
	int intr, not_multi, i, round, wrong, intr_rounds = 0;
	struct rnl_reply r;
	pthread_t churner;
	struct seen *s;

	s = calloc(1, sizeof(*s));
	ASSERT_NE(NULL, s);
	sleep_ns(100 * NSEC_PER_MSEC);
	ASSERT_EQ(STABLE, stable_tids(s->want, STABLE));
	churning = 1;
	ASSERT_EQ(0, pthread_create(&churner, NULL, churn, NULL));
	for (round = 0; round < 5; round++) {
		memset(s->count, 0, sizeof(s->count));
		s->records = 0;
		s->others = 0;
		s->tgid = getpid();
		s->change = true;
		ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_THREADS, getpid(), count_record, s,
				      &intr, &not_multi, &r)) TH_LOG("%s", r.extack);
		/* netlink fills a message ahead of the reads: a change is seen from the third. */
		ASSERT_GE(r.nbatch, 3) TH_LOG("the dump came in %d reads", r.nbatch);
		for (i = 0, wrong = 0; i < STABLE; i++)
			wrong += s->count[i] != 1;
		ASSERT_EQ(0, wrong) TH_LOG("%d stable threads not listed exactly once", wrong);
		EXPECT_EQ(0, s->others);
		EXPECT_EQ(0, not_multi);
		intr_rounds += intr > 0;
	}
	__atomic_store_n(&churning, 0, __ATOMIC_RELAXED);
	pthread_join(churner, NULL);
	TH_LOG("%d of 5 dumps flagged interrupted, the last listed %d records in %d reads",
	       intr_rounds, s->records, r.nbatch);
	EXPECT_EQ(0, intr_rounds);
	free(s);
}

/* Every thread dump lists this one too; process and CPU dumps list theirs. */
TEST_F(dump, processes_threads_and_cpus)
{
	int intr, not_multi, cpu;
	struct rnl_reply r;
	struct seen *s;

	s = calloc(1, sizeof(*s));
	ASSERT_NE(NULL, s);
	s->want[0] = sys_gettid();
	ASSERT_EQ(0, rnl_dump(&self->nl, -1, 0, count_record, s, &intr, &not_multi, &r));
	EXPECT_EQ(1, s->count[0]);
	EXPECT_GT(s->records, STABLE);

	memset(s, 0, sizeof(*s));
	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_PROCESSES, 0, count_record, s, &intr,
			      &not_multi, &r));
	/* Processes have no pid attribute: count this one by its tgid. */
	s->tgid = getpid();
	EXPECT_GT(s->records, 1);

	memset(s, 0, sizeof(*s));
	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_CPUS, 0, count_record, s, &intr,
			      &not_multi, &r));
	EXPECT_EQ(get_nprocs_conf(), s->records);
	for (cpu = 0; cpu < get_nprocs_conf(); cpu++)
		EXPECT_EQ(1, s->cpus[cpu]);
	free(s);
}

static void count_tgid(const struct rnl_record *rec, void *arg)
{
	int *n = arg;

	n[rec->tgid == 1]++;
}

/* An unprivileged dump lists only what the caller may read. */
TEST_F(dump, unprivileged_dump_lists_its_own)
{
	int status;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int n[2] = { 0, 0 }, intr, not_multi;
		struct rnl_reply r;
		struct rnl nl;

		if (become_nobody() || rnl_open(&nl))
			_exit(1);
		if (rnl_dump(&nl, RECOUNT_SCOPE_PROCESSES, 0, count_tgid, n, &intr, &not_multi, &r))
			_exit(2);
		/* Itself, and not init (pid 1), which is root's. */
		_exit(n[0] == 1 && n[1] == 0 ? 0 : 3);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

static void ignore(const struct rnl_record *rec, void *arg)
{
}

/* Bad dump requests fail with their errno and a reason. */
TEST_F(dump, bad_requests)
{
	int intr, not_multi;
	struct rnl_reply r;

	rnl_dump(&self->nl, RECOUNT_SCOPE_PROCESSES, getpid(), ignore, NULL, &intr, &not_multi, &r);
	EXPECT_EQ(-EINVAL, r.error);
	EXPECT_NE(NULL, strstr(r.extack, "tgid filters a dump of threads only"));
	rnl_dump(&self->nl, RECOUNT_SCOPE_THREADS, 4194304, ignore, NULL, &intr, &not_multi, &r);
	EXPECT_EQ(-ESRCH, r.error);
	EXPECT_NE(NULL, strstr(r.extack, "no such process"));
	rnl_dump(&self->nl, RECOUNT_SCOPE_CPUS + 1, 0, ignore, NULL, &intr, &not_multi, &r);
	EXPECT_EQ(-ERANGE, r.error);
}

TEST_HARNESS_MAIN
