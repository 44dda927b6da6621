# SPDX-License-Identifier: GPL-2.0
# recount: build, boot and test the recount patch series on Debian's Linux 6.12.
# Every target installs what it needs first (harness/deps.sh). See README.md.

ARCH ?= x86_64
export ARCH CMD GUEST_FILES FORCE KEEP_TREE TEST_ARCHS QUICK BENCH_KERNELS DEBUG KCSAN STRESS \
	STRESS_SECONDS

H := harness

.PHONY: all run test bench series prepare export build check-series deps clean help
all: help

help:
	@sed -n '/^```sh$$/,/^```$$/{/^```/d;p}' README.md | head -3

run: deps
	@$(H)/run.sh

test: deps
	@$(H)/test.sh

bench: deps
	@$(H)/bench.sh

series: deps
	@$(H)/series.sh

prepare: deps
	@$(H)/prepare.sh

export:
	@$(H)/export.sh

build: deps
	@$(H)/build.sh

check-series: deps
	@$(H)/check-series.sh

deps:
	@$(H)/deps.sh

clean:
	rm -rf out
