#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# harness/results.py, which decides whether a guest run passed, on a crafted
# serial log: every test point counted, a failure shown with its own
# diagnostics (not another test's), a program that crashed (with what its
# last test said), ran short or never ran counted as failed, a bad kernel log
# line failing the run.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/tests"
for p in a_test b_test c_test d_test e_test getdelays; do
	install -m 755 /dev/null "$tmp/tests/$p"
done

cat > "$tmp/serial.log" <<'EOF'
[    1.000000]     # Subtest: recount
[    1.000001]     1..2
[    1.000002]     ok 1 recount_test_one
[    1.000003]     not ok 2 recount_test_two
[    1.000004] ok 1 recount
RECOUNT-TEST-BEGIN a_test
TAP version 13
1..3
# Starting 3 tests from 1 test cases.
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
# FAILED: 1 / 3 tests passed.
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
RECOUNT-TEST-BEGIN d_test
1..1
#  RUN           recount.hangs ...
# d_test.c:5:hangs:waiting
EOF
python3 "$HARNESS/results.py" arch "$tmp/serial.log" "$tmp/tests" > "$tmp/got" || true

cat > "$tmp/want" <<'EOF'
PASS arch/a_test/recount.first
FAIL arch/a_test/recount.second
    #  RUN           recount.second ...
    # a_test.c:20:second:Expected a (5) <= b (4)
    # a_test.c:21:second:charged 5 ns, CPU time 3..4 ns
    # second: Test failed
    #          FAIL  recount.second
SKIP arch/a_test/recount.third: no PMU here
PASS arch/b_test/recount.only
FAIL arch/b_test: ran 1 of 2 tests (exit status 139)
    #  RUN           recount.crashes ...
    # b_test.c:30:crashes:about to crash
FAIL arch/c_test: no TAP plan (exit status 139)
FAIL arch/d_test: did not finish (guest crashed or timed out)
    #  RUN           recount.hangs ...
    # d_test.c:5:hangs:waiting
FAIL arch/e_test: did not run
PASS arch/kunit/recount_test_one
FAIL arch/kunit/recount_test_two
FAIL arch/kernel-log: [    2.000000] WARNING: CPU: 1 PID: 80 at kernel/recount/core.c:300 x
FAIL arch/guest: init did not finish (crash, panic or timeout)
RESULTS 3 8 1
EOF
status=0
diff -u "$tmp/want" "$tmp/got" || status=1

# A clean log: the kernel-log and guest checks pass.
cat > "$tmp/clean.log" <<'EOF'
[    1.000000]     # Subtest: recount
[    1.000001]     1..1
[    1.000002]     ok 1 recount_test_one
[    1.000004] ok 1 recount
RECOUNT-TEST-BEGIN b_test
1..1
ok 1 recount.only
RECOUNT-TEST-END b_test 0
RECOUNT-EXIT: 0
EOF
rm "$tmp"/tests/[acde]_test
python3 "$HARNESS/results.py" arch "$tmp/clean.log" "$tmp/tests" > "$tmp/got" || true
printf '%s\n' "PASS arch/b_test/recount.only" "PASS arch/kunit/recount_test_one" \
	"PASS arch/kernel-log" "RESULTS 3 0 0" > "$tmp/want"
diff -u "$tmp/want" "$tmp/got" || status=1
exit $status
