# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the devmem lab scripts (sourced, not executed).

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$LAB_DIR/../.." && pwd)
PATCH_DIR=$REPO_DIR/kernel-patches
# Everything big lives outside the repository.
CACHE_DIR=${DEVMEMTOP_CACHE:-/var/cache/devmemtop}
# git identity used for the scratch kernel repos only (never the project repo)
GIT_ID=(-c user.name=devmemtop-lab -c user.email=lab@devmemtop.invalid
	-c advice.detachedHead=false -c gc.auto=0)

log() { printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { printf 'lab: error: %s\n' "$*" >&2; exit 1; }

# Reads kernel-patches/BASE into BASE_PKG, BASE_DEBVER, BASE_KVER.
read_base() {
	local line
	line=$(grep -v '^#' "$PATCH_DIR/BASE" | grep -m1 .) ||
		die "no base line in $PATCH_DIR/BASE"
	read -r BASE_PKG BASE_DEBVER BASE_KVER <<<"$line"
	[ -n "$BASE_KVER" ] || die "malformed $PATCH_DIR/BASE: '$line'"
	SRC_REPO=$CACHE_DIR/src/linux-$BASE_KVER
	SRC_TARBALL=/usr/src/$BASE_PKG.tar.xz
}

# The installed Debian source package must be exactly the pinned one.
check_base_installed() {
	local have
	have=$(dpkg-query -W -f='${Version}' "$BASE_PKG" 2>/dev/null) ||
		die "$BASE_PKG is not installed (apt-get install $BASE_PKG)"
	[ "$have" = "$BASE_DEBVER" ] ||
		die "installed $BASE_PKG is $have, kernel-patches/BASE pins $BASE_DEBVER; update BASE and re-check the patches, or install the pinned version"
	[ -f "$SRC_TARBALL" ] || die "$SRC_TARBALL missing (reinstall $BASE_PKG)"
}

# A git repo of the pristine source with tag "base", made once.
ensure_src_repo() {
	local mk tmp
	if git -C "$SRC_REPO" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
		mk=$(git -C "$SRC_REPO" show base:Makefile | sed -n '2,4s/^[A-Z]* = //p' | paste -sd.)
		[ "$mk" = "$BASE_KVER" ] ||
			die "$SRC_REPO is $mk, expected $BASE_KVER; remove it to re-extract"
		return 0
	fi
	log "extracting $SRC_TARBALL into $SRC_REPO (once)"
	tmp=$SRC_REPO.tmp
	rm -rf "$tmp" && mkdir -p "$tmp" || die "cannot create $tmp"
	tar -xJf "$SRC_TARBALL" -C "$tmp" --strip-components=1 ||
		die "extracting $SRC_TARBALL failed"
	mk=$(sed -n '2,4s/^[A-Z]* = //p' "$tmp/Makefile" | paste -sd.)
	[ "$mk" = "$BASE_KVER" ] ||
		die "$SRC_TARBALL contains kernel $mk, kernel-patches/BASE pins $BASE_KVER"
	(cd "$tmp" && git init -q && git "${GIT_ID[@]}" add -A -f . &&
	 git "${GIT_ID[@]}" commit -q -m "$BASE_PKG $BASE_DEBVER (pristine)" &&
	 git tag base) || die "creating the base git repo failed"
	rm -rf "$SRC_REPO" && mv "$tmp" "$SRC_REPO"
}

# Patch files of the series, in order. $1 = "baseline" or "patched".
# baseline = every patch not marked "patched-only" in kernel-patches/series.
series_patches() {
	local flavor=$1 name tag
	[ -f "$PATCH_DIR/series" ] || die "missing $PATCH_DIR/series"
	while read -r name tag; do
		case $name in ''|'#'*) continue ;; esac
		[ -f "$PATCH_DIR/$name" ] || die "series lists $name, not found in $PATCH_DIR"
		case $flavor in
		stock) ;;
		baseline) [ "$tag" = patched-only ] || echo "$PATCH_DIR/$name" ;;
		patched) echo "$PATCH_DIR/$name" ;;
		*) die "unknown kernel flavor '$flavor' (stock|baseline|patched)" ;;
		esac
	done <"$PATCH_DIR/series"
}
