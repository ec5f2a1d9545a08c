#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Scenario "avail": which of devmemtop's programs load and attach on this
# kernel, and what each figure is in each mode (exact, sampled, unavailable
# and why). Runs on any kernel with devmemtop on PATH, the host's too:
#   PATH=build:$PATH sh scripts/lab/scenarios/avail.sh OUTDIR
# scripts/lab/avail_table.py checks the outputs (no program the probes
# accepted fails to load) and writes the availability table.
D=${1:?usage: avail.sh OUTDIR}
mkdir -p $D
command -v devmemtop >/dev/null || { echo "devmemtop not on PATH" >&2; exit 1; }
uname -r >$D/uname
for m in devmem full fentry tp light; do
	devmemtop --json -n 2 -i 500ms -v -m $m >$D/$m.json 2>$D/$m.log
	echo $? >$D/$m.rc
done
