#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make series: write the series as 'git format-patch' output (cover letter and
# one patch per logical change, new files included) into out/series/, check
# that it applies to the pristine tree and gives exactly the prepared tree,
# and run the tree's checkpatch.pl --strict over it. Any checkpatch error
# fails the target.
. "$(dirname "$0")/lib.sh"

"$HARNESS/prepare.sh"
ver=$(source_version)
dir=$OUT/series
rm -rf "$dir"
mkdir -p "$dir"
cd "$TREE"

git format-patch -q --cover-letter --base=pristine --thread --no-signature \
	-o "$dir" pristine..recount
cover=$(ls "$dir"/0000-cover-letter.patch)
python3 - "$cover" "$PATCHES/cover-letter" "$ver" <<'PY'
import sys
cover, src, ver = sys.argv[1:]
subject, _, blurb = open(src).read().partition("\n\n")
text = open(cover).read()
text = text.replace("*** SUBJECT HERE ***", subject.strip())
text = text.replace("*** BLURB HERE ***", blurb.strip().replace("@VERSION@", ver))
open(cover, "w").write(text)
PY

# git am's view of the series: each mail parsed and applied, in order, onto
# the pristine tree, must give exactly the tree the harness builds.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_INDEX_FILE=$work/index
git read-tree pristine
for p in "$dir"/[0-9][0-9][0-9][0-9]-*.patch; do
	[ "${p##*/}" = 0000-cover-letter.patch ] && continue
	git mailinfo "$work/msg" "$work/diff" < "$p" > /dev/null
	git apply --cached "$work/diff" || die "${p##*/} does not apply in sequence onto Linux $ver"
done
[ "$(git write-tree)" = "$(git rev-parse 'recount^{tree}')" ] ||
	die "the series in out/series does not reproduce out/linux"
unset GIT_INDEX_FILE

n=$(ls "$dir" | grep -c -v '^0000-')
msg "checkpatch.pl --strict over $n patches"
errors=0
# FILE_PATH_CHANGES asks whether MAINTAINERS needs updating for new files: the
# last patch of the series adds the MAINTAINERS entry for all of them.
for p in "$dir"/[0-9][0-9][0-9][0-9]-*.patch; do
	[ "${p##*/}" = 0000-cover-letter.patch ] && continue
	out=$(./scripts/checkpatch.pl --strict --quiet --show-types \
		--ignore FILE_PATH_CHANGES "$p" 2>&1) && continue
	echo "--- ${p##*/}"
	echo "$out"
	if grep -q '^ERROR:' <<<"$out"; then
		errors=$((errors + 1))
	fi
done
[ "$errors" = 0 ] || die "checkpatch found errors in $errors patches"
msg "out/series: cover letter + $n patches against Linux $ver, checkpatch --strict clean of errors"
