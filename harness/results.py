#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read the serial log of a guest test run and report every test in it.

Prints one line per test (PASS/FAIL/SKIP <arch>/<program>/<test>), a failed
one followed by its diagnostics (the test's "# " lines, indented), and a last
line "RESULTS <passed> <failed> <skipped>". A test program that did not run
to its end, ran fewer tests than it planned, or is missing, counts as failed;
so do the KUnit suite and the kernel log (WARNING, BUG, lockdep, ...).
"""
import os
import re
import sys

BAD = re.compile(r"WARNING:|BUG:|Oops|Kernel panic|general protection fault|"
                 r"possible circular locking|possible recursive locking|"
                 r"inconsistent lock state|DEBUG_LOCKS_WARN_ON|"
                 r"lockdep is turned off|KASAN|UBSAN|ODEBUG:|"
                 r"rcu: INFO|RCU stall|self-detected stall|"
                 r"unreferenced object|suspected memory leak|Call Trace:")
STAMP = re.compile(r"^\[\s*\d+\.\d+\] ")
TAP = re.compile(r"^(ok|not ok) (\d+) (\S+)(.*)$")
KTAP_CASE = re.compile(r"^    (ok|not ok) (\d+) (\S+)(.*)$")
# kselftest_harness.h: a test starts with "#  RUN", its diagnostics are "# ".
RUN = re.compile(r"^#\s+RUN\s")
MAX_DIAGNOSTICS = 30


class Report:
    def __init__(self, arch):
        self.arch = arch
        self.counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    def add(self, status, name, detail="", diagnostics=()):
        self.counts[status] += 1
        line = f"{status} {self.arch}/{name}"
        if detail:
            line += f": {detail}"
        print(line)
        if status == "FAIL":
            for d in diagnostics[-MAX_DIAGNOSTICS:]:
                print("    " + d)


def status_of(result, rest):
    if "# SKIP" in rest:
        return "SKIP", rest.split("# SKIP", 1)[1].strip()
    return ("PASS" if result == "ok" else "FAIL"), ""


def main():
    arch, log, expected_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    rep = Report(arch)
    with open(log, errors="replace") as f:
        lines = [l.rstrip("\r\n") for l in f]

    # The test programs are the *_test ones (run-tests.sh runs those);
    # helpers such as getdelays sit beside them.
    expected = sorted(p for p in os.listdir(expected_dir)
                      if os.access(os.path.join(expected_dir, p), os.X_OK)
                      and p.endswith("_test"))
    # Selftests: TAP between RECOUNT-TEST-BEGIN/END markers.
    seen = set()
    diagnostics = []
    current = None
    for line in lines:
        if line.startswith("RECOUNT-TEST-BEGIN "):
            current = {"name": line.split()[1], "plan": None, "results": 0}
            diagnostics = []
            seen.add(current["name"])
            continue
        if current is None:
            continue
        if line.startswith("RECOUNT-TEST-END "):
            parts = line.split()
            prog, rc = parts[1], parts[2]
            if current["plan"] is None:
                rep.add("FAIL", prog, f"no TAP plan (exit status {rc})", diagnostics)
            elif current["results"] != current["plan"]:
                rep.add("FAIL", prog, f"ran {current['results']} of "
                        f"{current['plan']} tests (exit status {rc})", diagnostics)
            current = None
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
            diagnostics = []
    if current is not None:
        rep.add("FAIL", current["name"], "did not finish (guest crashed or timed out)",
                diagnostics)
    for prog in expected:
        if prog not in seen:
            rep.add("FAIL", prog, "did not run")

    # KUnit: the recount suite's cases, printed by the kernel at boot.
    in_suite, planned, ran = False, None, 0
    for line in lines:
        text = STAMP.sub("", line)
        if text.strip() == "# Subtest: recount":
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
            ran += 1
            continue
        if TAP.match(text):
            break
    if not in_suite:
        rep.add("FAIL", "kunit", "the recount KUnit suite did not run")
    elif planned is None or ran != planned:
        rep.add("FAIL", "kunit", f"ran {ran} of {planned} cases")

    # The kernel log must be clean, whatever the tests said.
    bad = [l for l in lines if BAD.search(l)]
    if bad:
        rep.add("FAIL", "kernel-log", "; ".join(bad[:5]))
    else:
        rep.add("PASS", "kernel-log")
    if not any(l.startswith("RECOUNT-EXIT: ") for l in lines):
        rep.add("FAIL", "guest", "init did not finish (crash, panic or timeout)")

    c = rep.counts
    print(f"RESULTS {c['PASS']} {c['FAIL']} {c['SKIP']}")


if __name__ == "__main__":
    main()
