# SPDX-License-Identifier: GPL-2.0
# Run every recount selftest (the *_test programs; helpers such as
# getdelays sit beside them); the host reads the TAP output between the
# markers from the serial log (harness/test.sh).
echo "RECOUNT-TESTS kernel.recount=$(cat /proc/sys/kernel/recount) nproc=$(nproc)"
status=0
for t in /recount/tests/*_test; do
	name=${t##*/}
	echo "RECOUNT-TEST-BEGIN $name"
	# As tools/testing/selftests/recount/settings: the fuzzer takes about
	# ten minutes on a debug kernel.
	timeout 1800 "$t"
	rc=$?
	echo "RECOUNT-TEST-END $name $rc"
	[ $rc = 0 ] || [ $rc = 4 ] || status=1
done
# getdelays' metrics of this guest's processes, for the host to check with
# real parsers (harness/tests/openmetrics.py, from harness/test.sh). Written
# to a file first: only the cat can meet a console message on the way.
for fmt in openmetrics prometheus; do
	/recount/tests/getdelays --$fmt -D processes > /tmp/metrics 2>/dev/null
	rc=$?
	echo "RECOUNT-METRICS-BEGIN $fmt"
	cat /tmp/metrics
	echo "RECOUNT-METRICS-END $fmt $rc"
done
# Debug kernels: what kmemleak finds after the tests is a leak (the log
# check fails the run on its report).
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo "RECOUNT-KMEMLEAK scanning"
	echo scan > /sys/kernel/debug/kmemleak
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
	echo "RECOUNT-KMEMLEAK done"
fi
# A warning, oops or lockup taints the kernel even when the console lost its
# lines: the host checks the bits (harness/results.py).
echo "RECOUNT-TAINTED $(cat /proc/sys/kernel/tainted)"
exit $status
