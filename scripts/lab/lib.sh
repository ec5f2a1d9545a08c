# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the devmem lab scripts (sourced, not executed).

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$LAB_DIR/../.." && pwd)
# The kernel series the lab builds: kernel-patches/ itself is 6.12, the
# long-term kernel (Debian 13's); a newer base lives in a folder of its own,
# kernel-patches/<series>/ (BASE, series, lab.config, patches), chosen with
# DEVMEMTOP_LAB_SERIES=<series> (e.g. 7.3).
LAB_SERIES=${DEVMEMTOP_LAB_SERIES:-6.12}
case $LAB_SERIES in
6.12)	PATCH_DIR=$REPO_DIR/kernel-patches ;;
*[!0-9.]*|'')
	printf 'lab: error: DEVMEMTOP_LAB_SERIES=%s is not a series name like 7.3\n' "$LAB_SERIES" >&2
	exit 1 ;;
*)	PATCH_DIR=$REPO_DIR/kernel-patches/$LAB_SERIES
	[ -f "$PATCH_DIR/BASE" ] || {
		printf 'lab: error: no kernel-patches/%s/BASE (series: 6.12 %s)\n' "$LAB_SERIES" \
			"$(cd "$REPO_DIR/kernel-patches" && ls -d */ 2>/dev/null | tr -d / | paste -sd' ')" >&2
		exit 1; } ;;
esac
# Everything big lives outside the repository.
CACHE_DIR=${DEVMEMTOP_CACHE:-/var/cache/devmemtop}
# git identity used for the scratch kernel repos only (never the project repo)
GIT_ID=(-c user.name=devmemtop-lab -c user.email=lab@devmemtop.invalid
	-c advice.detachedHead=false -c gc.auto=0)

log() { printf '[lab %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { printf 'lab: error: %s\n' "$*" >&2; exit 1; }

# Reads the series' BASE into BASE_PKG, BASE_DEBVER, BASE_KVER, and the
# optional fields BASE_SUITE (the apt suite that serves it, when not one
# of the machine's own) and BASE_SHA256 (the source tarball's checksum).
read_base() {
	local line extra f
	line=$(grep -v '^#' "$PATCH_DIR/BASE" | grep -m1 .) ||
		die "no base line in $PATCH_DIR/BASE"
	read -r BASE_PKG BASE_DEBVER BASE_KVER extra <<<"$line"
	[ -n "$BASE_KVER" ] || die "malformed $PATCH_DIR/BASE: '$line'"
	BASE_SUITE= BASE_SHA256=
	for f in $extra; do
		case $f in
		suite=?*) BASE_SUITE=${f#suite=} ;;
		sha256=?*) BASE_SHA256=${f#sha256=} ;;
		*) die "malformed $PATCH_DIR/BASE: unknown field '$f'" ;;
		esac
	done
	SRC_REPO=$CACHE_DIR/src/linux-$BASE_KVER
	SRC_TARBALL=/usr/src/$BASE_PKG.tar.xz
}

# The installed Debian source package must be exactly the pinned one, and
# its tarball the pinned bytes when BASE names a checksum.
check_base_installed() {
	local have sum
	have=$(dpkg-query -W -f='${Version}' "$BASE_PKG" 2>/dev/null) ||
		die "$BASE_PKG is not installed (scripts/install-deps.sh --lab installs $BASE_PKG=$BASE_DEBVER)"
	[ "$have" = "$BASE_DEBVER" ] ||
		die "installed $BASE_PKG is $have, ${PATCH_DIR#$REPO_DIR/}/BASE pins $BASE_DEBVER; update BASE and re-check the patches, or install the pinned version"
	[ -f "$SRC_TARBALL" ] || die "$SRC_TARBALL missing (reinstall $BASE_PKG)"
	[ -n "$BASE_SHA256" ] || return 0
	sum=$(sha256sum "$SRC_TARBALL" | cut -d' ' -f1)
	[ "$sum" = "$BASE_SHA256" ] ||
		die "$SRC_TARBALL is sha256 $sum, ${PATCH_DIR#$REPO_DIR/}/BASE pins $BASE_SHA256"
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
	# one extraction at a time (kbuild.sh and the tool builds share the repo)
	mkdir -p "$CACHE_DIR/src" || die "cannot create $CACHE_DIR/src"
	exec 8>"$CACHE_DIR/src/linux-$BASE_KVER.lock"
	flock 8
	if git -C "$SRC_REPO" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
		exec 8>&-
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
	exec 8>&-
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
