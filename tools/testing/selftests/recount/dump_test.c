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
#include <sched.h>
#include <sys/wait.h>
#include <sys/socket.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"
#include "recount_check.h"

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

/* The CPUs of a list in sysfs, such as "0-3,5", in @cpus; how many, or -1. */
static int sysfs_cpus(const char *list, bool cpus[64])
{
	char path[64], buf[256], *p;
	int n = 0, a, b, len;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", list);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	memset(cpus, 0, 64 * sizeof(bool));
	for (p = buf; *p && *p != '\n'; p += len + (p[len] == ',')) {
		if (sscanf(p, "%d%n-%d%n", &a, &len, &b, &len) < 2)
			b = a;
		if (a < 0 || b >= 64 || a > b)
			return -1;
		for (; a <= b; a++, n++)
			cpus[a] = true;
	}
	return n;
}

/* A process dump's record: this process (count[0]), one with a pid (others). */
static void count_process(const struct rnl_record *rec, void *arg)
{
	struct seen *s = arg;

	s->records++;
	s->count[0] += rec->tgid == (__u32)getpid();
	s->others += rec->has_pid;
}

/*
 * Every thread dump lists this one too; a process dump lists this process
 * once, and process records only: they have no pid.
 */
TEST_F(dump, processes_and_threads)
{
	int intr, not_multi;
	struct rnl_reply r;
	struct seen *s;

	s = calloc(1, sizeof(*s));
	ASSERT_NE(NULL, s);
	s->want[0] = sys_gettid();
	ASSERT_EQ(0, rnl_dump(&self->nl, -1, 0, count_record, s, &intr, &not_multi, &r));
	EXPECT_EQ(1, s->count[0]);
	EXPECT_GT(s->records, STABLE);

	memset(s, 0, sizeof(*s));
	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_PROCESSES, 0, count_process, s, &intr,
			      &not_multi, &r));
	EXPECT_EQ(1, s->count[0]);
	EXPECT_EQ(0, s->others);
	EXPECT_GT(s->records, 1);

	free(s);
}

/* The records of one dump of this process's threads, in order. */
struct collected {
	struct rnl_record rec[STABLE + 16];
	int n;
};

static void collect_record(const struct rnl_record *rec, void *arg)
{
	struct collected *c = arg;

	if (c->n < (int)ARRAY_SIZE(c->rec))
		c->rec[c->n++] = *rec;
}

/* The record of thread @tid in @c, or NULL. */
static const struct rnl_record *collected_thread(const struct collected *c, __u32 tid)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->rec[i].has_pid && c->rec[i].pid == tid)
			return &c->rec[i];
	return NULL;
}

/* Wait up to 10 s until every thread of this process but the caller sleeps. */
static bool others_asleep(void)
{
	int tries, awake;

	for (tries = 0; tries < 100; tries++) {
		struct dirent *e;
		DIR *d = opendir("/proc/self/task");

		if (!d)
			return false;
		awake = 0;
		while ((e = readdir(d))) {
			pid_t tid = atoi(e->d_name);
			char state;

			if (tid <= 0 || tid == sys_gettid())
				continue;
			state = thread_state(tid);
			awake += state && state != 'S';
		}
		closedir(d);
		if (!awake)
			return true;
		usleep(100000);
	}
	return false;
}

/* The command name of this process's thread @tid, from /proc; "" if none. */
static void proc_comm(pid_t tid, char *comm, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	comm[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, size, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/*
 * A dump of a process's threads gives each one's ids and command name as
 * /proc does, full and lean, across the batches the kernel writes them in
 * (it reads the tgid once, the parent's once per batch, the names without
 * task_lock()): names of every length up to 15, the longest included.
 */
TEST_F(dump, threads_have_their_own_ids_and_names)
{
	static const char long_name[] = "fifteen-chars-x";
	int intr, not_multi, i, pass, named = 0;
	struct collected *c;
	struct rnl_reply r;
	char name[16];

	ASSERT_EQ(15, strlen(long_name));
	for (i = 0; i < STABLE; i++) {
		if (i == STABLE / 2)
			snprintf(name, sizeof(name), "%s", long_name);
		else
			snprintf(name, sizeof(name), "%.*s", 1 + i % 14, "d-0123456789abc");
		ASSERT_EQ(0, pthread_setname_np(self->stable[i], name));
	}
	c = calloc(1, sizeof(*c));
	ASSERT_NE(NULL, c);
	for (pass = 0; pass < 2; pass++) {
		self->nl.lean = pass;
		c->n = 0;
		ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_THREADS, getpid(), collect_record, c,
				      &intr, &not_multi, &r));
		ASSERT_GT(c->n, STABLE);
		for (i = 0; i < c->n; i++) {
			const struct rnl_record *rec = &c->rec[i];
			char comm[32];

			ASSERT_TRUE(rec->has_pid && rec->has_tgid && rec->has_parent_tgid);
			EXPECT_EQ(getpid(), rec->tgid) TH_LOG("thread %u", rec->pid);
			EXPECT_EQ(getppid(), rec->parent_tgid) TH_LOG("thread %u", rec->pid);
			proc_comm(rec->pid, comm, sizeof(comm));
			EXPECT_STREQ(comm, rec->comm) TH_LOG("thread %u", rec->pid);
			named += !strcmp(rec->comm, long_name);
		}
	}
	EXPECT_EQ(2, named);
	free(c);
}

/* How many kinds of CPUs the machine has, from get-info. */
static int kinds_with_cpus(struct rnl *nl)
{
	struct rnl_reply info;
	int k, n = 0;

	if (rnl_get_info(nl, &info))
		return -1;
	for (k = 0; k < RNL_MAX_KINDS; k++)
		n += info.rec.kind_cpus[k][0] != 0;
	return n;
}

/*
 * A lean dump (RECOUNT_A_LEAN) says the state once, in its first record;
 * has per-kind usages only where the machine has CPUs of more than one kind;
 * gives the runtime only as the struct asked for; and otherwise says what a
 * full dump says: the blocked threads, whose values do not move, have the
 * same usage and runtime in both. A lean get has the state in its record.
 * Runs on the test machine (two kinds) and on the boot=on machine (one).
 */
TEST_F(dump, lean_records_say_the_state_once)
{
	int intr, not_multi, kinds, i, checked = 0;
	struct collected *full, *lean;
	struct rnl_reply r;

	kinds = kinds_with_cpus(&self->nl);
	ASSERT_GE(kinds, 1);
	/* The stable threads block in read(): their values stop moving. */
	ASSERT_TRUE(others_asleep());
	full = calloc(2, sizeof(*full));
	ASSERT_NE(NULL, full);
	lean = full + 1;
	self->nl.runtime_version = RECOUNT_RUNTIME_V3;
	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_THREADS, getpid(), collect_record, full,
			      &intr, &not_multi, &r));
	self->nl.lean = true;
	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_THREADS, getpid(), collect_record, lean,
			      &intr, &not_multi, &r));
	ASSERT_GT(lean->n, STABLE);
	ASSERT_LT(lean->n, STABLE + 16);

	for (i = 0; i < lean->n; i++) {
		const struct rnl_record *l = &lean->rec[i], *f;

		EXPECT_EQ(i == 0, l->has_metrics) TH_LOG("record %d of the lean dump", i);
		EXPECT_EQ(kinds > 1 ? kinds : 0, l->nr_kinds);
		EXPECT_FALSE(l->runtime.has);
		EXPECT_EQ(sizeof(struct recount_task_runtime), l->runtime_struct_len);
		f = collected_thread(full, l->pid);
		if (!f || l->pid == (__u32)sys_gettid())
			continue;
		/* A stable thread, blocked in read(): its values are frozen. */
		EXPECT_TRUE(f->has_metrics);
		EXPECT_EQ(f->nr_kinds, 2);
		EXPECT_TRUE(f->runtime.has);
		EXPECT_EQ(f->usage.user, l->usage.user) TH_LOG("thread %u", l->pid);
		EXPECT_EQ(f->usage.kernel, l->usage.kernel) TH_LOG("thread %u", l->pid);
		EXPECT_EQ(0, memcmp(f->runtime_struct, l->runtime_struct, l->runtime_struct_len));
		if (kinds == 1)
			EXPECT_EQ(f->per_kind[0].user + f->per_kind[0].kernel +
				  f->per_kind[1].user + f->per_kind[1].kernel,
				  l->usage.user + l->usage.kernel);
		checked++;
	}
	EXPECT_GE(checked, STABLE - 1);
	EXPECT_EQ(lean->rec[0].metrics, full->rec[0].metrics);
	EXPECT_EQ(lean->rec[0].flags, full->rec[0].flags);

	/* A lean get: the state is in its one record. */
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, sys_gettid(), &r));
	EXPECT_TRUE(r.rec.has_metrics);
	EXPECT_EQ(kinds > 1 ? kinds : 0, r.rec.nr_kinds);
	EXPECT_FALSE(r.rec.runtime.has);
	EXPECT_EQ(sizeof(struct recount_task_runtime), r.rec.runtime_struct_len);
	/* Versions 1 and 2 lack some of the runtime's values: the nest stays. */
	self->nl.runtime_version = RECOUNT_RUNTIME_V1;
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, sys_gettid(), &r));
	EXPECT_TRUE(r.rec.runtime.has);
	EXPECT_EQ(sizeof(struct recount_task_runtime_v1), r.rec.runtime_struct_len);
	self->nl.runtime_version = RECOUNT_RUNTIME_V2;
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, sys_gettid(), &r));
	EXPECT_TRUE(r.rec.runtime.has);
	EXPECT_EQ(sizeof(struct recount_task_runtime_v2), r.rec.runtime_struct_len);
	self->nl.runtime_version = 0;
	ASSERT_EQ(0, rnl_get(&self->nl, RECOUNT_A_PID, sys_gettid(), &r));
	EXPECT_TRUE(r.rec.runtime.has);
	EXPECT_EQ(0, r.rec.runtime_struct_len);
	free(full);
}

/*
 * The CPU dump lists each CPU a get answers for, once: every present CPU,
 * online or not. A CPU that is possible but not present (a hot-pluggable
 * socket left empty) has no record either way. QEMU's machines here make
 * none (x86 lists no disabled CPU in its MADT with -smp 4,maxcpus=5), so
 * under QEMU this checks only the present ones.
 */
TEST_F(dump, cpu_dump_lists_what_get_answers_for)
{
	bool possible[64], present[64];
	int intr, not_multi, cpu, n;
	struct rnl_reply r;
	struct seen *s;

	n = sysfs_cpus("present", present);
	ASSERT_GT(n, 0);
	ASSERT_LT(0, sysfs_cpus("possible", possible));
	s = calloc(1, sizeof(*s));
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_CPUS, 0, count_record, s, &intr,
			      &not_multi, &r));
	EXPECT_EQ(n, s->records);
	for (cpu = 0; cpu < 64; cpu++) {
		if (!possible[cpu])
			continue;
		rnl_get(&self->nl, RECOUNT_A_CPU, cpu, &r);
		EXPECT_EQ(present[cpu] ? 0 : -ENODEV, r.error)
			TH_LOG("cpu %d: %s", cpu, r.extack);
		EXPECT_EQ(present[cpu], s->cpus[cpu])
			TH_LOG("cpu %d: %spresent, listed %d times", cpu,
			       present[cpu] ? "" : "not ", s->cpus[cpu]);
		if (!present[cpu])
			TH_LOG("cpu %d is possible, not present", cpu);
	}
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

#define HANDOFF_THREADS 60

struct handoff {
	__u32 requester;	/* its tgid, in its own pid namespace */
	int records, others;
};

static void count_handoff(const struct rnl_record *rec, void *arg)
{
	struct handoff *h = arg;

	h->records++;
	h->others += rec->tgid != h->requester;
}

/* Send @fd and @data over the unix socket @sock. */
static int send_fd(int sock, int fd, const void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == (ssize_t)len ? 0 : -1;
}

static int recv_fd(int sock, void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = data, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &mh, 0) != (ssize_t)len)
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * The requester: as nobody, with HANDOFF_THREADS threads, start a dump of
 * threads and pass its socket on, unread, with its tgid and the dump's
 * sequence number, @undumpable or not from then on (as a set-user-ID
 * program it executed would make it); live until told to end.
 */
static int start_and_hand_off(int sock, bool undumpable)
{
	pthread_t th[HANDOFF_THREADS];
	int fds[2], i;
	__u32 msg[2];
	struct rnl nl;

	if (pipe(fds) || become_nobody())
		return 1;
	for (i = 0; i < HANDOFF_THREADS; i++)
		if (pthread_create(&th[i], NULL, block, &fds[0]))
			return 2;
	if (rnl_open(&nl) || rnl_dump_send(&nl, RECOUNT_SCOPE_THREADS, 0, &msg[1]))
		return 3;
	if (undumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return 6;
	msg[0] = getpid();
	if (send_fd(sock, nl.fd, msg, sizeof(msg)))
		return 4;
	if (read(sock, &(char){ 0 }, 1) != 1)
		return 5;
	close(fds[1]);
	for (i = 0; i < HANDOFF_THREADS; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/*
 * After its first message, a dump goes on in whoever reads the socket. A
 * dump that nobody starts (in a new pid namespace if @newns) and root
 * finishes lists only what the requester could see and read, with the
 * requester's pids: its own threads, all of them, and nothing else, though
 * a root process was born meanwhile with a pid above them all. If the
 * requester turned @undumpable after its first message, the messages root
 * fills list nothing more of it: only the first message's records come.
 */
static void hand_off(struct __test_metadata *_metadata, struct rnl *own, bool newns,
		     bool undumpable)
{
	int sock[2], go[2], intr, not_multi, status, fd;
	struct handoff h = { 0 };
	pid_t requester, later;
	struct rnl_reply r;
	__u32 msg[2];
	struct rnl nl;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sock));
	ASSERT_EQ(0, pipe(go));
	requester = fork();
	ASSERT_GE(requester, 0);
	if (requester == 0) {
		pid_t inner;

		if (!newns)
			_exit(start_and_hand_off(sock[1], undumpable));
		/* The first child of a new pid namespace is its pid 1. */
		if (unshare(CLONE_NEWPID))
			_exit(10);
		inner = fork();
		if (inner == 0)
			_exit(start_and_hand_off(sock[1], undumpable));
		if (inner < 0 || waitpid(inner, &status, 0) != inner || !WIFEXITED(status))
			_exit(11);
		_exit(WEXITSTATUS(status));
	}
	fd = recv_fd(sock[0], msg, sizeof(msg));
	ASSERT_GE(fd, 0);
	h.requester = msg[0];
	if (newns)
		EXPECT_EQ(1, h.requester);
	later = fork();
	ASSERT_GE(later, 0);
	if (later == 0)
		_exit(read(go[0], &(char){ 0 }, 1) == 1 ? 0 : 1);

	nl = *own;
	nl.fd = fd;
	EXPECT_EQ(0, rnl_dump_recv(&nl, msg[1], count_handoff, &h, &intr, &not_multi, &r))
		TH_LOG("dump: %s (%s)", strerror(-r.error), r.extack);
	/* The requester filled the first message, root the others. */
	if (undumpable) {
		EXPECT_LE(1, h.records);
		EXPECT_GT(HANDOFF_THREADS + 1, h.records);
	} else {
		EXPECT_LT(1, r.nbatch);
		EXPECT_EQ(HANDOFF_THREADS + 1, h.records);
	}
	EXPECT_EQ(0, h.others);

	close(fd);
	ASSERT_EQ(1, write(sock[0], "x", 1));
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(later, waitpid(later, NULL, 0));
	ASSERT_EQ(requester, waitpid(requester, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sock[0]);
	close(sock[1]);
	close(go[0]);
	close(go[1]);
}

/*
 * A process's own threads are listed to it whichever of its threads reads
 * on, undumpable (PR_SET_DUMPABLE 0) as it is: ptrace_may_access()'s rule
 * for a thread group, though the thread that reads on has credentials of
 * its own (PR_SET_KEEPCAPS gave it new ones). Nobody starts a dump of its
 * process's HANDOFF_THREADS + 1 threads; another thread reads it all.
 */
struct read_on {
	struct rnl nl;
	__u32 seq;
	struct handoff h;
	struct rnl_reply r;
	int err;
};

static void *read_on_main(void *arg)
{
	struct read_on *o = arg;
	int intr, not_multi;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		o->err = -errno;
	else
		o->err = rnl_dump_recv(&o->nl, o->seq, count_handoff, &o->h, &intr, &not_multi,
				       &o->r);
	return NULL;
}

static int undumpable_reads_on_its_own(void)
{
	pthread_t th[HANDOFF_THREADS], reader;
	struct read_on o = { 0 };
	int fds[2], i;

	if (pipe(fds) || become_nobody() || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return 1;
	for (i = 0; i < HANDOFF_THREADS; i++)
		if (pthread_create(&th[i], NULL, block, &fds[0]))
			return 2;
	o.h.requester = getpid();
	if (rnl_open(&o.nl) || rnl_dump_send(&o.nl, RECOUNT_SCOPE_THREADS, getpid(), &o.seq) ||
	    pthread_create(&reader, NULL, read_on_main, &o) || pthread_join(reader, NULL))
		return 3;
	close(fds[1]);
	for (i = 0; i < HANDOFF_THREADS; i++)
		pthread_join(th[i], NULL);
	if (o.err)
		return 4;
	/* More than the first message, all of its threads, nothing else. */
	if (o.r.nbatch < 2)
		return 5;
	return o.h.records == HANDOFF_THREADS + 1 && !o.h.others ? 0 : 6;
}

TEST_F(dump, read_on_by_another_thread_lists_its_own_process)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(undumpable_reads_on_its_own());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 5: one message only; 6: not every thread of its own, or others. */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(dump, finished_by_another_user_lists_what_its_requester_may)
{
	hand_off(_metadata, &self->nl, false, false);
}

TEST_F(dump, finished_in_another_pid_namespace_lists_what_its_requester_may)
{
	hand_off(_metadata, &self->nl, true, false);
}

TEST_F(dump, finished_by_another_lists_no_more_of_a_requester_turned_undumpable)
{
	hand_off(_metadata, &self->nl, false, true);
}

static void ignore(const struct rnl_record *rec, void *arg)
{
}

/* Bad dump requests fail with their errno and a reason. */
/*
 * In a new pid namespace a dump lists that namespace's tasks only, by their
 * pids there; and the process-scope dump finds the caller's own process as
 * the sum of its threads, between two dumps of them (nothing of it exited,
 * its other threads are blocked, and values only grow).
 */
struct ns_dump {
	pid_t want[4];
	int seen[4], foreign;
	struct rnl_usage own;
	bool has_own;
};

static void ns_record(const struct rnl_record *rec, void *arg)
{
	struct ns_dump *d = arg;
	__u32 id = rec->has_pid ? rec->pid : rec->tgid;
	int i;

	for (i = 0; i < 4; i++) {
		if (d->want[i] && id == (__u32)d->want[i]) {
			d->seen[i]++;
			break;
		}
	}
	if (i == 4) {
		d->foreign++;
		fprintf(stderr, "# a record of %u, not of this pid namespace\n", id);
	}
	if (rec->tgid == 1) {
		rnl_usage_add(&d->own, &rec->usage);
		d->has_own = true;
	}
}

struct ns_thread {
	int fd;
	pid_t tid;
};

static void *ns_block(void *p)
{
	struct ns_thread *t = p;

	__atomic_store_n(&t->tid, sys_gettid(), __ATOMIC_RELEASE);
	return block(&t->fd);
}

static int ns_dumps(void)
{
	struct ns_thread nt[2];
	struct ns_dump threads_before = {}, procs = {}, threads_after = {};
	int fds[2], intr, multi, i;
	struct rnl_reply r;
	pthread_t th[2];
	struct rnl nl;
	pid_t child;

	if (getpid() != 1 || pipe(fds) || rnl_open(&nl))
		return 10;
	for (i = 0; i < 2; i++) {
		nt[i].fd = fds[0];
		nt[i].tid = 0;
		if (pthread_create(&th[i], NULL, ns_block, &nt[i]))
			return 11;
	}
	child = fork();
	if (child < 0)
		return 12;
	if (child == 0) {
		close(fds[1]);
		block(&fds[0]);
		_exit(0);
	}
	spin_user(20 * NSEC_PER_MSEC);
	/* The tasks of the namespace: this process, its two threads, the child. */
	threads_before.want[0] = 1;
	threads_before.want[1] = child;
	for (i = 0; i < 2; i++) {
		while (!__atomic_load_n(&nt[i].tid, __ATOMIC_ACQUIRE))
			sleep_ns(NSEC_PER_MSEC);
		threads_before.want[2 + i] = nt[i].tid;
	}
	threads_after = threads_before;
	procs.want[0] = 1;
	procs.want[1] = child;
	if (rnl_dump(&nl, RECOUNT_SCOPE_THREADS, 0, ns_record, &threads_before, &intr, &multi,
		     &r) ||
	    rnl_dump(&nl, RECOUNT_SCOPE_PROCESSES, 0, ns_record, &procs, &intr, &multi, &r) ||
	    rnl_dump(&nl, RECOUNT_SCOPE_THREADS, 0, ns_record, &threads_after, &intr, &multi, &r))
		return 13;
	close(fds[1]);
	waitpid(child, NULL, 0);
	if (threads_before.foreign || procs.foreign || threads_after.foreign)
		return 14;
	for (i = 0; i < 4; i++)
		if (threads_before.seen[i] != 1 || threads_after.seen[i] != 1 ||
		    (i < 2 && procs.seen[i] != 1))
			return 20 + i;
	if (!procs.has_own || rnl_usage_exceeds(&threads_before.own, &procs.own) ||
	    rnl_usage_exceeds(&procs.own, &threads_after.own)) {
		fprintf(stderr, "# process %llu/%llu, threads %llu/%llu before, %llu/%llu after\n",
			procs.own.user, procs.own.kernel, threads_before.own.user,
			threads_before.own.kernel, threads_after.own.user,
			threads_after.own.kernel);
		return 15;
	}
	return 0;
}

TEST_F(dump, in_a_pid_namespace_lists_that_namespace)
{
	int status;
	pid_t pid;

	if (unshare(CLONE_NEWPID)) {
		ASSERT_EQ(EINVAL, errno);
		SKIP(return, "no pid namespaces (CONFIG_PID_NS=n)");
	}
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(ns_dumps());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

struct order {
	__u32 pids[STABLE + 64];
	int n;
};

static void note_pid(const struct rnl_record *rec, void *arg)
{
	struct order *o = arg;

	if (rec->has_pid && o->n < (int)ARRAY_SIZE(o->pids))
		o->pids[o->n++] = rec->pid;
}

/* Is the calling process's thread list, as /proc lists it, in id order? -1 if unread. */
static int thread_list_in_order(void)
{
	struct dirent *e;
	pid_t last = 0;
	int in_order = 1;
	DIR *d;

	d = opendir("/proc/self/task");
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		pid_t tid = atoi(e->d_name);

		if (tid <= 0)
			continue;
		in_order &= tid > last;
		last = tid;
	}
	closedir(d);
	return in_order;
}

#define WRAPPED 24

static pid_t first_wrapped;

static void *note_tid_and_block(void *p)
{
	__atomic_store_n(&first_wrapped, sys_gettid(), __ATOMIC_RELEASE);
	return block(p);
}

/*
 * A process's threads created after the pids wrapped around pid_max have
 * lower ids than those before them in its thread list: a dump of its
 * threads still lists each once, in the order of their ids. pid_max is
 * lowered to just past a first thread's id, so that the others take ids
 * below it (those of children reaped just before).
 */
TEST_F(dump, threads_in_id_order_after_pids_wrap)
{
	char old_max[32] = "", max[32];
	int i, made, intr, not_multi;
	pthread_t th[WRAPPED];
	struct rnl_reply r;
	struct order *o;
	pid_t child, first;
	FILE *f;

	o = calloc(1, sizeof(*o));
	ASSERT_NE(NULL, o);
	f = fopen("/proc/sys/kernel/pid_max", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(old_max, sizeof(old_max), f));
	fclose(f);
	/* vfork(): fork() copies 600 threads' stacks, seconds on a debug kernel. */
	for (i = 0; i < 2 * WRAPPED; i++) {
		child = vfork();
		ASSERT_LE(0, child);
		if (!child)
			_exit(0);
		ASSERT_EQ(child, waitpid(child, NULL, 0));
	}
	ASSERT_EQ(0, pthread_create(&th[0], NULL, note_tid_and_block, &self->fds[0]));
	while (!(first = __atomic_load_n(&first_wrapped, __ATOMIC_ACQUIRE)))
		sched_yield();
	snprintf(max, sizeof(max), "%d", first + 1);
	ASSERT_EQ(0, write_file("/proc/sys/kernel/pid_max", max));
	for (made = 1; made < WRAPPED; made++)
		if (pthread_create(&th[made], NULL, block, &self->fds[0]))
			break;
	ASSERT_EQ(0, write_file("/proc/sys/kernel/pid_max", old_max));
	ASSERT_EQ(WRAPPED, made);
	for (i = 0; i < made; i++)
		pthread_detach(th[i]);
	ASSERT_EQ(0, thread_list_in_order()) TH_LOG("no id wrapped around pid_max %s", max);

	ASSERT_EQ(0, rnl_dump(&self->nl, RECOUNT_SCOPE_THREADS, getpid(), note_pid, o, &intr,
			      &not_multi, &r)) TH_LOG("%s", r.extack);
	EXPECT_EQ(1 + STABLE + WRAPPED, o->n);
	/* Braces: the harness's EXPECT_*() TH_LOG() is two statements. */
	for (i = 1; i < o->n; i++) {
		EXPECT_LT(o->pids[i - 1], o->pids[i]) TH_LOG("record %d: %u after %u", i,
							     o->pids[i], o->pids[i - 1]);
	}
	free(o);
}

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
