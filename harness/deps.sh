#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what the harness needs from Debian, idempotently: nothing is
# downloaded when everything is already there.
. "$(dirname "$0")/lib.sh"

pkgs=(linux-source-6.12 make gcc bc flex bison libelf-dev libssl-dev cpio
      kmod rsync ccache git python3 python3-yaml python3-jsonschema perl
      python3-ply python3-git python3-docutils python3-prometheus-client
      groff-base bsdextrautils
      qemu-system-x86 qemu-system-arm busybox-static
      libnl-3-dev libnl-genl-3-dev
      gcc-aarch64-linux-gnu libc6-dev-arm64-cross
      libnl-3-dev:arm64 libnl-genl-3-dev:arm64)

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	msg "adding the arm64 architecture to dpkg (for libnl's arm64 static libraries)"
	$sudo dpkg --add-architecture arm64
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	msg "installing: ${missing[*]}"
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
fi

# busybox for arm64 guests: never install busybox-static:arm64, it would
# replace the host's /bin/busybox. Unpack it into the cache instead.
bb=$CACHE/arm64-root/bin/busybox
if [ ! -x "$bb" ]; then
	msg "fetching busybox-static:arm64 into $CACHE/arm64-root"
	mkdir -p "$CACHE/arm64-root"
	tmp=$(mktemp -d); chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -q busybox-static:arm64 >/dev/null) ||
		{ $sudo apt-get update -qq; (cd "$tmp" && apt-get download -q busybox-static:arm64 >/dev/null); }
	dpkg -x "$tmp"/busybox-static_*_arm64.deb "$CACHE/arm64-root"
	rm -rf "$tmp"
	[ -x "$bb" ] || die "busybox-static:arm64 did not unpack to $bb"
fi
