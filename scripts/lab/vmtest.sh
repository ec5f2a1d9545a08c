#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vmtest.sh: the hardware-free devmem lab. Builds (or reuses) the lab
# kernels, boots each under qemu -accel tcg with a busybox initramfs, runs
# the devmem TCP scenarios on a patched netdevsim pair, brings the results
# back over virtio 9p and asserts on them. Exit status 0 only if every
# check passed (SKIPs are printed with their reason).
#
#   scripts/lab/vmtest.sh [--kernel baseline|patched|all] [--scenario NAME]...
#                         [--variant NAME] [--shell] [--no-deps]
#                         [--kunit|--no-kunit] [--out DIR] [--timeout SECS]
#
#   --kernel     which kernel(s); "all" (default) runs baseline and, when
#                the series has patched-only patches, patched too
#   --scenario   a scripts/lab/scenarios/NAME.sh (default: bulk, exhaust,
#                leak, then any other scenario file, e.g. kseries, but
#                those marked "# lab: on-demand", which run only by name)
#   --variant    boot kernels built with kernel-patches/lab-NAME.config
#                on top (kbuild.sh FLAVOR NAME, e.g. lockdep: a full
#                kernel build of its own); results go to build/lab/out-NAME
#   --shell      boot one kernel with the lab set up and give a shell on the
#                console (exit the shell to power off; Ctrl-A X kills qemu)
#   --kunit      also run kunit.sh: every kernel-patches/*.kunitconfig in
#                a kernel of kunit.py's own (a separate build, ~20 min
#                cold). Off by default: the patched lab kernel has the
#                suites built in (lab-patched.config), they run at boot and
#                their KTAP output is parsed with kunit.py parse.
#   --no-kunit   accepted for compatibility (the default)
#   --out        results (default build/lab/out), one dir per kernel
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '3,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }

KERNELS=all SCENARIOS=() SHELL_MODE=0 DEPS=1 KUNIT=no VARIANT=
OUT= TIMEOUT=1800	# a hang guard: a VM takes 450-900 s, slower beside the host suite
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || usage; KERNELS=$2; shift ;;
	--scenario) [ $# -ge 2 ] || usage; SCENARIOS+=("$2"); shift ;;
	--variant) [ $# -ge 2 ] || usage; VARIANT=$2; shift ;;
	--shell) SHELL_MODE=1 ;;
	--no-deps) DEPS=0 ;;
	--kunit) KUNIT=yes ;;
	--no-kunit) KUNIT=no ;;
	--out) [ $# -ge 2 ] || usage; OUT=$2; shift ;;
	--timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift ;;
	-h|--help) usage ;;
	*) echo "vmtest.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
case $KERNELS in baseline|patched|all) ;; *) die "--kernel must be baseline, patched or all" ;; esac
[ -z "$VARIANT" ] || [ -f "$PATCH_DIR/lab-$VARIANT.config" ] ||
	die "--variant $VARIANT: no kernel-patches/lab-$VARIANT.config"
# 6.12's results in build/lab/out, another series' in build/lab/out-SERIES
[ "$LAB_SERIES" = 6.12 ] && sfx= || sfx=-$LAB_SERIES
[ -n "$OUT" ] || OUT=$REPO_DIR/build/lab/out$sfx${VARIANT:+-$VARIANT}
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds"
# a flavor of a series may run a list of its own (PATCH_DIR/scenarios-FLAVOR:
# 7.3's patched kernel, while it carries only a patch or two); --scenario
# names what every kernel runs
declare -A FLAVOR_SCENARIOS
if [ ${#SCENARIOS[@]} -eq 0 ]; then
	for f in baseline patched; do
		[ -f "$PATCH_DIR/scenarios-$f" ] || continue
		FLAVOR_SCENARIOS[$f]=$(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCH_DIR/scenarios-$f" | paste -sd' ')
	done
fi
if [ ${#SCENARIOS[@]} -eq 0 ] && [ -f "$PATCH_DIR/scenarios" ]; then
	# a series whose kernel runs only some scenarios (7.3 before its
	# netdevsim devmem port) lists them
	# (mapfile: "read" returns 1 at the end of its input without a newline,
	# which stopped the script silently under set -e)
	mapfile -t SCENARIOS < <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCH_DIR/scenarios")
fi
if [ ${#SCENARIOS[@]} -eq 0 ]; then
	SCENARIOS=(bulk exhaust leak)
	for f in "$LAB_DIR"/scenarios/*.sh; do
		s=$(basename "$f" .sh)
		grep -q '^# lab: on-demand' "$f" && continue
		[[ " ${SCENARIOS[*]} " == *" $s "* ]] || SCENARIOS+=("$s")
	done
fi
# what every scenario of any flavor needs is built below
ALL_SCENARIOS=("${SCENARIOS[@]}")
for f in "${!FLAVOR_SCENARIOS[@]}"; do
	for s in ${FLAVOR_SCENARIOS[$f]}; do
		[[ " ${ALL_SCENARIOS[*]} " == *" $s "* ]] || ALL_SCENARIOS+=("$s")
	done
done
for s in "${ALL_SCENARIOS[@]}"; do
	[ -f "$LAB_DIR/scenarios/$s.sh" ] || die "no scenario '$s' (have: $(cd "$LAB_DIR/scenarios" && ls | sed 's/\.sh$//' | paste -sd' '))"
done
[ "$KERNELS" != all ] || [ $SHELL_MODE = 0 ] || KERNELS=baseline

T_START=$(date +%s)
TIMINGS=()
phase() { TIMINGS+=("$1: $2 s"); log "$1 took $2 s"; }

[ $DEPS = 0 ] || "$LAB_DIR/deps.sh"
read_base
mkdir -p "$REPO_DIR/build" || die "cannot create $REPO_DIR/build"

t=$(date +%s)
make -s -C "$LAB_DIR/traffic" OUTPUT="$REPO_DIR/build/lab" >/dev/null 2>"$REPO_DIR/build/lab-traffic-build.log" ||
	{ cat "$REPO_DIR/build/lab-traffic-build.log" >&2; die "building devmem-traffic failed"; }
# lab-hds: every guest turns tcp-data-split on before it binds (guest/lib.sh)
make -s -C "$LAB_DIR/ncdevmem" OUTPUT="$REPO_DIR/build/lab" >/dev/null 2>"$REPO_DIR/build/lab-hds-build.log" ||
	{ cat "$REPO_DIR/build/lab-hds-build.log" >&2; die "building lab-hds failed"; }
# ncdevmem (the kernel's devmem selftest server) from the pinned source,
# for the scenarios that run it
needs() { local s; for s in "$@"; do [[ " ${ALL_SCENARIOS[*]} " == *" $s "* ]] && return 0; done; return 1; }
if needs ncdevmem nickit multiqueue netcons; then
	"$LAB_DIR/ncdevmem/build.sh" "$REPO_DIR/build/lab" >"$REPO_DIR/build/lab-ncdevmem-build.log" 2>&1 ||
		{ tail -20 "$REPO_DIR/build/lab-ncdevmem-build.log" >&2; die "building ncdevmem failed"; }
fi
# ynltool from the 7.3 source (scenarios/ynl.sh), a second reader of the counters
if needs ynl; then
	"$LAB_DIR/ynltool/build.sh" "$REPO_DIR/build/lab" >"$REPO_DIR/build/lab-ynltool-build.log" 2>&1 ||
		{ tail -20 "$REPO_DIR/build/lab-ynltool-build.log" >&2; die "building ynltool failed"; }
fi
# upstream's devmem selftests and ncdevmem from the 7.3 source (scenarios/upstream.sh)
if needs upstream upstream-more; then
	"$LAB_DIR/selftests/devmem-build.sh" "$REPO_DIR/build/lab" \
		>"$REPO_DIR/build/lab-devmem-ksft-build.log" 2>&1 ||
		{ tail -20 "$REPO_DIR/build/lab-devmem-ksft-build.log" >&2; die "building upstream's devmem selftests failed"; }
fi
# lab-zcrx (ours) against the pinned source's uapi (the selftests' headers
# when they were just installed), for scenarios/zcrx.sh
if needs zcrx; then
	"$LAB_DIR/zcrx/build.sh" "$REPO_DIR/build/lab" >"$REPO_DIR/build/lab-zcrx-build.log" 2>&1 ||
		{ tail -20 "$REPO_DIR/build/lab-zcrx-build.log" >&2; die "building lab-zcrx failed"; }
fi
# the kernel's Python selftests (scenarios/selftests.sh), unmodified from it
if needs selftests; then
	"$LAB_DIR/selftests/fetch.sh" "$REPO_DIR/build/lab" ||
		die "extracting the selftests from the pinned source failed"
fi

# Kernels: flavor -> build dir; patched is skipped when it equals baseline.
declare -A KDIR
flavors=()
case $KERNELS in
all) want=(baseline patched) ;;
*) want=("$KERNELS") ;;
esac
for f in "${want[@]}"; do
	t=$(date +%s)
	d=$("$LAB_DIR/kbuild.sh" "$f" $VARIANT) || die "kernel build ($f${VARIANT:+ $VARIANT}) failed"
	phase "kernel $f ($(sed -n 's/^build_seconds=//p' "$d/.lab-stamp") s when it was built)" $(( $(date +%s) - t ))
	dup=
	for g in "${flavors[@]}"; do [ "${KDIR[$g]}" = "$d" ] && dup=$g; done
	if [ -n "$dup" ]; then
		log "$f kernel is the $dup kernel (no patched-only patch in the series yet): not run twice"
		continue
	fi
	KDIR[$f]=$d
	flavors+=("$f")
done

t=$(date +%s)
mkdir -p "$OUT"
INITRD=$OUT/initramfs.cpio.gz
"$LAB_DIR/initramfs.sh" "$INITRD"
phase "initramfs" $(( $(date +%s) - t ))

# Single-threaded TCG by default: with multi-threaded TCG one run in ~16
# died of "Oops: int3" in an unrelated function (ttwu_do_activate) while
# tracepoints/BPF were being attached, i.e. a vCPU executed code another
# vCPU was live-patching (text_poke_bp), which MTTCG does not keep coherent
# the way sync_core() does on hardware. Measured as fast on 2 cores.
# LAB_QEMU_ACCEL overrides (e.g. "tcg" for MTTCG, "kvm" where available).
#
# no_timer_check: at boot the kernel checks that the 8254 timer ticks
# through the IO-APIC by waiting for ticks within a delay loop calibrated a
# moment before. Under TCG on a loaded host the emulated CPU's speed
# changes between the calibration and the check, the ticks come late and
# the boot panics ("IO-APIC + timer doesn't work!", seen with both host
# cores busy). The emulated timer is known to work; the parameter is the
# kernel's own switch for virtual machines to skip that check.
qemu_cmd() {	# flavor outdir mode
	echo qemu-system-x86_64 -accel "${LAB_QEMU_ACCEL:-tcg,thread=single}" -cpu max -smp 2 -m 2G -nographic \
		-no-reboot -nic none -kernel "${KDIR[$1]}/bzImage" \
		-initrd "$INITRD" \
		-virtfs "local,path=$2,mount_tag=labout,security_model=none,id=labout" \
		-virtfs "local,path=/usr,mount_tag=hostusr,security_model=none,readonly=on,id=hostusr" \
		-append "\"console=ttyS0 no_timer_check loglevel=5 panic=-1 oops=panic lab.mode=$3 lab.kernel=$1 lab.scenarios=$(IFS=,; echo "${SCENARIOS[*]}")\""
}

if [ $SHELL_MODE = 1 ]; then
	f=${flavors[0]}
	d=$OUT/shell-$f
	rm -rf "$d" && mkdir -p "$d"
	log "booting the $f kernel with a shell; results share: $d"
	eval "$(qemu_cmd "$f" "$d" shell)"
	exit $?
fi

failed=0
DEFAULT_SCENARIOS=("${SCENARIOS[@]}")
declare -A RAN	# flavor -> the scenarios it ran
for f in "${flavors[@]}"; do
	SCENARIOS=("${DEFAULT_SCENARIOS[@]}")
	[ -z "${FLAVOR_SCENARIOS[$f]:-}" ] || read -r -a SCENARIOS <<<"${FLAVOR_SCENARIOS[$f]}"
	RAN[$f]=" ${SCENARIOS[*]} "
	d=$OUT/$f
	rm -rf "$d" && mkdir -p "$d"
	cp "${KDIR[$f]}/.config" "$d/kconfig"	# the NIC kit reads the booted kernel's config
	log "running ${SCENARIOS[*]} on the $f kernel (console: $d/console.log)"
	t=$(date +%s)
	rc=0
	eval "python3 \"$LAB_DIR/qemu-run.py\" --log \"$d/console.log\" --timeout $TIMEOUT -- $(qemu_cmd "$f" "$d" run)" || rc=$?
	phase "vm $f" $(( $(date +%s) - t ))
	[ $rc = 0 ] || log "qemu exit status $rc (124: timeout)"
	python3 "$LAB_DIR/assert_lab.py" --dir "$d" --kernel "$f" --qemu-rc $rc \
		--kunit-parser "$SRC_REPO/tools/testing/kunit/kunit.py" \
		--scenarios "${SCENARIOS[@]}" || failed=1
	python3 "$LAB_DIR/assert_devmemtop.py" --dir "$d" --kernel "$f" \
		--patched-only "$(series_patches patched | wc -l) $(series_patches baseline | wc -l)" \
		--scenarios "${SCENARIOS[@]}" || failed=1
	# the independent peer and the NIC kit (scenarios/ncdevmem.sh, nickit.sh)
	python3 "$LAB_DIR/assert_ncdevmem.py" --dir "$d" --kernel "$f" \
		--patched-only "$(series_patches patched | wc -l) $(series_patches baseline | wc -l)" \
		--scenarios "${SCENARIOS[@]}" || failed=1
	# the kernel's own selftests as a peer (scenarios/selftests.sh)
	python3 "$LAB_DIR/assert_selftests.py" --dir "$d" --kernel "$f" \
		--scenarios "${SCENARIOS[@]}" || failed=1
	# upstream's devmem.py as the judge, devmemtop beside it (scenarios/upstream.sh)
	python3 "$LAB_DIR/assert_upstream.py" --dir "$d" --kernel "$f" \
		--scenarios "${SCENARIOS[@]}" || failed=1
	# more of upstream's selftests (netkit, userns, drivers; scenarios/upstream-more.sh)
	python3 "$LAB_DIR/assert_upstream_more.py" --dir "$d" --kernel "$f" \
		--scenarios "${SCENARIOS[@]}" || failed=1
	# io_uring zero-copy receive against devmemtop's zcrx figures (scenarios/zcrx.sh)
	python3 "$LAB_DIR/assert_zcrx.py" --dir "$d" --kernel "$f" \
		--scenarios "${SCENARIOS[@]}" || failed=1
done
SCENARIOS=("${DEFAULT_SCENARIOS[@]}")

# Which programs load and what each figure is, per kernel: one table,
# generated from the avail scenario's outputs (fentry attaches in the guest)
if needs avail; then
	specs=()
	for f in "${flavors[@]}"; do
		[[ "${RAN[$f]}" == *" avail "* ]] && specs+=("$BASE_KVER $f=$OUT/$f/avail")
	done
	# none when only a flavor whose list has no avail ran (7.3's patched
	# kernel: vmtest.sh --kernel patched)
	if [ ${#specs[@]} -gt 0 ]; then
		python3 "$LAB_DIR/avail_table.py" --fentry --out "$OUT/availability.md" "${specs[@]}" ||
			failed=1
	fi
fi

# Baseline vs patched comparison of the series (issue #4's kseries scenario).
if [ -x "$LAB_DIR/kseries-check.sh" ] && [[ " ${SCENARIOS[*]} " == *" kseries "* ]]; then
	if [ -n "${KDIR[patched]:-}" ] && [ -n "${KDIR[baseline]:-}" ]; then
		"$LAB_DIR/kseries-check.sh" "$OUT/baseline/kseries/kseries-results.txt" \
			"$OUT/patched/kseries/kseries-results.txt" || failed=1
	else
		echo "SKIP kseries-check: needs both kernels (ran: ${flavors[*]})"
	fi
fi

# One HTML page per scenario to look at: patched over the baseline kernel's
# recording (devmemtop report --html --baseline), next to the recordings.
if [ -n "${KDIR[patched]:-}" ] && [ -n "${KDIR[baseline]:-}" ]; then
	for s in "${SCENARIOS[@]}"; do
		b=$OUT/baseline/$s/devmemtop.dmtrec p=$OUT/patched/$s/devmemtop.dmtrec
		[ -f "$b" ] && [ -f "$p" ] || continue
		"${DEVMEMTOP_BIN:-$REPO_DIR/build/devmemtop}" report "$p" --baseline "$b" \
			--html "$OUT/$s-baseline-vs-patched.html" || failed=1
	done
fi

# devmemtop compare on the repeated runs (scenarios repeat and sweep,
# autorelease-measure):
# OUT/compare-*.{txt,json,html}, verdicts in OUT/compare-summary.txt.
if { [ -n "${KDIR[patched]:-}" ] && [ -n "${KDIR[baseline]:-}" ] &&
     [[ " ${SCENARIOS[*]} " == *" repeat "* ]]; } ||
   { [ -n "${KDIR[patched]:-}" ] && [[ " ${SCENARIOS[*]} " == *" autorelease-measure "* ]]; }; then
	t=$(date +%s)
	"$LAB_DIR/compare.sh" "$OUT" || failed=1
	phase "compare" $(( $(date +%s) - t ))
fi

# KUnit in a kernel of kunit.py's own, on request only (--kunit): the
# suites already ran at boot of the patched lab kernel (assert_lab.py).
if [ $KUNIT = yes ]; then
	t=$(date +%s)
	"$LAB_DIR/kunit.sh" --require || failed=1
	phase "kunit (kunit.py build)" $(( $(date +%s) - t ))
fi

phase "vmtest total" $(( $(date +%s) - T_START ))
printf '%s\n' "${TIMINGS[@]}" >"$OUT/timings.txt"
printf 'timing: %s\n' "${TIMINGS[@]}"
if [ $failed = 0 ]; then
	log "vmtest: all checks passed"
else
	log "vmtest: FAILED (see the FAIL lines above and $OUT)"
fi
exit $failed
