#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The inverse of prepare.sh: write the commits of out/linux (pristine..recount)
# back into this repository. Files a commit adds go to their kernel paths (as
# of the last commit); the commit message and the changes to files that
# already existed go to patches/NNNN-<subject>.patch; patches/series lists
# them in order.
. "$(dirname "$0")/lib.sh"

[ -d "$TREE/.git" ] || die "no prepared tree: run 'make prepare' first"
cd "$TREE"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "out/linux has uncommitted changes: commit them first"
[ "$(git symbolic-ref --short HEAD)" = recount ] || die "out/linux is not on branch recount"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/patches"

mapfile -t commits < <(git rev-list --reverse pristine..HEAD)
[ ${#commits[@]} -gt 0 ] || die "no commits between pristine and HEAD"

old_new_files=$(cd "$TOP" && series_new_files | sort)
{
	sed -n '1,/^$/p' "$PATCHES/series"
} > "$work/series"

k=0
for c in "${commits[@]}"; do
	k=$((k + 1))
	mapfile -t added < <(git diff --name-only --no-renames --diff-filter=A "$c^" "$c")
	spec=(.)
	for f in "${added[@]}"; do spec+=(":(exclude)$f"); done
	slug=$(git log -1 --format=%f "$c" | cut -c1-52)
	name=$(printf '%04d-%s.patch' "$k" "$slug")
	{
		git log -1 --format='From: %an <%ae>%nSubject: %s%n' "$c"
		git log -1 --format=%b "$c" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
		echo "---"
		if [ -n "$(git diff --name-only "$c^" "$c" -- "${spec[@]}")" ]; then
			git diff --stat=72 "$c^" "$c" -- "${spec[@]}"
			echo
			git diff "$c^" "$c" -- "${spec[@]}"
		fi
	} > "$work/patches/$name"
	echo "$name" >> "$work/series"
	for f in "${added[@]}"; do printf '\t%s\n' "$f" >> "$work/series"; done
done

# Files the series adds, as of HEAD.
mapfile -t new_files < <(git diff --name-only --no-renames --diff-filter=A pristine HEAD)
for f in "${new_files[@]}"; do
	mkdir -p "$TOP/$(dirname "$f")"
	git show "HEAD:$f" > "$TOP/$f.export.tmp"
	if [ "$(git ls-tree HEAD -- "$f" | cut -d' ' -f1)" = 100755 ]; then
		chmod 755 "$TOP/$f.export.tmp"
	else
		chmod 644 "$TOP/$f.export.tmp"
	fi
	if cmp -s "$TOP/$f.export.tmp" "$TOP/$f" && [ "$(stat -c %a "$TOP/$f.export.tmp")" = "$(stat -c %a "$TOP/$f")" ]; then
		rm "$TOP/$f.export.tmp"
	else
		mv "$TOP/$f.export.tmp" "$TOP/$f"
		echo "  updated $f"
	fi
done
# Files the series no longer adds.
for f in $(comm -23 <(echo "$old_new_files") <(printf '%s\n' "${new_files[@]}" | sort)); do
	rm -f "$TOP/$f"
	echo "  removed $f"
done

rm -f "$PATCHES"/[0-9][0-9][0-9][0-9]-*.patch
cp "$work"/patches/*.patch "$PATCHES/"
cp "$work/series" "$PATCHES/series"
git update-ref refs/recount/generated HEAD
msg "exported ${#commits[@]} patches to patches/ ($(git rev-parse --short HEAD))"
