#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The exporter's default is the devmem mode (issue 36): the shipped dashboard
# and rules must need nothing it lacks. Every metric family a dashboard panel
# or a rule expression names is mapped to the availability key that gates
# its series (`export --list-metrics`: gate=KEY; families without one are
# the exporter's own and always there); on this kernel, every such key the
# full mode has available, the devmem mode has available too, and every
# family is one the exporter can emit. (This host has no devmem hook: the
# binding keys are unavailable in both modes here; test_availability's
# test_devmem_mode checks them on the lab kernels' hook sets, and the lab's
# bulk, exhaust, leak, sweep and autorelease scenarios compare the two
# modes' availability and values, assert_devmemtop.py default_vs_full and
# default_vs_full_final.)
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd python3
D=$TOP/dashboards

"$DMT" export --list-metrics >"$TMPD/families" || fail "export --list-metrics"
"$DMT" --json -n 1 -i 200ms -m devmem >"$TMPD/devmem.json" 2>"$TMPD/devmem.err" ||
	fail "-m devmem: $(cat "$TMPD/devmem.err")"
"$DMT" --json -n 1 -i 200ms -m full >"$TMPD/full.json" 2>"$TMPD/full.err" ||
	fail "-m full: $(cat "$TMPD/full.err")"
python3 - "$D" "$TMPD" <<'PY' || fail "the dashboard or rules need something the devmem mode lacks"
import json, re, sys
d, t = sys.argv[1], sys.argv[2]
text = open(f"{d}/devmemtop.json").read() + open(f"{d}/devmemtop-rules.yml").read()
used = set(re.findall(r"devmemtop_[a-z0-9_]+", text))
fams = {}
for line in open(f"{t}/families"):
    w = line.split()
    fams[w[0]] = next((x[5:] for x in w if x.startswith("gate=")), "-")
# recording rules' own series (devmemtop:...) are not in the catalogue; a
# family's _bucket/_count/_sum series are its own
def family(name):
    for suf in ("", "_bucket", "_count", "_sum"):
        base = name[: len(name) - len(suf)] if suf and name.endswith(suf) else name
        if base in fams:
            return base
    return None
dm = json.load(open(f"{t}/devmem.json"))
full = json.load(open(f"{t}/full.json"))
assert dm["mode"] == "devmem", dm["mode"]
bad, checked = [], 0
for name in sorted(used):
    f = family(name)
    if f is None:
        bad.append(f"{name}: not a family the exporter emits")
        continue
    key = fams[f]
    if key == "-":
        continue
    a, b = dm["metrics"].get(key), full["metrics"].get(key)
    if a is None or b is None:
        bad.append(f"{name}: availability key {key} not in a snapshot")
        continue
    checked += 1
    if b["available"] and not a["available"]:
        bad.append(f"{name} ({key}): full mode has it, devmem mode does not: {a['reason']}")
print(f"  {len(used)} names in the dashboard and rules, {checked} gated by an "
      f"availability key, each available in the devmem mode where the full mode has it")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
pass "the dashboard and rules need no series the default (devmem) mode lacks"
