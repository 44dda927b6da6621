#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make test: the host-side tests, then the kselftests and KUnit in QEMU on
# every architecture of TEST_ARCHS (default: x86_64 arm64), on the kernel
# DEBUG=1 or KCSAN=1 asks for; STRESS=1 stresses for STRESS_SECONDS (300).
# Ends with the failures, each with its diagnostics, and "N passed, N failed,
# N skipped"; fails if any test failed, if a test program ran fewer tests than
# it planned, or if a guest's kernel log has a WARNING, BUG, Oops, lockdep,
# KASAN, RCU stall or panic line; then boots with recount=on and =off and
# checks what each left kernel.recount at.
. "$(dirname "$0")/lib.sh"
STRESS_SECONDS=${STRESS_SECONDS:-300}

archs=${TEST_ARCHS:-x86_64 arm64}
results=$OUT/test-results.txt
mkdir -p "$OUT"
: > "$results"
pass=0 fail=0 skip=0

count() {
	local line
	while IFS= read -r line; do
		case "$line" in
		"RESULTS "*)
			set -- $line
			pass=$((pass + $2)) fail=$((fail + $3)) skip=$((skip + $4))
			;;
		*) echo "$line" | tee -a "$results" ;;
		esac
	done
}

msg "host-side tests"
"$HARNESS/prepare.sh"
# tap <name>: a PASS or FAIL for each TAP test point in stdin, with the
# diagnostics of failures.
tap() {
	awk -v name="$1" '
		/^ok [0-9]+ - / { sub(/^ok [0-9]+ - /, ""); print "RESULTS 1 0 0"; print "PASS " name "/" $0; next }
		/^not ok [0-9]+ - / { sub(/^not ok [0-9]+ - /, ""); print "RESULTS 0 1 0"; print "FAIL " name "/" $0; next }
		/^#   / { print "    " substr($0, 5) }'
}

for t in "$HARNESS"/tests/*.sh; do
	name=host/$(basename "$t" .sh)
	status=0
	out=$("$t" 2>&1) || status=$?
	# A test that speaks TAP counts each of its test points.
	if grep -qE '^(not )?ok [0-9]+ - ' <<<"$out"; then
		tap "$name" <<<"$out"
		if [ $status != 0 ] && ! grep -q '^not ok ' <<<"$out"; then
			echo "RESULTS 0 1 0"; echo "FAIL $name (exit status $status)"
			sed 's/^/    /' <<<"$out" | tail -20
		fi
	elif [ $status = 0 ]; then
		echo "RESULTS 1 0 0"; echo "PASS $name"
	elif [ $status = 4 ]; then
		echo "RESULTS 0 0 1"; echo "SKIP $name: $(tail -1 <<<"$out")"
	else
		echo "RESULTS 0 1 0"; echo "FAIL $name"; sed 's/^/    /' <<<"$out"
	fi
done > "$OUT/host-results.txt"
count < "$OUT/host-results.txt"

for arch in $archs; do
	msg "guest tests on $arch"
	if ! ARCH=$arch "$HARNESS/build.sh"; then
		echo "FAIL $arch/build" | tee -a "$results"
		fail=$((fail + 1))
		continue
	fi
	aout=$OUT/$arch${VARIANT:+-$VARIANT}
	# Checking kernels run several times slower, and need room for KASAN;
	# STRESS=1 runs the stress test for minutes instead of seconds.
	limit=${TEST_TIMEOUT:-1200}
	[ -z "$VARIANT" ] || limit=${TEST_TIMEOUT:-3000}
	[ -z "${STRESS:-}" ] || limit=$((limit + 2 * STRESS_SECONDS))
	# The debug kernel (KASAN, lockdep) takes 4 ms a fuzzing request under
	# TCG: it fuzzes with 20,000 requests, not 200,000 (fuzz_test).
	fuzz=
	[ "$VARIANT" != debug ] || fuzz=RECOUNT_FUZZ_ITERS=20000
	ARCH=$arch QUIET=1 QEMU_MEM=${VARIANT:+2G} \
		BOOT_ARGS="${STRESS:+RECOUNT_STRESS_SECONDS=$STRESS_SECONDS} $fuzz" \
		"$HARNESS/boot.sh" test "$limit" || true
	# results.py always ends with its RESULTS line; a run without one (the
	# script itself died) fails the architecture.
	name=$arch${VARIANT:+-$VARIANT}
	python3 "$HARNESS/results.py" "$name" "$aout/serial-test.log" "$TREE" \
		> "$aout/results.txt" 2>&1 || true
	if ! grep -q '^RESULTS ' "$aout/results.txt"; then
		{ echo "FAIL $name/results: harness/results.py printed no RESULTS line"
		  sed 's/^/    /' "$aout/results.txt" | tail -20; echo "RESULTS 0 1 0"; } >> "$aout/results.txt"
	fi
	count < "$aout/results.txt"

	# The guest's getdelays --openmetrics and --prometheus -D processes,
	# through real parsers (run-tests.sh prints them between markers).
	for fmt in openmetrics prometheus; do
		t="$name/getdelays/${fmt}_of_the_guest_s_processes_parses"
		sed -n "/^RECOUNT-METRICS-BEGIN $fmt/,/^RECOUNT-METRICS-END $fmt/p" \
			"$aout/serial-test.log" | sed '1d;$d' | tr -d '\r' > "$aout/guest.$fmt" || true
		om=
		if grep -q "^RECOUNT-METRICS-END $fmt 0" "$aout/serial-test.log" &&
		   om=$(python3 "$HARNESS/tests/openmetrics.py" --$fmt "$aout/guest.$fmt" 2>&1); then
			printf '%s\n' "RESULTS 1 0 0" "PASS $t: $om"
		else
			printf '%s\n' "RESULTS 0 1 0" "FAIL $t" "    ${om:-getdelays failed or printed nothing}"
		fi
	done > "$aout/metrics-results.txt"
	count < "$aout/metrics-results.txt"

	# The boot parameter, each way, before anything writes the sysctl; the
	# log of each boot is checked for splats too. Written to a file and
	# counted in this shell: a failure inside cannot lose a result.
	: > "$aout/boot-results.txt"
	for want in on off; do
		blog=$aout/serial-boot-$want.log
		rm -f "$blog"
		ARCH=$arch QUIET=1 QEMU_MEM=${VARIANT:+2G} BOOT_ARGS="recount=$want" SERIAL_LOG=$blog \
			"$HARNESS/boot.sh" boot 600 > /dev/null 2>&1 || true
		got=$(sed -n 's/^RECOUNT-BOOT kernel.recount=\([0-9]*\).*/\1/p' "$blog" 2>/dev/null | head -1) || true
		expect=1
		[ $want = on ] || expect=0
		if [ "$got" = "$expect" ]; then
			printf '%s\n' "RESULTS 1 0 0" "PASS $name/boot/recount=$want"
		else
			echo "RESULTS 0 1 0"
			echo "FAIL $name/boot/recount=$want: kernel.recount is '${got:-(no answer)}', not $expect"
			tail -20 "$blog" 2>/dev/null | sed 's/^/    /' || true
		fi
		if [ $want = on ]; then
			# dump_test's lean records on a machine of one kind of CPU.
			t="$name/boot/dump_test.lean_records_say_the_state_once (one kind of CPU)"
			if grep -q '^RECOUNT-BOOT-TEST ok 1 ' "$blog" 2>/dev/null &&
			   ! grep -q -e '^RECOUNT-BOOT-TEST not ok' -e '^RECOUNT-BOOT-TEST ok .*# SKIP' "$blog"; then
				printf '%s\n' "RESULTS 1 0 0" "PASS $t"
			else
				printf '%s\n' "RESULTS 0 1 0" "FAIL $t"
				grep '^RECOUNT-BOOT-TEST' "$blog" 2>/dev/null | tail -20 | sed 's/^/    /' || true
			fi
		fi
		python3 "$HARNESS/results.py" --kernel-log "$name/boot/recount=$want" "$blog" || true
	done >> "$aout/boot-results.txt" 2>&1
	[ "$(grep -c '^RESULTS ' "$aout/boot-results.txt")" = 5 ] ||
		printf '%s\n' "RESULTS 0 1 0" "FAIL $name/boot: the boot checks did not all report" \
			>> "$aout/boot-results.txt"
	count < "$aout/boot-results.txt"
	# A checker that was off found nothing: each must say it ran.
	case "$VARIANT" in
	debug)	checks=("kasan: KernelAddressSanitizer initialized" "Lock dependency validator"
			"RECOUNT-KMEMLEAK done") ;;
	# KCSAN's selftest, and its filter holding each upstream race (which
	# results.py leaves out only before the guest's init set it).
	kcsan)	checks=("kcsan: selftest: ([0-9]+)/\\1 tests passed")
		for f in $(grep -v '^#' "$HARNESS/guest/kcsan-ignore"); do
			checks+=("RECOUNT-KCSAN-IGNORED $f([^[:alnum:]_.]|\$)")
		done ;;
	*)	checks=() ;;
	esac
	# (count in this shell, not in a pipeline's subshell: its sums stay.)
	count < <(for c in "${checks[@]}"; do
		name="$arch-$VARIANT/checker-on: $c"
		if grep -qaE "$c" "$aout/serial-test.log"; then
			echo "RESULTS 1 0 0"; echo "PASS $name"
		else
			echo "RESULTS 0 1 0"; echo "FAIL $name (not in the serial log)"
		fi
	done)
done

echo
# Every failure again, with its diagnostics, above the count.
awk '/^FAIL/ { show = 1; print; next } /^    / { if (show) print; next } { show = 0 }' "$results"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
