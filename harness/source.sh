#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Extract Debian's linux-source-6.12 once into the cache, as a git repository
# whose single commit (tag "pristine") is the untouched source. Every prepared
# tree and every exported series is based on it.
. "$(dirname "$0")/lib.sh"

ver=$(source_version)
dir=$(pristine_dir)
deb=$(dpkg-query -W -f '${Version}' linux-source-6.12)

if [ -d "$dir/.git" ] && git -C "$dir" rev-parse -q --verify pristine >/dev/null; then
	echo "$dir"
	exit 0
fi

msg "extracting Linux $ver (Debian linux-source-6.12 $deb) into $dir"
mkdir -p "$CACHE"
tmp=$dir.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
tar -C "$tmp" --strip-components=1 -xf "$SOURCE_TARBALL"
sub=$(sed -n 's/^SUBLEVEL = //p' "$tmp/Makefile")
[ "6.12.$sub" = "$ver" ] || die "tarball holds 6.12.$sub, package says $ver"

msg "recording the pristine tree in git"
(
	cd "$tmp"
	git init -q
	git config user.name "recount harness"
	git config user.email "recount@localhost"
	git config gc.auto 0
	# The tarball ships a few files .gitignore would hide; keep them all.
	git add -A -f .
	GIT_AUTHOR_DATE='1970-01-01T00:00:00Z' GIT_COMMITTER_DATE='1970-01-01T00:00:00Z' \
		git commit -q -m "Linux $ver (Debian linux-source-6.12 $deb)"
	git tag pristine
)
mv "$tmp" "$dir"
echo "$dir"
