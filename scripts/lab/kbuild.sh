#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kbuild.sh FLAVOR: build the lab kernel for FLAVOR and print its build dir.
#
#   stock     the pinned Debian source, no patches
#   baseline  kernel-patches/series without the "patched-only" entries
#   patched   the whole series
#
# Build dirs live in $DEVMEMTOP_CACHE (default /var/cache/devmemtop) as
# kbuild-<kver>-<key>, key = hash(BASE, patch contents in order, lab.config,
# recipe). A dir that has .lab-stamp is complete and is reused as is. A new
# dir starts as a timestamp-preserving copy of the finished dir whose series
# is closest to ours (same base; config, then series prefix), then git moves
# the tree to our commit, which rewrites only the files that differ: make
# rebuilds just those. Without such a dir it is a cold build (~19 min on 2
# cores).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RECIPE=1	# bump when the build steps below change the result
KEEP=${DEVMEMTOP_KBUILD_KEEP:-4}

usage() { echo "usage: $0 stock|baseline|patched" >&2; exit 2; }
[ $# -eq 1 ] || usage
FLAVOR=$1
case $FLAVOR in stock|baseline|patched) ;; *) usage ;; esac

read_base
check_base_installed
for t in gcc make flex bison bc pahole git; do
	command -v $t >/dev/null || die "$t not found (scripts/lab/deps.sh installs it)"
done
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/kbuild.lock"
flock 9	# one kernel build at a time: 2 cores
ensure_src_repo

mapfile -t PATCHES < <(series_patches "$FLAVOR")
CFG=$PATCH_DIR/lab.config
cfg_hash=$(sha256sum "$CFG" | cut -c1-16)
phashes=()
for p in "${PATCHES[@]}"; do
	phashes+=("$(sha256sum "$p" | cut -c1-16)")
done
key=$( { echo "$BASE_PKG $BASE_DEBVER recipe=$RECIPE cfg=$cfg_hash"
	 printf '%s\n' "${phashes[@]}"; } | sha256sum | cut -c1-16)
OUT=$CACHE_DIR/kbuild-$BASE_KVER-$key

if [ -f "$OUT/.lab-stamp" ] && [ -f "$OUT/arch/x86/boot/bzImage" ]; then
	log "$FLAVOR kernel cached: $OUT"
	touch "$OUT/.lab-stamp"	# most recently used
	echo "$OUT"
	exit 0
fi

# Pick a seed of the same base: same config first, then the longest common
# series prefix, then the newest. A different config is still a valid seed:
# kbuild rebuilds exactly the objects that use a changed CONFIG_ symbol.
seed= best=-1
for d in "$CACHE_DIR"/kbuild-"$BASE_KVER"-*; do
	[ -f "$d/.lab-stamp" ] || continue
	mapfile -t sp < <(sed -n 's/^patch=//p' "$d/.lab-stamp")
	n=0
	while [ $n -lt ${#sp[@]} ] && [ $n -lt ${#phashes[@]} ] &&
	      [ "${sp[$n]}" = "${phashes[$n]}" ]; do
		n=$((n + 1))
	done
	! grep -qx "cfg=$cfg_hash" "$d/.lab-stamp" || n=$((n + 10000))
	if [ $n -gt $best ] || { [ $n -eq $best ] && [ "$d/.lab-stamp" -nt "$seed/.lab-stamp" ]; }; then
		best=$n seed=$d
	fi
done

TMP=$OUT.tmp
rm -rf "$TMP"
if [ -n "$seed" ]; then
	log "$FLAVOR: incremental build from $(basename "$seed") (copy with timestamps)"
	cp -a --reflink=auto "$seed" "$TMP"
	rm -f "$TMP/.lab-stamp"
	git -C "$TMP" "${GIT_ID[@]}" am --abort >/dev/null 2>&1 || true
	git -C "$TMP" "${GIT_ID[@]}" checkout -q -f --detach base
else
	log "$FLAVOR: cold build (no finished tree with this base+config yet)"
	git "${GIT_ID[@]}" clone -q --no-checkout "$SRC_REPO" "$TMP"
	git -C "$TMP" "${GIT_ID[@]}" checkout -q --detach base
fi
for p in "${PATCHES[@]}"; do
	git -C "$TMP" "${GIT_ID[@]}" am -q "$p" ||
		{ git -C "$TMP" am --abort >/dev/null 2>&1 || true
		  die "$(basename "$p") does not apply on top of the previous patches"; }
done

cd "$TMP"
scripts/kconfig/merge_config.sh -m -O . arch/x86/configs/x86_64_defconfig "$CFG" \
	>config.log 2>&1 || { tail -20 config.log >&2; die "merge_config.sh failed"; }
make olddefconfig >>config.log 2>&1 || { tail -20 config.log >&2; die "olddefconfig failed"; }
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
done <"$CFG"
[ ${#bad[@]} -eq 0 ] || die "lab.config not honoured by Kconfig: ${bad[*]} (see $TMP/config.log)"

log "$FLAVOR: make -j$(nproc) bzImage (log: $TMP/build.log)"
t0=$(date +%s)
make -j"$(nproc)" bzImage >build.log 2>&1 ||
	{ grep -E 'error|Error' build.log | head -20 >&2; die "kernel build failed, see $TMP/build.log"; }
secs=$(( $(date +%s) - t0 ))
log "$FLAVOR: built in ${secs}s"
{
	echo "key=$key"
	echo "cfg=$cfg_hash"
	echo "base=$BASE_PKG $BASE_DEBVER"
	echo "seed=${seed:+$(basename "$seed")}"
	echo "build_seconds=$secs"
	echo "head=$(git log -1 --format=%h\ %s)"
	for h in "${phashes[@]}"; do echo "patch=$h"; done
} >.lab-stamp
cd /
mv "$TMP" "$OUT"

# Keep the KEEP most recently used trees (each is several GiB).
ls -1dt "$CACHE_DIR"/kbuild-*/.lab-stamp 2>/dev/null | tail -n +$((KEEP + 1)) |
	while read -r s; do
		d=$(dirname "$s")
		log "pruning old kernel tree $(basename "$d")"
		rm -rf "$d"
	done
echo "$OUT"
