#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kseries-build.sh [--per-patch] [--matrix] [--keep-going]: build checks of
# kernel-patches/series that the lab kernels cannot give (issue 22, D1 and
# series hygiene). Default: both.
#
#   --per-patch  every patch builds on its own, in both orders the lab
#                applies them (patched: the whole series; baseline: without
#                the "patched-only" patches, whose later patches then apply
#                on other context): the objects each patch touches, W=1,
#                lab config, after that patch and before the next
#   --matrix     the whole series with configs the lab kernels never use:
#                  lab       lab.config + lab-patched.config (reference)
#                  nopp      PAGE_POOL off (NETDEVSIM and BPF_SYSCALL off; INET and
#                            TRACEPOINTS on)
#                  nodevmem  NET_DEVMEM off (no dma-buf: DMA_SHARED_BUFFER
#                            and what selects it off)
#                  notp      TRACEPOINTS off (FTRACE off)
#                each builds only the objects the series touches that the
#                config enables, then checks what a link would: a symbol
#                one of them references that, under the lab config, one of
#                them defines (a function or tracepoint the series adds or
#                moves) must be defined by an object built here too. The
#                devmem trace events are defined in net-traces.o, so a
#                caller built where net-traces.c does not define them is a
#                link error that this catches without linking vmlinux.
#
# Objects are compiled with ccache (scripts/install-deps.sh installs it) in
# $DEVMEMTOP_CACHE/kseries-build/ (a git work tree of the pinned source and
# one O= directory per config, kept between runs: a warm run recompiles
# only what the patches changed). Takes the kernel build lock, so it never
# runs beside a lab kernel build. Not part of `make check` (cold, it
# prepares four O= trees: minutes of CPU); `make kseries-build` runs it.
# Ends with "kseries-build: N passed, N failed"; exit 1 if any failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PER_PATCH=0 MATRIX=0
while [ $# -gt 0 ]; do
	case $1 in
	--per-patch) PER_PATCH=1 ;;
	--matrix) MATRIX=1 ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "kseries-build.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
[ $PER_PATCH = 1 ] || [ $MATRIX = 1 ] || PER_PATCH=1 MATRIX=1

read_base
check_base_installed
command -v ccache >/dev/null || die "ccache not found (scripts/install-deps.sh --lab installs it)"
TOP=$CACHE_DIR/kseries-build
SRC=$TOP/src
mkdir -p "$TOP"
exec 9>"$CACHE_DIR/kbuild.lock"
flock 9
ensure_src_repo
if [ ! -d "$SRC/.git" ]; then
	git "${GIT_ID[@]}" clone -q --no-checkout "$SRC_REPO" "$SRC"
fi
MK=(make -s -j"$(nproc)" CC="ccache gcc" KCFLAGS=)
T0=$(date +%s)
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }

# apply FLAVOR: the work tree at base + the FLAVOR's patches, one commit each
apply() {
	git -C "$SRC" "${GIT_ID[@]}" am --abort >/dev/null 2>&1 || true
	git -C "$SRC" "${GIT_ID[@]}" checkout -q -f --detach base
	local p
	for p in $(series_patches "$1"); do
		git -C "$SRC" "${GIT_ID[@]}" am -q "$p" ||
			die "$(basename "$p") does not apply ($1 order)"
	done
}

# config NAME FRAGMENT...: O= dir for NAME with lab.config (+ fragments)
config() {
	local name=$1 o=$TOP/obj-$1
	shift
	mkdir -p "$o"
	(cd "$SRC" && scripts/kconfig/merge_config.sh -m -O "$o" \
		arch/x86/configs/x86_64_defconfig "$PATCH_DIR/lab.config" "$@" \
		>"$o/config.log" 2>&1 && make -s O="$o" olddefconfig >>"$o/config.log" 2>&1) ||
		die "config $name failed, see $o/config.log"
	echo "$o"
}

sym() { grep -q "^CONFIG_$2=y" "$1/.config"; }

# gate_ok O MAKEFILE REGEX: the first obj- line matching REGEX is built by
# the config of O (no line, or no CONFIG_ on it: yes)
gate_ok() {
	local line v
	line=$(grep -E "$3" "$2" 2>/dev/null | grep -v '^[[:space:]]*#' | head -1) || return 0
	case $line in
	*'$(CONFIG_'*) v=${line#*\$(CONFIG_}; v=${v%%)*}; sym "$1" "$v" ;;
	*) return 0 ;;
	esac
}

# enabled O FILE.c: whether the config of O builds FILE.o: its directory's
# line in the parent Makefile, then its own line in the directory's. A .c
# no Makefile names is #included by another (devmem_kunit.c): not built.
enabled() {
	local o=$1 f=$2 dir base
	dir=$(dirname "$f") base=$(basename "$f" .c)
	grep -qE "(^|[[:space:]])$base\.o" "$SRC/$dir/Makefile" || return 1
	gate_ok "$o" "$SRC/$(dirname "$dir")/Makefile" "[[:space:]]$(basename "$dir")/" &&
		gate_ok "$o" "$SRC/$dir/Makefile" "(^|[[:space:]])$base\.o"
}

# build O FILE.c...: compile those the config enables; fills BUILT
build() {
	local o=$1 f objs=()
	shift
	BUILT=()
	for f in "$@"; do
		if enabled "$o" "$f"; then objs+=("${f%.c}.o"); fi
	done
	[ ${#objs[@]} -gt 0 ] || return 0
	(cd "$SRC" && "${MK[@]}" O="$o" W=1 "${objs[@]}") >"$o/build.log" 2>&1 || return 1
	! grep -E 'warning:|error:' "$o/build.log" >/dev/null || return 1
	BUILT=("${objs[@]}")
}

touched_c() {	# .c files a commit range changes, but tools/ (user space)
	git -C "$SRC" diff --name-only "$@" -- '*.c' | grep -v '^tools/' || true
}

if [ $PER_PATCH = 1 ]; then
	# the baseline order differs from the patched one after the first
	# patched-only patch: only the patches after that are built again
	same=0
	while read -r a b; do
		[ "$a" = "$b" ] || break
		same=$((same + 1))
	done < <(paste -d' ' <(series_patches baseline) <(series_patches patched))
	for flavor in patched baseline; do
		apply "$flavor"
		n=$(git -C "$SRC" rev-list --count base..HEAD)
		# each step checks out an earlier commit: count from the tip
		tip=$(git -C "$SRC" rev-parse HEAD)
		for i in $(seq $((n - 1)) -1 0); do
			[ "$flavor" = patched ] || [ $((n - i)) -gt $same ] || continue
			git -C "$SRC" -c advice.detachedHead=false checkout -q -f "$(git -C "$SRC" rev-parse "$tip~$i")"
			subj=$(git -C "$SRC" log -1 --format=%s)
			mapfile -t files < <(touched_c HEAD~1 HEAD)
			# Kconfig symbols come and go with the patches (0006's KUnit)
			o=$(config perpatch "$PATCH_DIR/lab-patched.config")
			if [ ${#files[@]} -eq 0 ]; then
				ok "$flavor $((n - i))/$n $subj: no C file (headers, docs)"
				continue
			fi
			t=$(date +%s)
			if build "$o" "${files[@]}"; then
				ok "$flavor $((n - i))/$n $subj: ${#BUILT[@]} objects, W=1 clean ($(( $(date +%s) - t )) s)"
			else
				ko "$flavor $((n - i))/$n $subj: see $o/build.log"
				grep -E 'warning:|error:' "$o/build.log" | head -5
			fi
		done
	done
fi

if [ $MATRIX = 1 ]; then
	apply patched
	mapfile -t files < <(touched_c base HEAD)
	frag=$TOP/fragments
	mkdir -p "$frag"
	# BPF_SYSCALL selects PAGE_POOL too (XDP test runs)
	printf '%s\n' '# CONFIG_NETDEVSIM is not set' '# CONFIG_BPF_SYSCALL is not set' >"$frag/nopp.config"
	printf '%s\n' '# CONFIG_UDMABUF is not set' '# CONFIG_DMABUF_HEAPS is not set' \
		'# CONFIG_SYNC_FILE is not set' '# CONFIG_DMA_SHARED_BUFFER is not set' \
		>"$frag/nodevmem.config"
	printf '%s\n' '# CONFIG_FTRACE is not set' >"$frag/notp.config"
	declare -A DEF	# symbol -> object defining it, lab config
	for cfg in lab nopp nodevmem notp; do
		t=$(date +%s)
		case $cfg in
		lab) o=$(config $cfg "$PATCH_DIR/lab-patched.config") ;;
		*) o=$(config $cfg "$PATCH_DIR/lab-patched.config" "$frag/$cfg.config") ;;
		esac
		want=
		case $cfg in
		nopp) ! sym "$o" PAGE_POOL && sym "$o" INET && sym "$o" TRACEPOINTS || want="PAGE_POOL=n INET=y TRACEPOINTS=y" ;;
		nodevmem) ! sym "$o" NET_DEVMEM && sym "$o" PAGE_POOL || want="NET_DEVMEM=n PAGE_POOL=y" ;;
		notp) ! sym "$o" TRACEPOINTS && sym "$o" INET || want="TRACEPOINTS=n INET=y" ;;
		esac
		if [ -n "$want" ]; then
			ko "config $cfg: Kconfig did not give $want (see $o/.config)"
			continue
		fi
		if ! build "$o" "${files[@]}"; then
			ko "config $cfg: compile, see $o/build.log"
			grep -E 'warning:|error:' "$o/build.log" | head -5
			continue
		fi
		# what a link would check, for the symbols the series' files define
		declare -A HERE=()
		undef=()
		for ob in "${BUILT[@]}"; do
			while read -r s; do HERE[$s]=$ob; done < <(nm -g --defined-only "$o/$ob" | awk '{print $3}')
			while read -r s; do undef+=("$s $ob"); done < <(nm -u "$o/$ob" | awk '{print $2}')
		done
		if [ $cfg = lab ]; then
			for s in "${!HERE[@]}"; do DEF[$s]=${HERE[$s]}; done
			ok "config lab: ${#BUILT[@]} objects, W=1 clean, ${#DEF[@]} symbols they define ($(( $(date +%s) - t )) s)"
			continue
		fi
		miss=()
		for u in "${undef[@]}"; do
			s=${u% *} ob=${u#* }
			[ -n "${DEF[$s]:-}" ] && [ -z "${HERE[$s]:-}" ] &&
				miss+=("$ob needs $s (lab config: defined in ${DEF[$s]})")
		done
		if [ ${#miss[@]} -eq 0 ]; then
			ok "config $cfg: ${#BUILT[@]} of ${#files[@]} objects built, W=1 clean, every series symbol they use defined ($(( $(date +%s) - t )) s)"
		else
			ko "config $cfg: link would fail: $(printf '%s\n' "${miss[@]}" | sort -u | head -5 | paste -sd';')"
		fi
		unset HERE
	done
fi
echo "kseries-build: $pass passed, $fail failed ($(( $(date +%s) - T0 )) s)"
[ $fail = 0 ]
