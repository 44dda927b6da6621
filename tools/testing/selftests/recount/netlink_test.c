// SPDX-License-Identifier: GPL-2.0
/*
 * recount: the RECOUNT netlink family's answers to bad requests, and who may
 * read what.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "../kselftest_harness.h"
#include "recount_fixture.h"

/* The kernel answered @r with errno @err and an extack message holding @msg. */
static void expect_error(struct __test_metadata *_metadata,
			 const struct rnl_reply *r, int err, const char *msg)
{
	EXPECT_EQ(err, r->error);
	EXPECT_NE(NULL, strstr(r->extack, msg))
		TH_LOG("extack '%s', expected '%s'", r->extack, msg);
}

#define EXPECT_ERROR(reply, err, msg) expect_error(_metadata, &(reply), err, msg)

TEST_F(recount, no_selector)
{
	struct rnl_reply r;
	struct rnl_msg m;

	rnl_msg_init(&self->nl, &m, RECOUNT_CMD_GET, 0);
	rnl_transact(&self->nl, &m, &r);
	EXPECT_ERROR(r, -EINVAL, "one of pid, tgid or cpu is required");
}

TEST_F(recount, two_selectors)
{
	struct rnl_reply r;
	struct rnl_msg m;

	rnl_msg_init(&self->nl, &m, RECOUNT_CMD_GET, 0);
	rnl_put_u32(&m, RECOUNT_A_PID, getpid());
	rnl_put_u32(&m, RECOUNT_A_CPU, 0);
	rnl_transact(&self->nl, &m, &r);
	EXPECT_ERROR(r, -EINVAL, "mutually exclusive");
	/* The offset points at the second selector. */
	EXPECT_TRUE(r.has_offs);
	EXPECT_EQ(NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + 4, r.extack_offs);
}

TEST_F(recount, unknown_pid_and_tgid)
{
	struct rnl_reply r;
	struct worker w;

	/* Past the default pid_max: no such task can exist. */
	rnl_get(&self->nl, RECOUNT_A_PID, 4194304, &r);
	EXPECT_ERROR(r, -ESRCH, "no such thread");
	rnl_get(&self->nl, RECOUNT_A_TGID, 4194304, &r);
	EXPECT_ERROR(r, -ESRCH, "no such process");

	/* A thread id is not a process id. */
	ASSERT_EQ(0, worker_start(&w, work_sleep, 0, -1));
	rnl_get(&self->nl, RECOUNT_A_TGID, w.tid, &r);
	EXPECT_ERROR(r, -ESRCH, "no such process");
	rnl_get(&self->nl, RECOUNT_A_PID, w.tid, &r);
	EXPECT_EQ(0, r.error);
	EXPECT_EQ(w.tid, r.rec.pid);
	EXPECT_EQ(getpid(), r.rec.tgid);
	worker_stop(&w);
}

/* The policy's minimum: netlink reports a value out of range as ERANGE. */
TEST_F(recount, pid_zero_fails_policy)
{
	struct rnl_reply r;

	rnl_get(&self->nl, RECOUNT_A_PID, 0, &r);
	EXPECT_ERROR(r, -ERANGE, "out of range");
	EXPECT_TRUE(r.has_offs);
	rnl_get(&self->nl, RECOUNT_A_TGID, 0, &r);
	EXPECT_ERROR(r, -ERANGE, "out of range");
}

TEST_F(recount, bad_cpu)
{
	struct rnl_reply r;

	rnl_get(&self->nl, RECOUNT_A_CPU, (__u32)-1, &r);
	EXPECT_ERROR(r, -EINVAL, "no CPU 4294967295");
	rnl_get(&self->nl, RECOUNT_A_CPU, get_nprocs_conf() + 64, &r);
	EXPECT_ERROR(r, -EINVAL, "no CPU");
	rnl_get(&self->nl, RECOUNT_A_CPU, 0, &r);
	EXPECT_EQ(0, r.error);
	EXPECT_TRUE(r.rec.has_cpu);
	EXPECT_EQ(0, r.rec.cpu);
}

TEST_F(recount, wrong_attribute_length)
{
	struct rnl_reply r;
	struct rnl_msg m;
	__u16 short_pid = 1;

	rnl_msg_init(&self->nl, &m, RECOUNT_CMD_GET, 0);
	rnl_put(&m, RECOUNT_A_PID, &short_pid, sizeof(short_pid));
	rnl_transact(&self->nl, &m, &r);
	EXPECT_EQ(-EINVAL, r.error);
	EXPECT_NE(0, r.extack[0]) TH_LOG("no extack message");
}

TEST_F(recount, unknown_attribute_rejected)
{
	struct rnl_reply r;
	struct rnl_msg m;

	/* Strict validation: an attribute the policy does not know is an error. */
	rnl_msg_init(&self->nl, &m, RECOUNT_CMD_GET, 0);
	rnl_put_u32(&m, RECOUNT_A_PID, getpid());
	rnl_put_u32(&m, RECOUNT_A_MAX + 10, 0);
	rnl_transact(&self->nl, &m, &r);
	EXPECT_EQ(-EINVAL, r.error);
	EXPECT_NE(0, r.extack[0]) TH_LOG("no extack message");
}

TEST_F(recount, unknown_command)
{
	struct rnl_reply r;
	struct rnl_msg m;

	rnl_msg_init(&self->nl, &m, RECOUNT_CMD_MAX + 10, 0);
	rnl_transact(&self->nl, &m, &r);
	EXPECT_EQ(-EOPNOTSUPP, r.error);
}

TEST_F(recount, truncated_message)
{
	struct rnl_reply r;
	struct rnl_msg m;

	/* A netlink header followed by half a genetlink header. */
	rnl_msg_init(&self->nl, &m, RECOUNT_CMD_GET, 0);
	m.len = NLMSG_HDRLEN + 2;
	((struct nlmsghdr *)m.buf)->nlmsg_len = m.len;
	rnl_transact(&self->nl, &m, &r);
	EXPECT_EQ(-EINVAL, r.error);
}

/* Bad registrations fail with EINVAL, saying why and naming the attribute. */
TEST_F(recount, bad_cpumasks)
{
	static const struct {
		const char *cpumask, *why;
	} bad[] = {
		{ "1-", "not a CPU list" },
		{ "abc", "not a CPU list" },
		{ "3-1", "not a CPU list" },
		{ "4096", "not a CPU list" },
		{ "", "empty CPU list" },
	};
	struct rnl_reply r;
	struct rnl_msg m;
	char beyond[16];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		rnl_listen(&self->nl, true, bad[i].cpumask, &r);
		EXPECT_ERROR(r, -EINVAL, bad[i].why);
		EXPECT_TRUE(r.has_offs) TH_LOG("'%s': no attribute named", bad[i].cpumask);
	}
	/* A CPU number within the mask's bits but not a possible CPU. */
	snprintf(beyond, sizeof(beyond), "%d", get_nprocs_conf());
	rnl_listen(&self->nl, true, beyond, &r);
	EXPECT_EQ(-EINVAL, r.error);

	/* No cpumask at all. */
	rnl_listen(&self->nl, true, NULL, &r);
	EXPECT_EQ(-EINVAL, r.error);
	EXPECT_NE(0, r.extack[0]) TH_LOG("no extack message");

	/* A cpumask that is not a NUL-terminated string. */
	rnl_msg_init(&self->nl, &m, RECOUNT_CMD_REGISTER, 0);
	rnl_put(&m, RECOUNT_A_CPUMASK, "0-1", 3);
	rnl_transact(&self->nl, &m, &r);
	EXPECT_EQ(-EINVAL, r.error);
	EXPECT_NE(0, r.extack[0]) TH_LOG("no extack message");
}

/* Deregistering what was never registered is an error. */
TEST_F(recount, deregister_unregistered)
{
	struct rnl_reply r;

	rnl_listen(&self->nl, false, "0", &r);
	EXPECT_ERROR(r, -EINVAL, "does not listen to CPU 0");
	ASSERT_EQ(0, rnl_listen(&self->nl, true, "0", &r));
	rnl_listen(&self->nl, false, "0-1", &r);
	EXPECT_ERROR(r, -EINVAL, "does not listen to CPU 1");
	EXPECT_EQ(0, rnl_listen(&self->nl, false, "0", &r));
}

/* Run @fn as nobody (uid/gid 65534, no capabilities); returns its exit status. */
static int as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (become_nobody())
			_exit(100);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int nobody_reads(void *arg)
{
	struct rnl_reply r;
	struct rnl nl;

	if (rnl_open(&nl))
		return 1;
	/* Another user's task: EACCES, with a reason. */
	rnl_get(&nl, RECOUNT_A_PID, 1, &r);
	if (r.error != -EACCES || !strstr(r.extack, "not allowed"))
		return 2;
	rnl_get(&nl, RECOUNT_A_TGID, 1, &r);
	if (r.error != -EACCES)
		return 3;
	/* Its own thread and process, and any CPU: no privilege needed. */
	if (rnl_get(&nl, RECOUNT_A_PID, sys_gettid(), &r) || r.rec.usage.kernel == 0)
		return 4;
	if (rnl_get(&nl, RECOUNT_A_TGID, getpid(), &r))
		return 5;
	if (rnl_get(&nl, RECOUNT_A_CPU, 0, &r))
		return 6;
	rnl_close(&nl);
	return 0;
}

TEST_F(recount, unprivileged_reads_only_its_own)
{
	EXPECT_EQ(0, as_nobody(nobody_reads, NULL));
}

/*
 * A request written to a socket that another opened (CVE-2014-0181: the
 * opener hands it to a privileged program that writes what it is given) is
 * judged by the opener's credentials too, since the answer goes to the
 * opener: a get, a dump and a listener registered so give the opener
 * nothing it could not read itself.
 */
struct opener {
	pid_t pid;		/* nobody, who opened the socket */
	int fd;			/* the socket, in this process */
	int release;		/* write end: the child exits when it closes */
};

static int open_as_nobody(struct opener *o, struct rnl *nl)
{
	int up[2], down[2], fd = -1, pidfd;
	char c;

	if (pipe(up) || pipe(down))
		return -1;
	o->pid = fork();
	if (o->pid < 0)
		return -1;
	if (o->pid == 0) {
		struct rnl own;

		close(up[0]);
		close(down[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (become_nobody() || rnl_open(&own))
			_exit(1);
		if (write(up[1], &own.fd, sizeof(own.fd)) != sizeof(own.fd))
			_exit(2);
		/* Until the test is done: then a nobody's process exits. */
		read(down[0], &c, 1);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	o->release = down[1];
	if (read(up[0], &fd, sizeof(fd)) != sizeof(fd))
		return -1;
	close(up[0]);
	pidfd = syscall(SYS_pidfd_open, o->pid, 0);
	o->fd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	nl->fd = o->fd;
	return o->fd < 0 ? -1 : 0;
}

struct find_tgids {
	pid_t a, b;
	bool got_a, got_b;
};

static void find_tgids(const struct rnl_record *rec, void *arg)
{
	struct find_tgids *f = arg;

	f->got_a |= rec->tgid == (__u32)f->a;
	f->got_b |= rec->tgid == (__u32)f->b;
}

TEST_F(recount, request_written_by_another_is_judged_by_the_opener)
{
	struct find_tgids f = { .a = 1 };
	struct rnl nl = self->nl;
	struct rnl_record rec;
	struct opener o;
	struct rnl_reply r;
	bool root_exit = false, nobody_exit = false;
	int err, status, intr = 0, not_multi = 0;
	char cpus[32];
	pid_t root;

	ASSERT_EQ(0, open_as_nobody(&o, &nl)) TH_LOG("%s", strerror(errno));
	f.b = o.pid;
	/* init, root's: the writer may read it, the opener may not. */
	rnl_get(&nl, RECOUNT_A_PID, 1, &r);
	EXPECT_ERROR(r, -EACCES, "not allowed");
	rnl_get(&nl, RECOUNT_A_TGID, 1, &r);
	EXPECT_ERROR(r, -EACCES, "not allowed");
	/* The opener's own process, which both may read. */
	EXPECT_EQ(0, rnl_get(&nl, RECOUNT_A_TGID, o.pid, &r)) TH_LOG("%s", r.extack);

	err = rnl_dump(&nl, RECOUNT_SCOPE_PROCESSES, 0, find_tgids, &f, &intr, &not_multi, &r);
	EXPECT_EQ(0, err) TH_LOG("%s", r.extack);
	EXPECT_FALSE(f.got_a) TH_LOG("the dump listed init");
	EXPECT_TRUE(f.got_b) TH_LOG("the dump left out the opener's process");

	snprintf(cpus, sizeof(cpus), "0-%d", get_nprocs_conf() - 1);
	ASSERT_EQ(0, rnl_listen(&nl, true, cpus, &r)) TH_LOG("%s", r.extack);
	root = fork();
	if (root == 0)
		_exit(0);
	ASSERT_EQ(root, waitpid(root, &status, 0));
	close(o.release);
	ASSERT_EQ(o.pid, waitpid(o.pid, &status, 0));
	while (!nobody_exit && rnl_next_exit(&nl, &rec, 2000) == 1) {
		root_exit |= rec.tgid == (__u32)root;
		nobody_exit |= rec.tgid == (__u32)o.pid;
	}
	EXPECT_TRUE(nobody_exit) TH_LOG("no record of the opener's exit");
	EXPECT_FALSE(root_exit) TH_LOG("a record of a root process's exit");
	close(o.fd);
}

/*
 * In a new pid namespace, pids in requests and records are that namespace's:
 * the first process is pid 1, and tasks outside it do not exist.
 */
static int pidns_reads(void *arg)
{
	pid_t outside = *(pid_t *)arg;
	struct rnl_reply r;
	struct rnl nl;

	if (getpid() != 1)
		return 1;
	if (rnl_open(&nl))
		return 2;
	if (rnl_get(&nl, RECOUNT_A_PID, 1, &r) || r.rec.pid != 1 || r.rec.tgid != 1)
		return 3;
	if (rnl_get(&nl, RECOUNT_A_TGID, 1, &r) || r.rec.tgid != 1)
		return 4;
	rnl_get(&nl, RECOUNT_A_PID, outside, &r);
	if (r.error != -ESRCH)
		return 5;
	rnl_close(&nl);
	return 0;
}

TEST_F(recount, pid_namespace)
{
	pid_t outside = getppid() > 1 ? getppid() : 2;
	int status;
	pid_t pid;

	/* A pid the child cannot see, and that is not 1 in its namespace. */
	if (outside == 1)
		outside = 2;
	if (unshare(CLONE_NEWPID)) {
		ASSERT_EQ(EINVAL, errno);
		SKIP(return, "no pid namespaces (CONFIG_PID_NS=n)");
	}
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(pidns_reads(&outside));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A process of the caller's own user that made itself non-dumpable is read
 * as /proc reads it (its maps, which PTRACE_MODE_READ guards): not at all
 * without CAP_SYS_PTRACE. Its dumpable sibling is read.
 */
/* A child that blocks until @go is closed, once it is (non-)dumpable. */
static pid_t blocked_child(const int go[2], const int ready[2], bool dumpable)
{
	pid_t pid = fork();
	char c;

	if (pid == 0) {
		close(go[1]);
		if (!dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	if (pid > 0 && read(ready[0], &c, 1) != 1)
		return -1;
	return pid;
}

/* 0 if /proc lets the caller read @pid's maps; else -errno. */
static int proc_reads(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int nobody_reads_nondumpable(void *arg)
{
	int go[2], ready[2], ret = 0;
	pid_t dumpable, hidden;
	struct rnl_reply r;
	struct rnl nl;

	if (pipe(go) || pipe(ready) || rnl_open(&nl))
		return 1;
	dumpable = blocked_child(go, ready, true);
	hidden = blocked_child(go, ready, false);
	if (dumpable < 0 || hidden < 0)
		return 2;
	if (proc_reads(dumpable) || proc_reads(hidden) != -EACCES)
		ret = 3;
	else if (rnl_get(&nl, RECOUNT_A_PID, dumpable, &r) ||
		 rnl_get(&nl, RECOUNT_A_TGID, dumpable, &r))
		ret = 4;
	else if (rnl_get(&nl, RECOUNT_A_PID, hidden, &r) != -EACCES ||
		 rnl_get(&nl, RECOUNT_A_TGID, hidden, &r) != -EACCES)
		ret = 5;
	close(go[1]);
	waitpid(dumpable, NULL, 0);
	waitpid(hidden, NULL, 0);
	return ret;
}

TEST_F(recount, nondumpable_process_is_not_read)
{
	EXPECT_EQ(0, as_nobody(nobody_reads_nondumpable, NULL));
}

/*
 * A set-user-ID exec changes a process's credentials while a read of it may
 * be between its permission check and its record. Nobody reads its own
 * child, without pause, while the child executes a set-user-ID-root copy of
 * this program: every record must be of the child before the exec (its
 * command name is still this program's), none of the new program, which
 * nobody may not read. The exec renames the child before it changes its
 * credentials, under exec_update_lock: a read that holds the lock across
 * its check and its record, as /proc/PID/io and perf_event_open() do, sees
 * the child whole before or whole after. Without it the reads below caught
 * a record of the new program some times in 300 execs.
 */
#define SUID_ENV "RECOUNT_SUID_COPY"
#define SUID_DUMP_ENV "RECOUNT_SUID_DUMP"
#define SUID_NAME "recount-suid"
#define SUID_EXECS 300

/* Where the copy is: in the test's own /tmp. */
static char suid_path[64];

static int suid_reads_dump(const char *arg);

/*
 * This program run set-user-ID (its copy, whoever runs it) exits at once,
 * 0, or reads on the dump SUID_DUMP_ENV names (suid_reads_dump()); run as
 * the copy, but not set-user-ID, 2.
 */
__attribute__((constructor)) static void suid_copy_exits(void)
{
	const char *dump = getenv(SUID_DUMP_ENV);

	if (geteuid() != getuid())
		_exit(dump ? suid_reads_dump(dump) : 0);
	if (getenv(SUID_ENV) || dump)
		_exit(2);
}

struct suid_reads {
	int reads, denied, leaked;
};

static void suid_record(const struct rnl_record *rec, void *arg)
{
	struct suid_reads *s = arg;

	s->reads++;
	s->leaked += !strcmp(rec->comm, SUID_NAME);
}

/* Read @pid by a get and a dump of its thread and process, in turns, until denied. */
static int suid_read_until_denied(struct rnl *nl, pid_t pid, struct suid_reads *s)
{
	int n, err, intr, not_multi;
	struct rnl_reply r;

	for (n = 0; ; n++) {
		switch (n % 4) {
		case 0:
		case 1:
			err = rnl_get(nl, n % 4 ? RECOUNT_A_TGID : RECOUNT_A_PID, pid, &r);
			if (!err)
				suid_record(&r.rec, s);
			break;
		case 2:
			err = rnl_dump(nl, RECOUNT_SCOPE_THREADS, pid, suid_record, s, &intr,
				       &not_multi, &r);
			break;
		default:
			err = rnl_dump(nl, RECOUNT_SCOPE_PROCESSES, 0, suid_record, s, &intr,
				       &not_multi, &r);
			break;
		}
		if (err == -EACCES)
			s->denied++;
		if (err == -EACCES || err == -ESRCH)
			return 0;
		if (err)
			return err;
	}
}

static int nobody_reads_setuid_exec(void *arg)
{
	struct suid_reads *s = arg;
	int i, status;
	struct rnl nl;
	pid_t pid;

	if (rnl_open(&nl))
		return 1;
	for (i = 0; i < SUID_EXECS; i++) {
		pid = fork();
		if (pid < 0)
			return 3;
		if (pid == 0) {
			execle(suid_path, SUID_NAME, NULL, (char *[]){ SUID_ENV "=1", NULL });
			_exit(1);
		}
		if (suid_read_until_denied(&nl, pid, s))
			return 4;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			return 5;
		/* 2: the copy ran, but not set-user-ID. */
		if (WEXITSTATUS(status))
			return 10 + WEXITSTATUS(status);
	}
	rnl_close(&nl);
	return 0;
}

/* 300 execs, each read until denied: 30 s on the debug kernel under TCG. */
/*
 * Make suid_path a set-user-ID-root copy of this program, in a /tmp of the
 * test's own: if the test fails or times out, the copy goes with it.
 */
static void suid_copy_make(struct __test_metadata *_metadata)
{
	snprintf(suid_path, sizeof(suid_path), "/tmp/%s", SUID_NAME);
	ASSERT_EQ(0, private_tmp()) TH_LOG("a /tmp of the test's own: %s", strerror(errno));
	ASSERT_EQ(0, setuid_copy("/proc/self/exe", suid_path))
		TH_LOG("%s: %s", suid_path, strerror(errno));
}

static void suid_copy_remove(void)
{
	unlink(suid_path);
}

TEST_F_TIMEOUT(recount, setuid_exec_is_read_whole_before_or_after, 180)
{
	struct suid_reads *s;

	suid_copy_make(_metadata);
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	EXPECT_EQ(0, as_nobody(nobody_reads_setuid_exec, s));
	suid_copy_remove();
	TH_LOG("%d records, %d reads denied after the exec, %d of the new program",
	       s->reads, s->denied, s->leaked);
	EXPECT_LT(0, s->reads);
	EXPECT_LT(0, s->denied);
	EXPECT_EQ(0, s->leaked);
	munmap(s, sizeof(*s));
}

/*
 * A dump goes on in whoever reads its socket: the requester's own process
 * too, once it executed another program. Nobody starts a dump of
 * processes with SUID_DUMP_OTHERS of its own before it, more than its first
 * message holds, and executes a set-user-ID-root copy of this program,
 * which reads the rest. The messages the new program fills list what
 * nobody may read: not the new program, which is root's and undumpable.
 * A process's own thread group was always listed to it, whatever it had
 * executed since the dump began.
 */
#define SUID_DUMP_OTHERS 24

/* Records of this process: [0] of the program before the exec, [1] after. */
static void suid_dump_record(const struct rnl_record *rec, void *arg)
{
	int *own = arg;

	if (rec->tgid == (__u32)getpid())
		own[!strcmp(rec->comm, SUID_NAME)]++;
}

/*
 * In the set-user-ID copy: read the rest of the dump that @arg names ("FD
 * FAMILY SEQ"). 0 if no record is of this program; 6 if one is; 5 if this
 * process was listed before the exec, which leaves nothing to test.
 */
static int suid_reads_dump(const char *arg)
{
	int own[2] = { 0, 0 }, intr, not_multi;
	unsigned int family, seq;
	struct rnl nl = { 0 };
	struct rnl_reply r;

	if (sscanf(arg, "%d %u %u", &nl.fd, &family, &seq) != 3)
		return 3;
	nl.family = family;
	if (rnl_dump_recv(&nl, seq, suid_dump_record, own, &intr, &not_multi, &r))
		return 4;
	return own[0] ? 5 : own[1] ? 6 : 0;
}

/* Nobody starts a dump and executes the copy, which reads the rest. */
static int nobody_dumps_and_executes(void *arg)
{
	char env[64];
	__u32 seq;
	struct rnl nl = { .family = *(__u16 *)arg };

	/* Not close-on-exec; and no read yet, so its first message is small. */
	nl.fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (nl.fd < 0 || rnl_dump_send(&nl, RECOUNT_SCOPE_PROCESSES, 0, &seq))
		return 1;
	snprintf(env, sizeof(env), SUID_DUMP_ENV "=%d %u %u", nl.fd, nl.family, seq);
	execle(suid_path, SUID_NAME, NULL, (char *[]){ env, NULL });
	return 7;
}

TEST_F(recount, dump_read_on_after_a_setuid_exec_lists_not_the_new_program)
{
	pid_t others[SUID_DUMP_OTHERS];
	int block[2], ready[2], i, status;

	suid_copy_make(_metadata);
	ASSERT_EQ(0, pipe(block));
	ASSERT_EQ(0, pipe(ready));
	for (i = 0; i < SUID_DUMP_OTHERS; i++) {
		others[i] = fork();
		ASSERT_LE(0, others[i]);
		if (!others[i]) {
			close(block[1]);
			if (become_nobody() || write(ready[1], "r", 1) != 1)
				_exit(1);
			_exit(read(block[0], &(char){ 0 }, 1) != 0);
		}
	}
	close(block[0]);
	close(ready[1]);
	for (i = 0; i < SUID_DUMP_OTHERS; i++)
		ASSERT_EQ(1, read(ready[0], &(char){ 0 }, 1));
	close(ready[0]);
	status = as_nobody(nobody_dumps_and_executes, &self->nl.family);
	close(block[1]);
	for (i = 0; i < SUID_DUMP_OTHERS; i++)
		waitpid(others[i], NULL, 0);
	suid_copy_remove();
	/* 2: not set-user-ID; 5: listed before the exec; 6: the new program. */
	EXPECT_EQ(0, status);
}

/*
 * CAP_SYS_PTRACE alone is what ptrace and /proc ask to read another user's
 * task: nobody holding only it reads init, as it reads init's maps.
 */
static int ptracer_reads(void *arg)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	struct rnl_reply r;
	struct rnl nl;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) || setgid(65534) ||
	    setuid(65534))
		return 1;
	data[0].permitted = 1U << CAP_SYS_PTRACE;
	data[0].effective = data[0].permitted;
	if (syscall(SYS_capset, &hdr, data) || rnl_open(&nl))
		return 2;
	if (proc_reads(1))
		return 3;
	if (rnl_get(&nl, RECOUNT_A_PID, 1, &r) || rnl_get(&nl, RECOUNT_A_TGID, 1, &r))
		return 4;
	/* Without it, neither. */
	data[0].effective = 0;
	if (syscall(SYS_capset, &hdr, data))
		return 5;
	if (proc_reads(1) != -EACCES || rnl_get(&nl, RECOUNT_A_PID, 1, &r) != -EACCES)
		return 6;
	return 0;
}

TEST_F(recount, cap_sys_ptrace_alone_reads_others)
{
	int status;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(ptracer_reads(NULL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * What recount asks of a requester's capabilities to decide what a reply
 * carries (the PMU counts it may read) or whether a listener counts against
 * its user's bound, it asks without an audit record: a poller without them
 * must not log a denial every time it reads. A kprobe on security_capable()
 * records the options of every check made while nobody reads and listens;
 * each must have CAP_OPT_NOAUDIT. Kprobe events are in the kernel of
 * 'make test DEBUG=1' only.
 */
#define KPROBES_ABSENT "no kprobe events: capability checks cannot be traced here"
#define TRACING "/sys/kernel/tracing"
#define CAP_GROUP "recount_test"
#define CAP_PROBE CAP_GROUP "/cap"
#define CAP_RET_PROBE CAP_GROUP "/capret"
#define CAP_OPT_NOAUDIT 0x2	/* include/linux/security.h */

static void count_record(const struct rnl_record *rec, void *arg)
{
	(*(int *)arg)++;
}

/* As nobody: wait for @arg's go, then read and listen; 0 or the step that failed. */
static int nobody_polls(void *arg)
{
	int *fds = arg;
	int intr, not_multi, records = 0;
	struct rnl_reply r;
	struct rnl nl;
	char c;

	if (rnl_open(&nl) || write(fds[0], "r", 1) != 1 || read(fds[1], &c, 1) != 1)
		return 1;
	if (rnl_get(&nl, RECOUNT_A_PID, sys_gettid(), &r) ||
	    rnl_get(&nl, RECOUNT_A_TGID, getpid(), &r) || rnl_get(&nl, RECOUNT_A_CPU, 0, &r))
		return 2;
	if (rnl_dump(&nl, RECOUNT_SCOPE_THREADS, getpid(), count_record, &records, &intr,
		     &not_multi, &r) || !records)
		return 3;
	if (rnl_listen(&nl, true, "0", &r) || rnl_listen(&nl, false, "0", &r))
		return 4;
	rnl_close(&nl);
	return 0;
}

/* What trace_capability_checks() saw. */
struct cap_checks {
	int checks;	/* capability checks */
	int audited;	/* of those, without CAP_OPT_NOAUDIT */
	int denied;	/* of those, refused: each an audit record */
};

/* Count a line of the trace of CAP_PROBE and CAP_RET_PROBE in @c. */
static void count_cap_line(struct __test_metadata *_metadata, char *line, struct cap_checks *c,
			   bool *audited)
{
	unsigned int opts;
	char *p;
	int ret;

	line[strcspn(line, "\n")] = 0;
	p = strstr(line, " opts=");
	if (strstr(line, " cap: ") && p && sscanf(p, " opts=%x", &opts) == 1) {
		c->checks++;
		*audited = !(opts & CAP_OPT_NOAUDIT);
		if (*audited) {
			c->audited++;
			TH_LOG("an audited check: %s", line);
		}
		return;
	}
	p = strstr(line, " ret=");
	if (strstr(line, " capret: ") && p && sscanf(p, " ret=%d", &ret) == 1) {
		if (*audited && ret)
			c->denied++;
		*audited = false;
	}
}

/*
 * Run @fn as nobody, after @prepare as root, with a kprobe and a kretprobe
 * on security_capable() recording the checks made for it from the moment
 * it says it is ready (fds[0] of its arg) until it returns; count them in
 * @c. Returns -1 where kprobe events are absent, 0, what @fn returned, 100
 * if @prepare failed, or above 100 if tracing did.
 */
static int trace_capability_checks(struct __test_metadata *_metadata, int (*prepare)(void *),
				   int (*fn)(void *), struct cap_checks *c)
{
	int ready[2], go[2], fds[2], fd, status, was_on, ret = 0;
	bool audited = false, mounted = false;
	char filter[64], line[512];
	FILE *trace;
	pid_t pid;

	memset(c, 0, sizeof(*c));
	/* Tracing is left as it was found: mounted or not, on or off. */
	if (access(TRACING "/kprobe_events", W_OK))
		mounted = !mount("nodev", TRACING, "tracefs", 0, NULL);
	if (access(TRACING "/kprobe_events", W_OK) ||
	    int_file_get(TRACING "/tracing_on", &was_on)) {
		if (mounted)
			umount(TRACING);
		return -1;
	}
	/* A failed run's: an enabled event cannot be deleted. */
	write_file(TRACING "/events/" CAP_GROUP "/enable", "0");
	write_file(TRACING "/kprobe_events", "-:" CAP_PROBE);
	write_file(TRACING "/kprobe_events", "-:" CAP_RET_PROBE);
	if (write_file(TRACING "/kprobe_events",
		       "p:" CAP_PROBE " security_capable cap=$arg3:s32 opts=$arg4:x32") ||
	    write_file(TRACING "/kprobe_events",
		       "r:" CAP_RET_PROBE " security_capable ret=$retval:s32") ||
	    pipe(ready) || pipe(go))
		return 101;
	pid = fork();
	if (pid < 0)
		return 102;
	if (pid == 0) {
		fds[0] = ready[1];
		fds[1] = go[0];
		if ((prepare && prepare(fds)) || become_nobody())
			_exit(100);
		_exit(fn(fds));
	}
	close(ready[1]);
	close(go[0]);
	snprintf(filter, sizeof(filter), "common_pid == %d", pid);
	if (read(ready[0], line, 1) != 1 ||
	    write_file(TRACING "/events/" CAP_GROUP "/filter", filter))
		ret = 103;
	fd = open(TRACING "/trace", O_WRONLY | O_TRUNC);	/* empties it */
	if (fd >= 0)
		close(fd);
	if (write_file(TRACING "/tracing_on", "1") ||
	    write_file(TRACING "/events/" CAP_GROUP "/enable", "1"))
		ret = 104;
	/* The child waits for its go, even to fail. */
	if (write(go[1], "g", 1) != 1 || waitpid(pid, &status, 0) != pid)
		ret = 105;
	else if (!ret)
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : 106;
	write_file(TRACING "/events/" CAP_GROUP "/enable", "0");

	trace = fopen(TRACING "/trace", "r");
	while (trace && fgets(line, sizeof(line), trace))
		if (line[0] != '#')
			count_cap_line(_metadata, line, c, &audited);
	if (trace)
		fclose(trace);
	write_file(TRACING "/kprobe_events", "-:" CAP_PROBE);
	write_file(TRACING "/kprobe_events", "-:" CAP_RET_PROBE);
	int_file_set(TRACING "/tracing_on", was_on);
	if (mounted)
		umount(TRACING);
	close(ready[0]);
	close(go[1]);
	return ret;
}

TEST_F(recount, capability_probes_are_not_audited)
{
	struct cap_checks c;
	int ret;

	ret = trace_capability_checks(_metadata, NULL, nobody_polls, &c);
	if (ret < 0)
		SKIP(return, KPROBES_ABSENT);
	EXPECT_EQ(0, ret) TH_LOG("nobody's reads failed at step %d", ret);
	/* Nobody's listener is checked for CAP_SYS_PTRACE at least. */
	EXPECT_LT(0, c.checks);
	EXPECT_EQ(0, c.audited);
}

/* Root's listener of CPU 0, which nobody_widens() tries to widen. */
static struct rnl root_listener;

static int root_listens(void *arg)
{
	struct rnl_reply r;

	return rnl_open(&root_listener) || rnl_listen(&root_listener, true, "0", &r);
}

/* As nobody, on root's listener: be refused adding every CPU. */
static int nobody_widens(void *arg)
{
	const int *fds = arg;
	struct rnl_reply r;
	char c;

	if (write(fds[0], "r", 1) != 1 || read(fds[1], &c, 1) != 1)
		return 1;
	return rnl_listen(&root_listener, true, every_cpu(), &r) == -EPERM && r.extack[0] ? 0 : 2;
}

/*
 * Adding CPUs to a privileged listener asks for what only CAP_SYS_PTRACE or
 * CAP_NET_ADMIN allows, unlike the checks above: its denial is audited, in
 * one record, for CAP_SYS_PTRACE (netlink_capable() asks the opener, root
 * here, and the sender, audited both: one is refused).
 */
TEST_F(recount, a_refused_widening_is_audited_once)
{
	struct cap_checks c;
	int ret;

	if (get_nprocs_conf() < 2)
		SKIP(return, "one CPU: no other to add");
	ret = trace_capability_checks(_metadata, root_listens, nobody_widens, &c);
	if (ret < 0)
		SKIP(return, KPROBES_ABSENT);
	EXPECT_EQ(0, ret) TH_LOG("nobody was not refused: step %d", ret);
	EXPECT_EQ(1, c.denied) TH_LOG("%d checks, %d audited", c.checks, c.audited);
}

TEST_HARNESS_MAIN
