#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kbuild.sh FLAVOR [VARIANT]: build the lab kernel for FLAVOR and print the
# dir that holds its bzImage.
#
#   stock     the pinned Debian source, no patches
#   baseline  kernel-patches/series without the "patched-only" entries
#   patched   the whole series
#   VARIANT   an extra config fragment, kernel-patches/lab-VARIANT.config,
#             merged last (e.g. "lockdep"), built in a work tree of its own,
#             kbuild-work-VARIANT/, so that switching between a variant and
#             the plain kernels does not rebuild everything each time
#
# Results live in $DEVMEMTOP_CACHE (default /var/cache/devmemtop) as
# kbuild-<kver>-<key>/ (bzImage, .config, System.map, build.log, .lab-stamp),
# key = hash(BASE, patch contents in order, lab.config, recipe): a result
# with .lab-stamp is reused as is. All builds happen in ONE tree at a fixed
# path, kbuild-work/: kbuild and tools/ (objtool, resolve_btfids) record
# absolute paths, and every object depends on the objtool binary, so a
# copied or renamed tree rebuilds from scratch. git moves kbuild-work to the
# wanted tree in one checkout, which rewrites only the files that differ, so
# make rebuilds only those (and kbuild tracks config changes symbol by
# symbol); with ccache (CCACHE_DIR defaults to $DEVMEMTOP_CACHE/ccache) an
# object already compiled once, in either flavor, is a cache hit: switching
# between baseline and patched costs minutes, the first build ~20 min on 2
# cores.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RECIPE=2	# bump when the build steps below change the result
KEEP=${DEVMEMTOP_KBUILD_KEEP:-8}

usage() { echo "usage: $0 stock|baseline|patched [VARIANT]" >&2; exit 2; }
[ $# -eq 1 ] || [ $# -eq 2 ] || usage
FLAVOR=$1 VARIANT=${2:-}
case $FLAVOR in stock|baseline|patched) ;; *) usage ;; esac
[[ $VARIANT =~ ^[a-z0-9]*$ ]] || usage
[ -z "$VARIANT" ] || [ -f "$PATCH_DIR/lab-$VARIANT.config" ] ||
	die "no kernel-patches/lab-$VARIANT.config for variant '$VARIANT'"

read_base
check_base_installed
for t in gcc make flex bison bc pahole git; do
	command -v $t >/dev/null || die "$t not found (scripts/lab/deps.sh installs it)"
done
mapfile -t PATCHES < <(series_patches "$FLAVOR")
# lab.config for every kernel, plus lab-FLAVOR.config when it exists (the
# patched kernel's KUnit suites: their symbols exist only with its patches).
# Without a flavor fragment the hash is the one of lab.config alone.
CFGS=("$PATCH_DIR/lab.config")
[ ! -f "$PATCH_DIR/lab-$FLAVOR.config" ] || CFGS+=("$PATCH_DIR/lab-$FLAVOR.config")
[ -z "$VARIANT" ] || CFGS+=("$PATCH_DIR/lab-$VARIANT.config")
cfg_hash=$(cat "${CFGS[@]}" | sha256sum | cut -c1-16)
phashes=()
for p in "${PATCHES[@]}"; do
	phashes+=("$(sha256sum "$p" | cut -c1-16)")
done
key=$( { echo "$BASE_PKG $BASE_DEBVER${BASE_SHA256:+ $BASE_SHA256} recipe=$RECIPE cfg=$cfg_hash"
	 printf '%s\n' "${phashes[@]}"; } | sha256sum | cut -c1-16)
OUT=$CACHE_DIR/kbuild-$BASE_KVER-$key

# A finished result is published with one mv, so it can be reused without
# the lock: a warm run never waits for someone else's build.
cached() {
	[ -f "$OUT/.lab-stamp" ] && [ -f "$OUT/bzImage" ] || return 1
	log "$FLAVOR kernel cached: $OUT"
	touch "$OUT/.lab-stamp"	# most recently used
	echo "$OUT"
}
cached && exit 0

mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/kbuild.lock"
flock 9	# one kernel build at a time: 2 cores
cached && exit 0	# built by whoever held the lock
ensure_src_repo

# one work tree per series and variant (6.12's keeps its old name)
WORK=$CACHE_DIR/kbuild-work${VARIANT:+-$VARIANT}
[ "$LAB_SERIES" = 6.12 ] || WORK=$CACHE_DIR/kbuild-work-$BASE_KVER${VARIANT:+-$VARIANT}
if [ ! -d "$WORK/.git" ]; then
	log "$FLAVOR: cold build (new work tree $WORK)"
	BUILD_KIND=cold
	rm -rf "$WORK"
	git "${GIT_ID[@]}" clone -q --no-checkout "$SRC_REPO" "$WORK"
else
	log "$FLAVOR: incremental build in $WORK (was: $(git -C "$WORK" log -1 --format=%s))"
	BUILD_KIND=incremental
	git -C "$WORK" "${GIT_ID[@]}" am --abort >/dev/null 2>&1 || true
	git -C "$WORK" "${GIT_ID[@]}" fetch -q "$SRC_REPO" refs/tags/base:refs/tags/base 2>/dev/null || true
fi
# Apply the series to an index of its own, commit the result, then move the
# work tree to it in one checkout: git rewrites only the files that differ
# from what the tree has now, so a changed patch rebuilds what it touches,
# not everything the series touches (checking out base and applying again
# gave every patched file a new mtime: 0012's struct sock meant ~1,850
# objects for any change).
IDX=$(mktemp "$CACHE_DIR/kbuild-index.XXXXXX")
GIT_INDEX_FILE=$IDX git -C "$WORK" read-tree base
for p in "${PATCHES[@]}"; do
	GIT_INDEX_FILE=$IDX git -C "$WORK" apply --cached "$p" 2>>"$IDX.err" ||
		{ err=$(head -1 "$IDX.err"); rm -f "$IDX" "$IDX.err"
		  die "$(basename "$p") does not apply on top of the previous patches: $err"; }
done
tree=$(GIT_INDEX_FILE=$IDX git -C "$WORK" write-tree)
rm -f "$IDX" "$IDX.err"
target=$( { echo "lab $FLAVOR${VARIANT:+ $VARIANT}: ${#PATCHES[@]} patches"; echo
	    basename -a "${PATCHES[@]}" 2>/dev/null; } |
	  git -C "$WORK" "${GIT_ID[@]}" commit-tree "$tree" -p base)
git -C "$WORK" "${GIT_ID[@]}" checkout -q -f --detach "$target"

cd "$WORK"
# ccache when it is there (scripts/install-deps.sh --lab installs it): the
# compiler's command line is in every object's .cmd, so turning it on or off
# rebuilds everything once
MK=(make)
if command -v ccache >/dev/null; then
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE_DIR/ccache}
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}
	MK+=(CC="ccache gcc")
fi
scripts/kconfig/merge_config.sh -m -O . arch/x86/configs/x86_64_defconfig "${CFGS[@]}" \
	>config.log 2>&1 || { tail -20 config.log >&2; die "merge_config.sh failed"; }
"${MK[@]}" olddefconfig >>config.log 2>&1 || { tail -20 config.log >&2; die "olddefconfig failed"; }
# Every line of the fragment must survive olddefconfig (a dependency that
# is off silently drops a symbol otherwise).
bad=()
while read -r line; do
	case $line in
	CONFIG_*=*) grep -qxF "$line" .config || bad+=("$line") ;;
	'# CONFIG_'*' is not set')
		sym=${line#\# }; sym=${sym%% *}
		! grep -q "^$sym=" .config || bad+=("$line") ;;
	esac
done < <(cat "${CFGS[@]}")
[ ${#bad[@]} -eq 0 ] || die "$(basename -a "${CFGS[@]}" | paste -sd+) not honoured by Kconfig: ${bad[*]} (see $WORK/config.log)"

log "$FLAVOR: make -j$(nproc) bzImage (log: $WORK/build.log)"
t0=$(date +%s)
# A cold build is ~20 min of silence otherwise: say where it is every
# KBUILD_PROGRESS_SECS (60), counting the objects kbuild has built so far.
"${MK[@]}" -j"$(nproc)" bzImage >build.log 2>&1 &
mk=$!
every=${KBUILD_PROGRESS_SECS:-60}
next=$((t0 + every))
while kill -0 "$mk" 2>/dev/null; do
	sleep 1
	[ "$(date +%s)" -ge "$next" ] || continue
	next=$((next + every))
	log "$FLAVOR: building, $(( $(date +%s) - t0 ))s, $(grep -cE '^  (CC|AS|AR|LD)' build.log || true) objects so far"
done
wait "$mk" ||
	{ grep -E 'error|Error' build.log | head -20 >&2; die "kernel build failed, see $WORK/build.log"; }
secs=$(( $(date +%s) - t0 ))
log "$FLAVOR: built in ${secs}s"
TMP=$OUT.tmp
rm -rf "$TMP" && mkdir -p "$TMP"
cp arch/x86/boot/bzImage .config System.map build.log config.log "$TMP/"
{
	echo "key=$key"
	echo "cfg=$cfg_hash"
	echo "base=$BASE_PKG $BASE_DEBVER"
	echo "flavor=$FLAVOR"
	echo "variant=${VARIANT:-none}"
	echo "build_seconds=$secs"
	echo "build=$BUILD_KIND"	# cold: from an empty work tree
	echo "head=$(git log -1 --format=%h\ %s)"
	for h in "${phashes[@]}"; do echo "patch=$h"; done
} >"$TMP/.lab-stamp"
cd /
rm -rf "$OUT"
mv "$TMP" "$OUT"

# Keep the KEEP most recently used results (a few MiB each).
ls -1dt "$CACHE_DIR"/kbuild-"$BASE_KVER"-*/.lab-stamp 2>/dev/null | tail -n +$((KEEP + 1)) |
	while read -r s; do
		rm -rf "$(dirname "$s")"
	done
echo "$OUT"
