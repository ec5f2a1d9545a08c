#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NIC validation kit: run on a devmem-capable host (e.g. mlx5) to check that
# the host and its NIC are ready for devmem TCP, then record devmemtop while
# your devmem workload runs and gate the recording.
#
#   scripts/nic/validate.sh IFACE [--duration 30s] [--spec FILE] [--out DIR]
#                                 [--check-only] [--force] [-- COMMAND ARGS...]
#
# Checks print PASS / WARN / FAIL, one per line; the recording, report, gate
# result (JSON + JUnit) land in --out. A failed check stops before recording
# unless --force. Exit 0 when every required check and the gate pass, 1 when
# something failed, 2 on bad usage. Nothing here sends traffic: COMMAND (or
# whatever you run meanwhile) is the workload.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
DMT=${DMT:-$TOP/build/devmemtop}
SPEC=$TOP/specs/mlx5-rx.yaml
DUR=30s
OUT=
CHECK_ONLY=0
FORCE=0
IFACE=
CMD=()

usage() { sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "validate.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--duration) [ $# -ge 2 ] || die "--duration needs a value"; DUR=$2; shift ;;
	--spec) [ $# -ge 2 ] || die "--spec needs a value"; SPEC=$2; shift ;;
	--out) [ $# -ge 2 ] || die "--out needs a value"; OUT=$2; shift ;;
	--check-only) CHECK_ONLY=1 ;;
	--force) FORCE=1 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; CMD=("$@"); break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) [ -z "$IFACE" ] || die "unexpected argument '$1'"; IFACE=$1 ;;
	esac
	shift
done
[ -n "$IFACE" ] || die "which interface? (see --help)"
[ -d "/sys/class/net/$IFACE" ] || die "no interface '$IFACE' in this network namespace"
[ -f "$SPEC" ] || die "spec '$SPEC' not found"
OUT=${OUT:-/tmp/devmemtop-validate-$IFACE-$(date +%Y%m%d-%H%M%S)}

fails=0 warns=0
check() {	# check LEVEL-IF-FALSE "what" CONDITION-RESULT DETAIL
	local level=$1 what=$2 ok=$3 detail=${4:-}
	if [ "$ok" = 1 ]; then
		printf 'PASS  %-34s %s\n' "$what" "$detail"
	elif [ "$level" = FAIL ]; then
		printf 'FAIL  %-34s %s\n' "$what" "$detail"; fails=$((fails + 1))
	else
		printf 'WARN  %-34s %s\n' "$what" "$detail"; warns=$((warns + 1))
	fi
}

kconfig() {	# value of CONFIG_$1 in the running kernel's config, "" if unknown
	if [ -r /proc/config.gz ]; then
		zcat /proc/config.gz | sed -n "s/^CONFIG_$1=//p"
	elif [ -r "/boot/config-$(uname -r)" ]; then
		sed -n "s/^CONFIG_$1=//p" "/boot/config-$(uname -r)"
	fi
}

# probe_field mode|unavailable: from devmemtop's one-line JSON snapshot;
# python3 when there is one, else sed (minimal hosts, the lab guest)
probe_field() {
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))[sys.argv[2]]
print(v if isinstance(v, str) else "; ".join(v))' "$OUT/probe.json" "$1" 2>/dev/null
	elif [ "$1" = mode ]; then
		sed -n 's/.*"mode":"\([^"]*\)".*/\1/p' "$OUT/probe.json" | head -1
	else
		sed -n 's/.*"unavailable":\[\([^]]*\)\].*/\1/p' "$OUT/probe.json" | head -1 |
			sed 's/^"//; s/"$//; s/","/; /g; s|\\/|/|g'
	fi
}

echo "devmemtop NIC validation: $IFACE on $(uname -r)"
check FAIL "running as root" "$([ "$(id -u)" = 0 ] && echo 1)" ""
check FAIL "devmemtop built" "$([ -x "$DMT" ] && echo 1)" "$DMT"
check FAIL "kernel BTF" "$([ -r /sys/kernel/btf/vmlinux ] && echo 1)" "/sys/kernel/btf/vmlinux"
v=$(kconfig NET_DEVMEM)
if [ -n "$v$(kconfig PAGE_POOL)" ]; then
	check FAIL "CONFIG_NET_DEVMEM" "$([ "$v" = y ] && echo 1)" "${v:-not set}"
else
	check WARN "CONFIG_NET_DEVMEM" 0 "kernel config not readable (/proc/config.gz, /boot/config-*)"
fi
drv=$(ethtool -i "$IFACE" 2>/dev/null | sed -n 's/^driver: //p')
# netdevsim: only the lab's (kernel-patches/0001 + 0010); a stock one fails
# the header-split check below
check WARN "driver with devmem RX support" \
	"$(case $drv in mlx5_core|bnxt_en|gve|idpf|fbnic|netdevsim) echo 1;; esac)" \
	"${drv:-unknown} (devmem RX needs queue management ops + header split)"
split=$(ethtool -g "$IFACE" 2>/dev/null | sed -n 's/^TCP data split:[[:space:]]*//p')
check FAIL "header split (ethtool -g)" "$([ "$split" = on ] && echo 1)" \
	"TCP data split: ${split:-not reported} (enable: ethtool -G $IFACE tcp-data-split on)"
nt=$(ethtool -k "$IFACE" 2>/dev/null | sed -n 's/^ntuple-filters: //p')
check WARN "ntuple flow steering" "$(case $nt in on*) echo 1;; esac)" \
	"${nt:-not reported} (steer the devmem flow to its queue: ethtool -K $IFACE ntuple on)"
# RX queues = current RX + Combined channels; either may be "n/a" (mlx5 and
# netdevsim have combined channels only, RX says n/a)
q=$(ethtool -l "$IFACE" 2>/dev/null | awk '/Current hardware settings/{c=1}
	c && /^(RX|Combined):/ && $2 ~ /^[0-9]+$/ {n += $2; seen = 1}
	END {if (seen) print n}')
check WARN "more than one RX queue" "$([ "${q:-0}" -gt 1 ] 2>/dev/null && echo 1)" \
	"${q:-unknown} (devmem takes queues away from the normal RX path)"

if [ -x "$DMT" ] && [ "$(id -u)" = 0 ]; then
	mkdir -p "$OUT" || die "cannot create $OUT"
	if "$DMT" --json -n 1 -i 500ms >"$OUT/probe.json" 2>"$OUT/probe.err" ||
	   grep -q '"schema"' "$OUT/probe.json"; then
		mode=$(probe_field mode)
		check FAIL "devmemtop loads and attaches" 1 "mode: ${mode:-?}"
		unav=$(probe_field unavailable)
		# UNAV without ENTRY (one "metric: unavailable: why" of its list)
		drop_unav() {
			printf '%s' "$1" | sed "s/; $2//; s/^$2; //; s/^$2\$//"
		}
		# a kernel without devmem TX (before 6.14: net_devmem_get_binding
		# not in its BTF) has no TX figures to give: said, not a warning
		notx="binding_tx: unavailable: function net_devmem_get_binding not in kernel BTF"
		case "; $unav; " in
		*"; $notx; "*)
			echo "INFO  no devmem TX in this kernel       TX figures unavailable (net_devmem_get_binding not in its BTF)"
			unav=$(drop_unav "$unav" "$notx")
			;;
		esac
		# nor a kernel without io_uring zero-copy receive (before 6.15, or
		# CONFIG_IO_URING_ZCRX off) zcrx figures
		nozc="unavailable: kernel has no io_uring zero-copy receive (CONFIG_IO_URING_ZCRX, 6.15+)"
		case "; $unav; " in
		*"; zcrx_calls: $nozc; "*)
			echo "INFO  no io_uring zcrx in this kernel   zcrx figures unavailable (CONFIG_IO_URING_ZCRX, 6.15+)"
			unav=$(drop_unav "$unav" "zcrx_calls: $nozc")
			unav=$(drop_unav "$unav" "zcrx_area: $nozc")
			;;
		esac
		check WARN "every devmemtop metric available" "$([ -z "$unav" ] && echo 1)" "$unav"
	else
		check FAIL "devmemtop loads and attaches" 0 "$(tail -1 "$OUT/probe.err")"
	fi
fi

echo "checks: $fails failed, $warns warnings"
if [ "$CHECK_ONLY" = 1 ] || { [ "$fails" -gt 0 ] && [ "$FORCE" = 0 ]; }; then
	[ "$fails" = 0 ]
	exit
fi
[ -x "$DMT" ] && [ "$(id -u)" = 0 ] || exit 1

echo "recording $DUR into $OUT/devmemtop.rec${CMD[*]:+ while: ${CMD[*]}}"
if [ ${#CMD[@]} -gt 0 ]; then
	"$DMT" record -o "$OUT/devmemtop.rec" -d "$DUR" -- "${CMD[@]}"
else
	"$DMT" record -o "$OUT/devmemtop.rec" -d "$DUR"
fi
rc=$?
[ $rc = 0 ] || { echo "FAIL  recording (exit $rc)"; exit 1; }
"$DMT" report "$OUT/devmemtop.rec" >"$OUT/report.txt"
"$DMT" gate --spec "$SPEC" --from "$OUT/devmemtop.rec" --json "$OUT/gate.json" \
	--junit "$OUT/gate.junit.xml" | tee "$OUT/gate.txt"
rc=${PIPESTATUS[0]}
echo "results in $OUT (report.txt, gate.txt, gate.json, gate.junit.xml, devmemtop.rec)"
[ "$rc" = 0 ] && [ "$fails" = 0 ]
