#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check-series: build the kernel at every patch of the series, in a
# worktree of out/linux with its own object directory, so that each patch
# is known to build on its own. Reports whether CONFIG_RECOUNT was on at
# each step (it becomes selectable once an architecture calls the hooks).
. "$(dirname "$0")/lib.sh"

"$HARNESS/prepare.sh"
wt=$OUT/check-series/linux
obj=$OUT/check-series/$ARCH
if [ ! -d "$wt" ]; then
	msg "creating the worktree ${wt#$TOP/}"
	git -C "$TREE" worktree add -q --detach "$wt" pristine
fi
mkdir -p "$obj"
frag=$obj/kernel.fragment
cat "$HARNESS/config/base.config" "$HARNESS/config/$ARCH.config" \
    "$TREE/tools/testing/selftests/recount/config" > "$frag"

smake() {
	make -C "$wt" O="$obj" ARCH="$KARCH" CROSS_COMPILE="$CROSS" \
		CC="ccache ${CROSS}gcc" HOSTCC="ccache gcc" -j"$(nproc)" "$@" >> "$obj/build.log" 2>&1
}

mapfile -t commits < <(git -C "$TREE" rev-list --reverse pristine..recount)
k=0
for c in "${commits[@]}"; do
	k=$((k + 1))
	subject=$(git -C "$TREE" log -1 --format=%s "$c")
	git -C "$wt" checkout -q --detach "$c"
	: > "$obj/build.log"
	start=$SECONDS
	if ! smake allnoconfig KCONFIG_ALLCONFIG="$frag" || ! smake "$(basename "$KIMAGE")"; then
		tail -30 "$obj/build.log" >&2
		die "patch $k ($subject) does not build for $ARCH"
	fi
	on=$(grep -q '^CONFIG_RECOUNT=y' "$obj/.config" && echo "RECOUNT=y" || echo "RECOUNT=n")
	printf 'ok %2d %-9s %4ds  %s\n' "$k" "$on" $((SECONDS - start)) "$subject"
done
msg "every patch of the series builds for $ARCH"
