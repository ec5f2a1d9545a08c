#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kseries-kunit.sh: run the devmem freelist KUnit suite (kernel-patches
# 0006, net_devmem_freelist) on the patched series with kunit.py under
# qemu, and fail unless every test case passed.
#
# The source is a clean tree of its own ($DEVMEMTOP_CACHE/kseries-kunit-src,
# the pinned base + the whole series): kunit.py builds out of tree and
# kbuild refuses that from a source tree that was built in place. The
# build takes the lab's kbuild lock, so it never competes with a kernel
# build for the 2 cores. First run ~8 min (kernel build), reruns seconds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

read_base
check_base_installed
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/kbuild.lock"
flock 9
ensure_src_repo

SRC=$CACHE_DIR/kseries-kunit-src
BUILD=$CACHE_DIR/kseries-kunit-build
mapfile -t PATCHES < <(series_patches patched)

if [ ! -d "$SRC/.git" ]; then
	log "kunit: cloning $SRC_REPO into $SRC"
	git "${GIT_ID[@]}" clone -q --no-checkout "$SRC_REPO" "$SRC"
fi
git -C "$SRC" "${GIT_ID[@]}" am --abort >/dev/null 2>&1 || true
git -C "$SRC" "${GIT_ID[@]}" checkout -q -f --detach base
for p in "${PATCHES[@]}"; do
	git -C "$SRC" "${GIT_ID[@]}" am -q "$p" ||
		die "$(basename "$p") does not apply (kunit tree $SRC)"
done

log "kunit: net_devmem_freelist suite (log: $BUILD.log)"
rc=0
(cd "$SRC" && python3 tools/testing/kunit/kunit.py run --arch=x86_64 \
	--jobs="$(nproc)" --build_dir="$BUILD" --timeout=300 \
	--kunitconfig="$PATCH_DIR/devmem.kunitconfig") >"$BUILD.log" 2>&1 || rc=$?
grep -E '^\[..:..:..\] (=|\[|Testing complete)' "$BUILD.log" | tail -n 15 || true
[ $rc -eq 0 ] || die "kunit.py failed (rc=$rc), see $BUILD.log"
grep -Eq 'Testing complete\. Ran [0-9]+ tests: passed: [0-9]+$' "$BUILD.log" ||
	die "KUnit reported failures or errors, see $BUILD.log"
grep -Eq 'net_devmem_freelist' "$BUILD.log" ||
	die "suite net_devmem_freelist did not run, see $BUILD.log"
echo "kseries-kunit: net_devmem_freelist passed"
