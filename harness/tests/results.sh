#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# harness/results.py, which decides whether a guest run passed, on crafted
# serial logs and a crafted source tree: every test point counted, a failure
# shown with its own diagnostics (not another test's); a program that
# crashed (with what its last test said), ran short, crashed after its last
# test, lost its END marker or never ran (not built) counted as failed, by
# its name from the selftests' Makefile; a KUnit case missing from the log
# failed; a skip passes only where harness/expected-skips declares it; each
# form of kernel splat fails the run, but for a KCSAN data race of upstream
# code named in harness/guest/kcsan-ignore reported before the guest set
# its filter; a log it cannot read fails it with the reason, and the
# RESULTS line is always there.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree
mkdir -p "$tree/tools/testing/selftests/recount" "$tree/kernel/recount"
cat > "$tree/tools/testing/selftests/recount/Makefile" <<'EOF'
TEST_GEN_PROGS := a_test b_test c_test \
		  d_test
TEST_GEN_PROGS += e_test f_test
TEST_GEN_PROGS_EXTENDED := getdelays
EOF
cat > "$tree/kernel/recount/recount_kunit.c" <<'EOF'
static struct kunit_case recount_test_cases[] = {
	KUNIT_CASE(recount_test_one),
	KUNIT_CASE(recount_test_two),
	KUNIT_CASE_SLOW(recount_test_three),
	{}
};

static struct kunit_suite recount_test_suite = {
	.name = "recount",
	.test_cases = recount_test_cases,
};
EOF
cat > "$tmp/skips" <<'EOF'
# comment
arch a_test/recount.third	^no PMU here$
arch a_test/recount.fifth	^no PMU here$
other a_test/recount.fourth	declared elsewhere only
EOF

results() {
	local rc=0
	python3 "$HARNESS/results.py" arch "$1" "$tree" "$tmp/skips" > "$tmp/got" || rc=$?
	echo "exit $rc" >> "$tmp/got"
}
status=0
check() {
	diff -u "$tmp/want" "$tmp/got" || { echo "^ $1"; status=1; }
}

cat > "$tmp/serial.log" <<'EOF'
[    1.000000]     # Subtest: recount
[    1.000001]     1..3
[    1.000002]     ok 1 recount_test_one
[    1.000003]     not ok 2 recount_test_two
[    1.000004] ok 1 recount
RECOUNT-TEST-BEGIN a_test
TAP version 13
1..6
# Starting 6 tests from 1 test cases.
#  RUN           recount.first ...
# a_test.c:10:first:Expected 1 (1) == 2 (2)
# a_test.c:10:first:not the second's
#            OK  recount.first
ok 1 recount.first
#  RUN           recount.second ...
[    2.000000] WARNING: CPU: 1 PID: 80 at kernel/recount/core.c:300 x
# a_test.c:20:second:Expected a (5) <= b (4)
# a_test.c:21:second:charged 5 ns, CPU time 3..4 ns
# second: Test failed
#          FAIL  recount.second
not ok 2 recount.second
#  RUN           recount.third ...
#      SKIP      no PMU here
ok 3 recount.third # SKIP no PMU here
#  RUN           recount.fourth ...
ok 4 recount.fourth # SKIP no netlink family
ok 5 recount.fifth # SKIP no PMU here, nor anything else
not ok 6 recount.sixth # SKIP a failure is no skip
# FAILED: 1 / 6 tests passed.
RECOUNT-TEST-END a_test 1
RECOUNT-TEST-BEGIN b_test
1..2
#  RUN           recount.only ...
ok 1 recount.only
#  RUN           recount.crashes ...
# b_test.c:30:crashes:about to crash
RECOUNT-TEST-END b_test 139
RECOUNT-TEST-BEGIN c_test
RECOUNT-TEST-END c_test 139
RECOUNT-TEST-BEGIN e_test
1..1
ok 1 recount.all_good
RECOUNT-TEST-END e_test 134
RECOUNT-TEST-BEGIN f_test
1..1
ok 1 recount.truncated
[    3.000000] ------------[ cut here ]------------ RECOUNT-TEST-BEGIN d_test
1..1
#  RUN           recount.hangs ...
# d_test.c:5:hangs:waiting
EOF
results "$tmp/serial.log"
cat > "$tmp/want" <<'EOF'
PASS arch/a_test/recount.first
FAIL arch/a_test/recount.second
    #  RUN           recount.second ...
    # a_test.c:20:second:Expected a (5) <= b (4)
    # a_test.c:21:second:charged 5 ns, CPU time 3..4 ns
    # second: Test failed
    #          FAIL  recount.second
SKIP arch/a_test/recount.third: no PMU here
FAIL arch/a_test/recount.fourth: skipped, and no skip is declared for it with this reason: no netlink family
    #  RUN           recount.fourth ...
FAIL arch/a_test/recount.fifth: skipped, and no skip is declared for it with this reason: no PMU here, nor anything else
FAIL arch/a_test/recount.sixth
PASS arch/b_test/recount.only
FAIL arch/b_test: ran 1 of 2 tests (exit status 139)
    #  RUN           recount.crashes ...
    # b_test.c:30:crashes:about to crash
FAIL arch/c_test: no TAP plan (exit status 139)
PASS arch/e_test/recount.all_good
FAIL arch/e_test: exit status 134 after all its tests passed (crashed or failed at its end)
PASS arch/f_test/recount.truncated
FAIL arch/f_test: did not finish (no END marker before the next program)
FAIL arch/d_test: did not finish (guest crashed or timed out)
    #  RUN           recount.hangs ...
    # d_test.c:5:hangs:waiting
PASS arch/kunit/recount_test_one
FAIL arch/kunit/recount_test_two
FAIL arch/kunit/recount_test_three: did not run
FAIL arch/kunit/recount: ran 2 of 3 cases
FAIL arch/kernel-log: [    2.000000] WARNING: CPU: 1 PID: 80 at kernel/recount/core.c:300 x
FAIL arch/guest: init did not finish (crash, panic or timeout)
RESULTS 5 14 1
exit 1
EOF
check "a run with every kind of failure"

# A clean log passes; then each splat form alone fails it.
cat > "$tmp/clean.log" <<'EOF'
[    0.400000] recount: performance CPUs 0-1, efficiency CPUs 2-3
[    1.000000]     # Subtest: recount
[    1.000001]     1..3
[    1.000002]     ok 1 recount_test_one
[    1.000003]     ok 2 recount_test_two
[    1.000003]     # recount_test_three: recount: 5 reads
[    1.000003]     ok 3 recount_test_three
[    1.000004] ok 1 recount
[    1.000005] # recount: pass:3 fail:0 skip:0 total:3
EOF
for p in a b c d e f; do
	printf 'RECOUNT-TEST-BEGIN %s_test\n1..1\nok 1 recount.only\nRECOUNT-TEST-END %s_test 0\n' \
		$p $p >> "$tmp/clean.log"
done
printf '%s\n' "RECOUNT-TAINTED 262144" "RECOUNT-EXIT: 0" >> "$tmp/clean.log"
results "$tmp/clean.log"
{
	for p in a b c d e f; do echo "PASS arch/${p}_test/recount.only"; done
	printf '%s\n' "PASS arch/kunit/recount_test_one" "PASS arch/kunit/recount_test_two" \
		"PASS arch/kunit/recount_test_three" "PASS arch/kernel-log" "PASS arch/taint" \
		"RESULTS 11 0 0" "exit 0"
} > "$tmp/want"
check "a clean run"

while IFS= read -r splat; do
	{ cat "$tmp/clean.log"; echo "$splat"; } > "$tmp/splat.log"
	results "$tmp/splat.log"
	if ! grep -qF "FAIL arch/kernel-log: $splat" "$tmp/got" || ! grep -qx 'exit 1' "$tmp/got"; then
		echo "a kernel log with '$splat' passed:"; cat "$tmp/got"; status=1
	fi
done <<'EOF'
[    5.000000] Call trace:
[    5.000000] Call Trace:
[    5.000000] Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP
[    5.000000] Unable to handle kernel NULL pointer dereference at virtual address 0000000000000008
[    5.000000] INFO: task fuzz_test:123 blocked for more than 60 seconds.
[    5.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [stress_test:99]
[    5.000000] NMI watchdog: Watchdog detected hard LOCKUP on cpu 1
[    5.000000] recount: CPU 1: a pinned counter could not be scheduled; its counts are marked inexact
[    5.000000] recount: ignoring recount=maybe, expected on or off
[    5.000000] BUG: KCSAN: data-race in recount_account / recount_read
[    5.000000] rcu: INFO: rcu_preempt self-detected stall on CPU
[    5.000000] unreferenced object 0xffff888003d1c000 (size 64):
[    5.000000] truncated extack: this user has 16 listening sockets, the most without CAP_SYS_PTRACE or CAP_NET_A
EOF

# A kernel tainted by a warning whose lines the console lost, or a run that
# does not say: failed.
sed 's/^RECOUNT-TAINTED .*/RECOUNT-TAINTED 262656/' "$tmp/clean.log" > "$tmp/taint.log"
results "$tmp/taint.log"
grep -qx 'FAIL arch/taint: the kernel is tainted 262656: W: warning' "$tmp/got" &&
	grep -qx 'exit 1' "$tmp/got" || { echo "a tainted kernel passed:"; cat "$tmp/got"; status=1; }
grep -v '^RECOUNT-TAINTED' "$tmp/clean.log" > "$tmp/taint.log"
results "$tmp/taint.log"
grep -q '^FAIL arch/taint: the guest did not report' "$tmp/got" ||
	{ echo "a run without its taint passed:"; cat "$tmp/got"; status=1; }

# A program that plans no test is a skip, undeclared here.
awk '/^RECOUNT-TEST-BEGIN a_test$/ { print; print "1..0"; skip = 1; next }
	/^RECOUNT-TEST-END a_test / { skip = 0 } !skip' "$tmp/clean.log" > "$tmp/none.log"
results "$tmp/none.log"
grep -q '^FAIL arch/a_test: skipped, and no skip is declared for it with this reason: the program planned no test' \
	"$tmp/got" || { echo "a program that planned no test passed:"; cat "$tmp/got"; status=1; }

# The kernel log check alone (the boot-parameter boots).
python3 "$HARNESS/results.py" --kernel-log arch/boot "$tmp/clean.log" > "$tmp/got" || true
printf '%s\n' "PASS arch/boot/kernel-log" "RESULTS 1 0 0" | diff -u - "$tmp/got" || status=1
{ cat "$tmp/clean.log"; echo "[    5.000000] Call trace:"; } > "$tmp/splat.log"
rc=0
python3 "$HARNESS/results.py" --kernel-log arch/boot "$tmp/splat.log" > "$tmp/got" || rc=$?
grep -q '^FAIL arch/boot/kernel-log: ' "$tmp/got" && [ $rc = 1 ] ||
	{ echo "a boot log with a splat passed:"; cat "$tmp/got"; status=1; }
# A report's lines follow its failure, to the report's end, past a test's
# line between them: a serial log CI does not keep is gone.
{
	cat "$tmp/clean.log"
	printf '[    5.000000] %s\n' "$(printf '=%.0s' $(seq 66))" \
		"BUG: KCSAN: data-race in __change_pid / recount_nl_get_dumpit" "" \
		"write to 0xffff888003d1c5f0 of 8 bytes by task 99 on cpu 0:" \
		" __change_pid+0x5e/0x110" ""
	echo "ok 3 dump.a_test_s_line_between_the_stacks"
	printf '[    5.000000] %s\n' "read to 0xffff888003d1c5f0 of 8 bytes by task 98 on cpu 1:" \
		" recount_nl_get_dumpit+0x2f1/0x9c0" "$(printf '=%.0s' $(seq 66))" \
		"recount: after the report"
} > "$tmp/splat.log"
python3 "$HARNESS/results.py" --kernel-log arch/boot "$tmp/splat.log" > "$tmp/got" || true
{
	echo "FAIL arch/boot/kernel-log: [    5.000000] BUG: KCSAN: data-race in __change_pid /" \
		"recount_nl_get_dumpit; [    5.000000] recount: after the report"
	printf '    [    5.000000] %s\n' "" "write to 0xffff888003d1c5f0 of 8 bytes by task 99 on cpu 0:" \
		" __change_pid+0x5e/0x110" "" "read to 0xffff888003d1c5f0 of 8 bytes by task 98 on cpu 1:" \
		" recount_nl_get_dumpit+0x2f1/0x9c0"
	echo "RESULTS 0 1 0"
} | diff -u - "$tmp/got" || { echo "a KCSAN report's lines were not shown"; status=1; }
# A data race naming an upstream function of harness/guest/kcsan-ignore,
# reported before the guest's init put it on KCSAN's filter (its
# RECOUNT-KCSAN-IGNORED lines): passed. The same after them, or in a log
# without them, fails: the guest's filter should have caught it. So do one
# that names only others (above), one whose function merely starts like an
# ignored one's, an assert, and a splat on the same console line.
race_log() {	# the race's line, then where the init's lines are: after or none
	{
		cat "$tmp/clean.log"
		printf '[    2.000000] %s\n' "$(printf '=%.0s' $(seq 66))" "$1" "" \
			"read to 0xffff888003d1c5f0 of 8 bytes by task 98 on cpu 1:" \
			" alloc_pid+0x2f1/0x9c0" "$(printf '=%.0s' $(seq 66))"
		[ "$2" = none ] || printf 'RECOUNT-KCSAN-IGNORED %s\n' alloc_pid free_pid
	} > "$tmp/race.log"
	python3 "$HARNESS/results.py" --kernel-log arch/boot "$tmp/race.log" > "$tmp/got" || true
}
for race in "alloc_pid / copy_process" "copy_process / free_pid" "wq_worker_running+0x4f/0xb0"; do
	race_log "BUG: KCSAN: data-race in $race" after
	printf '%s\n' "PASS arch/boot/kernel-log" "RESULTS 1 0 0" | diff -u - "$tmp/got" ||
		{ echo "^ an ignored upstream race, $race, failed the run"; status=1; }
	race_log "BUG: KCSAN: data-race in $race" none
	grep -qF "FAIL arch/boot/kernel-log: [    2.000000] BUG: KCSAN: data-race in $race" "$tmp/got" ||
		{ echo "$race passed without the guest's filter lines:"; cat "$tmp/got"; status=1; }
done
{
	cat "$tmp/clean.log"
	printf 'RECOUNT-KCSAN-IGNORED %s\n' alloc_pid free_pid
	echo "[    9.000000] BUG: KCSAN: data-race in alloc_pid / copy_process"
} > "$tmp/race.log"
python3 "$HARNESS/results.py" --kernel-log arch/boot "$tmp/race.log" > "$tmp/got" || true
grep -qF "FAIL arch/boot/kernel-log: [    9.000000] BUG: KCSAN: data-race in alloc_pid" "$tmp/got" ||
	{ echo "an ignored race after the guest set its filter passed:"; cat "$tmp/got"; status=1; }
while read -r splat; do
	race_log "$splat" after
	grep -qF "FAIL arch/boot/kernel-log: [    2.000000] $splat" "$tmp/got" ||
		{ echo "'$splat' passed as an ignored race:"; cat "$tmp/got"; status=1; }
done <<'EOF'
BUG: KCSAN: data-race in alloc_pidx / copy_process
BUG: KCSAN: assert: race in alloc_pid / copy_process
BUG: KCSAN: data-race in alloc_pid / copy_processWARNING: CPU: 1 PID: 1 at kernel/fork.c:1 x
WARNING: CPU: 1 PID: 1 at kernel/fork.c:1 x[    2.000000] BUG: KCSAN: data-race in alloc_pid / copy_process
BUG: KCSAN: data-race in wq_worker_running+0x4f/0xb0WARNING: CPU: 1 PID: 1 at kernel/fork.c:1 x
EOF
python3 "$HARNESS/results.py" --kernel-log arch/boot /nonexistent > "$tmp/got" || true
grep -qx 'RESULTS 0 1 0' "$tmp/got" || { echo "a missing boot log passed"; status=1; }

# A program missing from the log (not built): failed by name.
grep -v '^RECOUNT-TEST-.* c_test\|^1..1$\|^ok 1 recount.only$' "$tmp/clean.log" > "$tmp/missing.log"
for p in a b d e f; do
	printf 'RECOUNT-TEST-BEGIN %s_test\n1..1\nok 1 recount.only\nRECOUNT-TEST-END %s_test 0\n' \
		$p $p >> "$tmp/missing.log"
done
results "$tmp/missing.log"
grep -qx 'FAIL arch/c_test: did not run (not built, or the guest stopped before it)' "$tmp/got" &&
	grep -qx 'exit 1' "$tmp/got" || { echo "a missing c_test passed:"; cat "$tmp/got"; status=1; }

# Markers out of order or unreadable.
printf '%s\n' 'RECOUNT-TEST-END a_test 0' 'RECOUNT-TEST-BEGIN b_test' '1..1' 'ok 1 recount.x' \
	'RECOUNT-TEST-END b_test' > "$tmp/markers.log"
results "$tmp/markers.log"
grep -qx 'FAIL arch/a_test: END marker without its BEGIN' "$tmp/got" &&
	grep -q "^FAIL arch/b_test: unreadable END marker" "$tmp/got" ||
	{ echo "bad markers passed:"; cat "$tmp/got"; status=1; }

# What results.py cannot read fails the architecture, with a RESULTS line.
results /nonexistent/serial.log
grep -q '^FAIL arch/results: cannot read the run: FileNotFoundError' "$tmp/got" &&
	grep -qx 'RESULTS 0 1 0' "$tmp/got" && grep -qx 'exit 1' "$tmp/got" ||
	{ echo "an unreadable log passed:"; cat "$tmp/got"; status=1; }
rm "$tree/tools/testing/selftests/recount/Makefile"
results "$tmp/clean.log"
grep -q '^FAIL arch/results: cannot read the run' "$tmp/got" && grep -qx 'RESULTS 0 1 0' "$tmp/got" ||
	{ echo "a tree without the selftests' Makefile passed:"; cat "$tmp/got"; status=1; }
exit $status
