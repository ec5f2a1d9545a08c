#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# results.sh NAME [ARGS...]: run bench/NAME.sh ARGS and write what it
# printed to docs/results/bench-NAME.md (bench-NAME-TAG.md with
# BENCH_TAG=TAG, for a second configuration of the same bench), with the
# command, the bench's settings from the environment, the commit, the
# machine, its load and the date: the figures the docs quote are this
# page, made again by running this script again, never typed by hand.
# The page is written whatever the bench's verdict (a missed goal is a
# result); not when the bench did not run (usage error, SKIP).
# Exit status: the bench's.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
TOP=$PWD
usage() { echo "usage: bench/results.sh NAME [ARGS...]  (NAME: $(cd bench && ls ./*.sh | sed 's|^\./||; s|\.sh$||' | grep -vx 'results\|lib' | paste -sd' '))" >&2; exit 2; }
[ $# -ge 1 ] || usage
name=$1
shift
[[ "$name" =~ ^[a-z][a-z0-9-]*$ ]] && [ "$name" != results ] && [ "$name" != lib ] &&
	[ -x "bench/$name.sh" ] || usage
tag=${BENCH_TAG:-}
[ -z "$tag" ] || [[ "$tag" =~ ^[a-z0-9][a-z0-9-]*$ ]] ||
	{ echo "results.sh: BENCH_TAG must be lower-case letters, digits and '-'" >&2; exit 2; }
out=$TOP/docs/results/bench-$name${tag:+-$tag}.md
log=$(mktemp /tmp/dmt-bench.XXXXXX) || exit 2
trap 'rm -f "$log"' EXIT

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- src bpf bench 2>/dev/null || commit="$commit with uncommitted changes"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date -u +'%F %H:%M')
t0=$(date +%s)
"bench/$name.sh" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
secs=$(( $(date +%s) - t0 ))
# a bench that did not run (usage, SKIP: no root, a tool missing) made no figure
if [ "$rc" = 77 ] || [ "$rc" = 2 ]; then
	echo "results.sh: bench/$name.sh did not run (exit $rc): $out left as it was" >&2
	exit "$rc"
fi
verdict=$(grep -E '^(PASS|FAIL): ' "$log" | tail -1)
# the benches' goal lines (MET/MISSED, "goal ...: met"), repeated at the top
# a "goal ..." line alone (bystander's) is named by the line before it
goals=$(awk '/^#/ { next }
	/^ *goal/ { l = prev; sub(/ *[(:].*/, "", l); sub(/^ */, ""); print l ": " $0; prev = $0; next }
	/(^|[^A-Za-z])(MET|MISSED)([^A-Za-z]|$)|goal/ { sub(/^ */, ""); print }
	{ prev = $0 }' "$log")
# the header comment's first sentence says what the bench measures
title=$(awk 'NR < 3 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "bench/$name.sh" |
	paste -sd' ' | sed 's/[.:]\( \|$\).*/./')
settings=$(env | grep -E '^(BENCH|BYST|LIGHT|TB|SCALE|REG|DEVMEMTOP)_[A-Z_]*=' | grep -v '^BENCH_TAG=' | sort | sed 's/^/`/; s/$/`/' | paste -sd' ')
mkdir -p "$TOP/docs/results"
{
	echo "# bench/$name.sh${tag:+ ($tag)}"
	echo
	echo "Made by: \`bench/results.sh $name${*:+ $*}\`${tag:+ with \`BENCH_TAG=$tag\`} (do not edit: run it again)."
	echo "$title"
	echo
	echo "| fact | value |"
	echo "|---|---|"
	echo "| command | \`bench/$name.sh${*:+ $*}\` |"
	[ -n "$settings" ] || settings="none set: the defaults"
	echo "| settings | $settings |"
	echo "| result | exit $rc in $secs s${verdict:+: $verdict} |"
	echo "| ran | $start UTC, commit $commit |"
	echo "| machine | $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, kernel $(uname -r) |"
	echo "| load average at start, at end | $load0; $(cut -d' ' -f1-3 /proc/loadavg) |"
	echo
	if [ -n "$goals" ]; then
		echo "The goals' lines:"
		echo
		echo '```text'
		echo "$goals"
		echo '```'
		echo
	fi
	echo "What the bench printed:"
	echo
	echo '```text'
	sed 's/\x1b\[[0-9;]*[A-Za-z]//g' "$log"
	echo '```'
} >"$out.tmp" && mv "$out.tmp" "$out"
echo "results.sh: $out" >&2
exit "$rc"
