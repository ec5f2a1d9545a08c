#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kunit.sh [--config FILE]...: run KUnit suites of the lab kernel with
# tools/testing/kunit/kunit.py (x86_64 under qemu), on the pinned source with
# the whole patch series applied.
#
# By default every kernel-patches/*.kunitconfig is run; --config runs the
# given file(s) instead. The source is a clean clone, never built in place
# ($DEVMEMTOP_CACHE/kunit-src), moved to the series' commit by git so only
# changed files get new timestamps; each kunitconfig has its own build dir
# ($DEVMEMTOP_CACHE/kunit-build-<name>), so a rerun only rebuilds what the
# series changed (measured: ~454 s cold, ~15 s warm).
#
# By hand only (or vmtest.sh --kunit): the patched lab kernel has the suites
# built in (kernel-patches/lab-patched.config) and vmtest.sh checks them
# from its boot log, which costs no kernel build of its own.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CONFIGS=()
while [ $# -gt 0 ]; do
	case $1 in
	--config) [ $# -ge 2 ] || die "--config needs a file"
		  [ -f "$2" ] || die "no kunitconfig '$2'"
		  CONFIGS+=("$(realpath "$2")"); shift ;;
	--require) ;;	# accepted for vmtest.sh --kunit; no config is a SKIP either way
	-h|--help) sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option '$1' (--config FILE)" ;;
	esac
	shift
done
if [ ${#CONFIGS[@]} -eq 0 ]; then
	shopt -s nullglob
	CONFIGS=("$PATCH_DIR"/*.kunitconfig)
	shopt -u nullglob
fi
if [ ${#CONFIGS[@]} -eq 0 ]; then
	echo "SKIP kunit: no kernel-patches/*.kunitconfig yet (the series has no KUnit suite)"
	echo "kunit: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

read_base
check_base_installed
mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/kbuild.lock"
flock 9		# never next to a kernel build: 2 cores
ensure_src_repo

mapfile -t PATCHES < <(series_patches patched)
want=$(cat "${PATCHES[@]}" /dev/null | sha256sum | cut -c1-16)
SRC=$CACHE_DIR/kunit-src
if [ ! -d "$SRC/.git" ]; then
	git "${GIT_ID[@]}" clone -q --no-checkout "$SRC_REPO" "$SRC"
	git -C "$SRC" "${GIT_ID[@]}" checkout -q --detach base
	rm -f "$SRC/.lab-series"
fi
if [ "$(cat "$SRC/.lab-series" 2>/dev/null)" != "$want" ]; then
	log "kunit: moving $SRC to base + ${#PATCHES[@]} patches"
	git -C "$SRC" "${GIT_ID[@]}" am --abort >/dev/null 2>&1 || true
	git -C "$SRC" fetch -q "$SRC_REPO" refs/tags/base:refs/tags/base 2>/dev/null || true
	git -C "$SRC" "${GIT_ID[@]}" checkout -q -f --detach base
	for p in "${PATCHES[@]}"; do
		git -C "$SRC" "${GIT_ID[@]}" am -q "$p" ||
			die "kunit: $(basename "$p") does not apply"
	done
	echo "$want" >"$SRC/.lab-series"
fi
[ ! -f "$SRC/.config" ] || die "$SRC was built in place; remove it (kunit.py needs O= builds)"

pass=0 fail=0
for cfg in "${CONFIGS[@]}"; do
	name=$(basename "$cfg" .kunitconfig)
	bdir=$CACHE_DIR/kunit-build-$name
	log "kunit: $name (build dir $bdir, log $bdir.log)"
	t0=$(date +%s)
	if (cd "$SRC" && python3 tools/testing/kunit/kunit.py run --arch=x86_64 \
		--build_dir="$bdir" --kunitconfig="$cfg" --jobs="$(nproc)" \
		--timeout=900) >"$bdir.log" 2>&1; then
		echo "PASS kunit $name ($(( $(date +%s) - t0 )) s)"
		pass=$((pass + 1))
	else
		echo "FAIL kunit $name ($(( $(date +%s) - t0 )) s), see $bdir.log:"
		grep -E '\[(FAILED|CRASHED)\]|Testing complete' "$bdir.log" | tail -10 || tail -20 "$bdir.log"
		fail=$((fail + 1))
	fi
	grep -E 'Testing complete' "$bdir.log" || true
done
echo "kunit: $pass passed, $fail failed"
[ $fail -eq 0 ]
