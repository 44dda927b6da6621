#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lay the series onto the pristine source: out/linux becomes a git tree with
# one commit per patch of patches/series (branch "recount", based on tag
# "pristine"). New files come from their kernel paths in this repository;
# changes to existing files from the patch files.
#
# Only files whose content changes are rewritten, so the object directories
# keep their incremental builds. A tree with changes that were not exported
# (see README, "Changing a hook") is never overwritten unless FORCE=1.
. "$(dirname "$0")/lib.sh"

if [ -n "${KEEP_TREE:-}" ] && [ -d "$TREE/.git" ]; then
	msg "KEEP_TREE: using out/linux as it is"
	exit 0
fi
pristine=$("$HARNESS/source.sh")
ver=$(source_version)

if [ -d "$TREE/.git" ] &&
   [ "$(git -C "$TREE" rev-parse pristine 2>/dev/null)" != "$(git -C "$pristine" rev-parse pristine)" ]; then
	msg "out/linux is based on another kernel version; preparing it again"
	rm -rf "$TREE"
fi
if [ ! -d "$TREE/.git" ]; then
	msg "checking out Linux $ver into out/linux"
	mkdir -p "$OUT"
	git clone -q --shared --no-checkout "$pristine" "$TREE"
	git -C "$TREE" config user.name "recount harness"
	git -C "$TREE" config user.email "recount@localhost"
	git -C "$TREE" config gc.auto 0
	git -C "$TREE" checkout -q -b recount pristine
	git -C "$TREE" update-ref refs/recount/generated pristine
fi

cd "$TREE"
if [ -z "${FORCE:-}" ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	git status --short --untracked-files=no | head -20 >&2
	die "out/linux has uncommitted changes. Commit them to the right patch and run
'make export' (README, \"Changing a hook\"), or run 'make prepare FORCE=1' to discard them."
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_INDEX_FILE=$work/index
git read-tree pristine

mapfile -t patches < <(series_patches)
n=${#patches[@]}

# new_files_of <k>: the new files patch k adds
new_files_of() {
	sed -e 's/#.*//' "$PATCHES/series" | awk -v k="$1" '
		NF && /^[^ \t]/ { i++ ; next }
		NF && i == k { print $1 }'
}

# content_at <file> <k>: the file as patch k adds it. Later patches of the
# series may change a file an earlier patch adds; undo their hunks, last first.
content_at() {
	local f=$1 k=$2 j dst=$work/content/$1
	mkdir -p "$(dirname "$dst")"
	cp "$TOP/$f" "$dst"
	for ((j = n; j > k; j--)); do
		if grep -q "^diff --git a/$f b/$f\$" "$PATCHES/${patches[j-1]}"; then
			(cd "$work/content" && git apply -R --include="$f" "$PATCHES/${patches[j-1]}") ||
				die "cannot undo ${patches[j-1]} on $f to recover its content in ${patches[k-1]}"
		fi
	done
	echo "$dst"
}

parent=$(git rev-parse pristine)
for ((k = 1; k <= n; k++)); do
	p=${patches[k-1]}
	[ -f "$PATCHES/$p" ] || die "patches/series names $p, which does not exist"
	git mailinfo -k "$work/msg" "$work/diff" < "$PATCHES/$p" > "$work/info"
	author=$(sed -n 's/^Author: //p' "$work/info")
	email=$(sed -n 's/^Email: //p' "$work/info")
	subject=$(sed -n 's/^Subject: //p' "$work/info")
	[ -n "$subject" ] || die "$p has no Subject: line"

	while read -r f; do
		[ -f "$TOP/$f" ] || die "patches/series: $p adds $f, which is not in the repository"
		src=$(content_at "$f" "$k")
		mode=100644
		[ -x "$TOP/$f" ] && mode=100755
		sha=$(git hash-object -w --path "$f" "$src")
		git update-index --add --cacheinfo "$mode,$sha,$f"
	done < <(new_files_of "$k")

	if grep -q "^diff --git " "$work/diff" && ! out=$(git apply --cached --whitespace=nowarn "$work/diff" 2>&1); then
		printf '%s\n' "$out" >&2
		die "patch $p does not apply to Linux $ver (see above)"
	fi

	{ echo "$subject"; echo; cat "$work/msg"; } > "$work/commitmsg"
	tree=$(git write-tree)
	parent=$(GIT_AUTHOR_NAME="$author" GIT_AUTHOR_EMAIL="$email" \
		GIT_COMMITTER_NAME="$author" GIT_COMMITTER_EMAIL="$email" \
		GIT_AUTHOR_DATE='1970-01-01T00:00:00Z' GIT_COMMITTER_DATE='1970-01-01T00:00:00Z' \
		git commit-tree "$tree" -p "$parent" -F "$work/commitmsg")
done
unset GIT_INDEX_FILE

head=$(git rev-parse HEAD)
generated=$(git rev-parse refs/recount/generated)
if [ "$head" != "$generated" ] && [ "$(git rev-parse "$head^{tree}")" != "$(git rev-parse "$parent^{tree}")" ] &&
   [ -z "${FORCE:-}" ]; then
	git log --oneline "$generated..$head" >&2 || true
	die "out/linux has commits that were not exported. Run 'make export' first,
or 'make prepare FORCE=1' to drop them (they stay in git reflog)."
fi

git checkout -q -f -B recount "$parent"
git update-ref refs/recount/generated "$parent"
msg "out/linux: Linux $ver + $n patches ($(git rev-parse --short HEAD))"
