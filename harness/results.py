#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read the serial log of a guest test run and report every test in it.

usage: results.py ARCH SERIAL_LOG TREE [EXPECTED_SKIPS]
       results.py --kernel-log NAME SERIAL_LOG

Prints one line per test (PASS/FAIL/SKIP <arch>/<program>/<test>), a failed
one followed by its diagnostics (the test's "# " lines, indented), and a last
line "RESULTS <passed> <failed> <skipped>", always, even when this script
itself fails (then as one failure with the reason).

What is expected comes from the source, never from what was built or ran:
the selftest programs from TEST_GEN_PROGS of the selftests' Makefile in
TREE, the KUnit suites and cases from kernel/recount/*kunit*.c in TREE. Each
one missing from the log is a failure with its name. So is a program that
did not reach its END marker, ran fewer tests than it planned, or exited with
a failing status after its tests passed; a skip that EXPECTED_SKIPS (default
harness/expected-skips) does not declare for ARCH, with its reason; a bad
kernel log line (WARNING, BUG, Oops, Call Trace/trace:, lockdep, KASAN, hung
task, lockup, recount's own warnings...); and a kernel tainted by a warning,
an oops, a bad page or a lockup at the end of the run, which catches a splat
whose lines the console lost. A KCSAN data race that names a function of
harness/guest/kcsan-ignore is not one of recount's: the guest's init puts
those on KCSAN's filter, and says so (RECOUNT-KCSAN-IGNORED); this script
leaves out the ones reported before that.

With --kernel-log, only the kernel log check of SERIAL_LOG, as NAME.
"""
import fnmatch
import os
import re
import sys

BAD = re.compile(r"WARNING:|BUG:|Oops|Kernel panic|general protection fault|"
                 r"Internal error:|Unable to handle kernel|"
                 r"possible circular locking|possible recursive locking|"
                 r"inconsistent lock state|DEBUG_LOCKS_WARN_ON|"
                 r"lockdep is turned off|KASAN|UBSAN|ODEBUG:|KCSAN:|"
                 r"rcu: INFO|RCU stall|self-detected stall|"
                 r"blocked for more than \d+ seconds|soft lockup|hard LOCKUP|"
                 r"unreferenced object|suspected memory leak|"
                 r"Call Trace:|Call trace:|"
                 # An error message cut to NETLINK_MAX_FMTMSG_LEN, and said so.
                 r"truncated extack:|"
                 # recount's own messages are warnings, but for these two.
                 r"\] recount: (?!performance CPUs |the raw clock is no longer sound)")
STAMP = re.compile(r"^\[\s*\d+\.\d+\] ")
# "data-race in f / g", or "in f+0x4f/0xb0" where the other side is unknown.
KCSAN_RACE = re.compile(r"BUG: KCSAN: data-race in ([\w.]+)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?"
                        r"(?: / ([\w.]+))?(?=\s|$)")
KCSAN_IGNORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guest", "kcsan-ignore")
KCSAN_FILTERED = re.compile(r"RECOUNT-KCSAN-IGNORED ")
# A kernel line, blank ones too; the end of a KCSAN or KASAN report, or of a
# WARNING's.
KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")
REPORT_GAP = 3
REPORT_END = re.compile(r"^\[\s*\d+\.\d+\] (={20,}|-+\[ end trace)")
TAP = re.compile(r"^(ok|not ok) (\d+) (\S+)(.*)$")
KTAP_CASE = re.compile(r"^    (ok|not ok) (\d+) (\S+)(.*)$")
# The guest's markers (harness/guest/run-tests.sh), wherever in a line they
# are: kernel messages may share the console line.
BEGIN = re.compile(r"RECOUNT-TEST-BEGIN (\S+)")
END = re.compile(r"RECOUNT-TEST-END (\S+)(?: (\S+))?")
EXIT = re.compile(r"RECOUNT-EXIT: ")
TAINTED = re.compile(r"RECOUNT-TAINTED (\d+)")
# The taint bits that mean something went wrong: B (bad page), D (died),
# W (warning), L (soft lockup). KUnit's N (test) is expected.
BAD_TAINT = {5: "B: bad page", 7: "D: oops", 9: "W: warning", 14: "L: soft lockup"}
# kselftest_harness.h: a test starts with "#  RUN", its diagnostics are "# ".
RUN = re.compile(r"^#\s+RUN\s")
MAX_DIAGNOSTICS = 30
KSFT_SKIP = 4
SELFTESTS = "tools/testing/selftests/recount"


class Report:
    def __init__(self, arch, skips):
        self.arch = arch
        self.skips = skips
        self.counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    def add(self, status, name, detail="", diagnostics=()):
        if status == "SKIP" and not self.declared(name, detail):
            status = "FAIL"
            detail = f"skipped, and no skip is declared for it with this reason: {detail}"
        self.counts[status] += 1
        line = f"{status} {self.arch}/{name}"
        if detail:
            line += f": {detail}"
        print(line)
        if status == "FAIL":
            for d in diagnostics[-MAX_DIAGNOSTICS:]:
                print("    " + d)

    def declared(self, name, reason):
        return any(fnmatch.fnmatchcase(name, pattern) and re.search(why, reason)
                   for pattern, why in self.skips)


def status_of(result, rest):
    """A TAP result; "not ok ... # SKIP" is a failure, not a skip."""
    if result == "ok" and "# SKIP" in rest:
        return "SKIP", rest.split("# SKIP", 1)[1].strip()
    return ("PASS" if result == "ok" else "FAIL"), ""


def make_variable(makefile, name):
    """The words of a make variable set with := or += (continuations joined)."""
    with open(makefile) as f:
        text = f.read().replace("\\\n", " ")
    words = []
    for line in text.splitlines():
        m = re.match(rf"^\s*{name}\s*(:?=|\+=)(.*)$", line)
        if m:
            words = (words if m.group(1) == "+=" else []) + m.group(2).split()
    return words


def kunit_cases(tree):
    """{suite name: [case, ...]} of the recount KUnit sources in tree."""
    suites = {}
    src = os.path.join(tree, "kernel/recount")
    for name in sorted(os.listdir(src)):
        if "kunit" not in name or not name.endswith(".c"):
            continue
        with open(os.path.join(src, name)) as f:
            text = f.read()
        arrays = {}
        for m in re.finditer(r"struct kunit_case\s+(\w+)\s*\[\]\s*=\s*\{(.*?)\};", text, re.S):
            arrays[m.group(1)] = re.findall(r"KUNIT_CASE\w*\(\s*(\w+)", m.group(2))
        for m in re.finditer(r"struct kunit_suite\s+\w+\s*=\s*\{(.*?)\};", text, re.S):
            suite = re.search(r'\.name\s*=\s*"([^"]+)"', m.group(1))
            cases = re.search(r"\.test_cases\s*=\s*(\w+)", m.group(1))
            if suite and cases:
                suites[suite.group(1)] = arrays.get(cases.group(1), [])
    return suites


def read_skips(path, arch):
    """(test name pattern, reason regex) of the skips path declares for arch."""
    base = arch.split("-")[0]
    skips = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split(None, 2)
            if len(fields) < 3:
                raise ValueError(f"{path}: not '<arch> <test> <reason regex>': {line!r}")
            re.compile(fields[2])
            if fields[0] in (base, "*"):
                skips.append((fields[1], fields[2]))
    return skips


def selftests(rep, lines, expected):
    seen = set()
    diagnostics = []
    current = None

    def unfinished(why):
        rep.add("FAIL", current["name"], why, diagnostics)

    for line in lines:
        m = BEGIN.search(line)
        if m:
            if current is not None:
                unfinished("did not finish (no END marker before the next program)")
            current = {"name": m.group(1), "plan": None, "results": 0, "failed": 0}
            diagnostics = []
            seen.add(current["name"])
            continue
        m = END.search(line)
        if m:
            if current is None or m.group(1) != current["name"]:
                rep.add("FAIL", m.group(1), "END marker without its BEGIN")
                if current is not None:
                    unfinished("did not finish (another program's END marker)")
                current = None
                continue
            prog, rc = m.group(1), m.group(2)
            if rc is None or not re.fullmatch(r"-?\d+", rc):
                rep.add("FAIL", prog, f"unreadable END marker: {line!r}", diagnostics)
            elif current["plan"] is None:
                if int(rc) == KSFT_SKIP:
                    rep.add("SKIP", prog, "the whole program skipped (exit status 4)")
                else:
                    rep.add("FAIL", prog, f"no TAP plan (exit status {rc})", diagnostics)
            elif current["plan"] == 0 and int(rc) in (0, KSFT_SKIP):
                rep.add("SKIP", prog, "the program planned no test (1..0)")
            elif current["results"] != current["plan"]:
                rep.add("FAIL", prog, f"ran {current['results']} of "
                        f"{current['plan']} tests (exit status {rc})", diagnostics)
            elif int(rc) not in (0, KSFT_SKIP) and not current["failed"]:
                rep.add("FAIL", prog, f"exit status {rc} after all its tests passed "
                        "(crashed or failed at its end)", diagnostics)
            current = None
            continue
        if current is None:
            continue
        if re.match(r"^1\.\.\d+$", line) and current["plan"] is None:
            current["plan"] = int(line[3:])
            continue
        if RUN.match(line):
            diagnostics = []
        if line.startswith("#"):
            diagnostics.append(line)
            continue
        m = TAP.match(line)
        if m:
            status, why = status_of(m.group(1), m.group(4))
            rep.add(status, f"{current['name']}/{m.group(3)}", why, diagnostics)
            current["results"] += 1
            current["failed"] += status == "FAIL"
            diagnostics = []
    if current is not None:
        unfinished("did not finish (guest crashed or timed out)")
    for prog in expected:
        if prog not in seen:
            rep.add("FAIL", prog, "did not run (not built, or the guest stopped before it)")


def kunit(rep, lines, suites):
    for suite, cases in suites.items():
        in_suite, planned, ran = False, None, set()
        for line in lines:
            text = STAMP.sub("", line)
            if text.strip() == f"# Subtest: {suite}":
                in_suite = True
                continue
            if not in_suite:
                continue
            m = re.match(r"^    1\.\.(\d+)$", text)
            if m:
                planned = int(m.group(1))
                continue
            m = KTAP_CASE.match(text)
            if m:
                status, why = status_of(m.group(1), m.group(4))
                rep.add(status, f"kunit/{m.group(3)}", why)
                ran.add(m.group(3))
                continue
            if TAP.match(text):
                break
        if not in_suite:
            rep.add("FAIL", f"kunit/{suite}", "the KUnit suite did not run")
            continue
        for case in cases:
            if case not in ran:
                rep.add("FAIL", f"kunit/{case}", "did not run")
        if planned is None or len(ran) != planned:
            rep.add("FAIL", f"kunit/{suite}", f"ran {len(ran)} of {planned} cases")


def report_of(lines, i):
    """The kernel's lines after lines[i], to the end of its report: CI shows
    them under the failure, where a serial log it does not keep is gone. A
    test's lines may come between them (REPORT_GAP in a row at most)."""
    report, gap = [], 0
    for line in lines[i + 1:]:
        if len(report) == MAX_DIAGNOSTICS - 1 or REPORT_END.search(line):
            break
        if KERNEL_LINE.match(line):
            report.append(line)
            gap = 0
        else:
            gap += 1
            if gap > REPORT_GAP:
                break
    return report


def kcsan_ignored():
    """The functions of harness/guest/kcsan-ignore."""
    with open(KCSAN_IGNORE) as f:
        return {w for line in f if not line.startswith("#") for w in line.split()}


def bad_line(line, ignored):
    """A line of a splat, but for a KCSAN data race naming an ignored function."""
    if not BAD.search(line):
        return False
    m = KCSAN_RACE.search(line)
    if not (m and ignored & set(m.groups())):
        return True
    # The console may have put another message on the same line.
    return bool(BAD.search(line[:m.start()] + line[m.end():]))


def kernel_log(rep, lines):
    """The kernel log must be clean, whatever the tests said."""
    ignored = kcsan_ignored()
    # Until the guest's init set KCSAN's filter; after, the filter missed it.
    filtered = 1 + max((i for i, l in enumerate(lines) if KCSAN_FILTERED.search(l)), default=-1)
    bad = [i for i, l in enumerate(lines) if bad_line(l, ignored if i < filtered else set())]
    if bad:
        rep.add("FAIL", "kernel-log", "; ".join(lines[i] for i in bad[:5]),
                report_of(lines, bad[0]))
    else:
        rep.add("PASS", "kernel-log")


def taint(rep, lines):
    values = [int(m.group(1)) for m in map(TAINTED.search, lines) if m]
    if not values:
        rep.add("FAIL", "taint", "the guest did not report /proc/sys/kernel/tainted")
        return
    bad = [why for bit, why in BAD_TAINT.items() if values[-1] & (1 << bit)]
    if bad:
        rep.add("FAIL", "taint", f"the kernel is tainted {values[-1]}: {', '.join(bad)}")
    else:
        rep.add("PASS", "taint")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--kernel-log":
        rep = Report(sys.argv[2], [])
        try:
            with open(sys.argv[3], errors="replace") as f:
                kernel_log(rep, [l.rstrip("\r\n") for l in f])
        except Exception as e:  # pylint: disable=broad-except
            rep.add("FAIL", "kernel-log", f"cannot read the log: {type(e).__name__}: {e}")
        c = rep.counts
        print(f"RESULTS {c['PASS']} {c['FAIL']} {c['SKIP']}")
        sys.exit(1 if c["FAIL"] else 0)
    if len(sys.argv) not in (4, 5):
        raise SystemExit(__doc__.split("\n\n")[1])
    arch, log, tree = sys.argv[1:4]
    skips_file = sys.argv[4] if len(sys.argv) > 4 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected-skips")
    rep = Report(arch, [])
    try:
        rep.skips = read_skips(skips_file, arch)
        with open(log, errors="replace") as f:
            lines = [l.rstrip("\r\n") for l in f]
        expected = make_variable(os.path.join(tree, SELFTESTS, "Makefile"), "TEST_GEN_PROGS")
        if not expected:
            raise ValueError(f"no TEST_GEN_PROGS in {SELFTESTS}/Makefile")
        suites = kunit_cases(tree)
        if not suites:
            raise ValueError("no KUnit suite in kernel/recount")
        selftests(rep, lines, expected)
        kunit(rep, lines, suites)

        kernel_log(rep, lines)
        if any(EXIT.search(l) for l in lines):
            taint(rep, lines)
        else:
            rep.add("FAIL", "guest", "init did not finish (crash, panic or timeout)")
    except Exception as e:  # pylint: disable=broad-except
        rep.add("FAIL", "results", f"cannot read the run: {type(e).__name__}: {e}")

    c = rep.counts
    print(f"RESULTS {c['PASS']} {c['FAIL']} {c['SKIP']}")
    sys.exit(1 if c["FAIL"] else 0)


if __name__ == "__main__":
    main()
