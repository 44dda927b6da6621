# SPDX-License-Identifier: GPL-2.0
# Common settings for recount's host-side harness. Sourced, not run.
#
# Layout:
#   $CACHE/linux-<version>/   pristine Debian linux-source-6.12, a git repo, tag "pristine"
#   $CACHE/ccache/            compiler cache shared by every checkout
#   $CACHE/arm64-root/        arm64 busybox, unpacked from Debian's package
#   out/linux/                the prepared tree: pristine + the series, one commit per patch
#   out/<arch>/build/         kernel object directory (kept between runs)
#   out/<arch>/               kernel image, initramfs, serial logs

set -euo pipefail

# Debian's tools first: its python3 is the one with the modules deps.sh
# installs (yaml, jsonschema for YNL; ply, git for checkpatch's SPDX check).
export PATH=/usr/bin:/bin:$PATH

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HARNESS=$TOP/harness
CACHE=${RECOUNT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recount}
OUT=$TOP/out
TREE=${RECOUNT_TREE:-$OUT/linux}
PATCHES=$TOP/patches
SOURCE_TARBALL=/usr/src/linux-source-6.12.tar.xz

ARCH=${ARCH:-x86_64}
case "$ARCH" in
x86_64)
	KARCH=x86_64
	CROSS=
	KIMAGE=arch/x86/boot/bzImage
	;;
arm64)
	KARCH=arm64
	CROSS=aarch64-linux-gnu-
	KIMAGE=arch/arm64/boot/Image
	;;
*)
	echo "harness: ARCH must be x86_64 or arm64, not '$ARCH'" >&2
	exit 2
	;;
esac
# DEBUG=1 builds and boots a debug kernel (harness/config/debug.config),
# KCSAN=1 one with the data race detector (harness/config/kcsan.config), each
# in a directory of its own. KCSAN and KASAN do not go together.
VARIANT=
[ -z "${DEBUG:-}" ] || VARIANT=debug
if [ -n "${KCSAN:-}" ]; then
	[ -z "$VARIANT" ] || { echo "harness: DEBUG=1 and KCSAN=1 are separate kernels: pick one" >&2; exit 2; }
	VARIANT=kcsan
fi
AOUT=$OUT/$ARCH${VARIANT:+-$VARIANT}
BUILD=$AOUT/build

msg() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'harness: error: %s\n' "$*" >&2; exit 1; }

# The kernel version of the Debian source package, e.g. 6.12.117.
source_version() {
	[ -f "$SOURCE_TARBALL" ] || die "$SOURCE_TARBALL is missing (apt-get install linux-source-6.12)"
	local deb
	deb=$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null) ||
		die "linux-source-6.12 is not installed"
	# Debian versions look like 6.12.117-1~deb12u1: the upstream part is the kernel version.
	echo "${deb%%-*}"
}

pristine_dir() { echo "$CACHE/linux-$(source_version)"; }

# The files the series adds to the kernel tree, as listed in patches/series.
series_new_files() {
	sed -e 's/#.*//' "$PATCHES/series" | awk 'NF && /^[ \t]/ { print $1 }'
}

# The patch files of the series, in order.
series_patches() {
	sed -e 's/#.*//' "$PATCHES/series" | awk 'NF && /^[^ \t]/ { print $1 }'
}

kmake() {
	make -C "$TREE" O="$BUILD" ARCH="$KARCH" CROSS_COMPILE="$CROSS" \
		CC="ccache ${CROSS}gcc" HOSTCC="ccache gcc" \
		KBUILD_BUILD_TIMESTAMP='1970-01-01' KBUILD_BUILD_USER=recount \
		KBUILD_BUILD_HOST=harness -j"$(nproc)" "$@"
}

export CCACHE_DIR=$CACHE/ccache
export CCACHE_BASEDIR=$TOP
export CCACHE_NOHASHDIR=1
