#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CO-RE on this kernel's layouts: the programs that read a layout which
# moved between kernels load alone here (tests/integration/core_load.c),
# so their relocations resolve against this kernel's BTF, whatever the
# rest of the object does (fentry is refused on the host). walk_zcrx reads
# an io_uring zcrx interface queue: one area (ifq->area, 6.15-6.18: this
# host) or an array of areas (ifq->areas, 7.x: the lab's 7.3 kernels, where
# scenarios/zcrx.sh checks its figures). walk_binding: gen_pool or freelist.
# And the zcrx figures' availability says the kernel's own reason here.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd bpftool
LOAD="$TOP/build/tests/core_load"
OBJ="$TOP/build/devmemtop.bpf.o"
[ -x "$LOAD" ] || fail "$LOAD not built (make test-assets)"
BTF=${DEVMEMTOP_KERNEL_BTF:-/sys/kernel/btf/vmlinux}

bpftool btf dump file "$BTF" format c >"$TMPD/vmlinux.h" 2>/dev/null ||
	skip "cannot read the kernel BTF $BTF"
layout() {	# the members of struct $1 in this kernel's BTF
	awk -v s="struct $1 {" '$0 == s { p = 1; next } p && /^};/ { exit } p' "$TMPD/vmlinux.h"
}

progs=()
grep -q '^struct net_devmem_dmabuf_binding {' "$TMPD/vmlinux.h" && progs+=(walk_binding)
if grep -q '^struct io_zcrx_ifq {' "$TMPD/vmlinux.h"; then
	progs+=(walk_zcrx)
	if layout io_zcrx_ifq | grep -q ' \*\*areas;'; then
		log "io_zcrx_ifq: an array of areas (7.x layout)"
	elif layout io_zcrx_ifq | grep -q ' \*area;'; then
		log "io_zcrx_ifq: one area (6.15-6.18 layout)"
	else
		fail "io_zcrx_ifq has neither area nor areas: $(layout io_zcrx_ifq | tr -s ' \t\n' ' ')"
	fi
else
	log "no io_uring zcrx in this kernel: walk_zcrx not loadable here"
fi
[ ${#progs[@]} -gt 0 ] || skip "this kernel has neither devmem nor io_uring zcrx"
for p in "${progs[@]}"; do
	"$LOAD" "$OBJ" "$p" >"$TMPD/$p.out" 2>"$TMPD/$p.err" ||
		fail "$p does not load on this kernel's layout: $(grep -v '^[0-9]*: \|^;' "$TMPD/$p.err" | tail -3)"
	grep -qx "loaded $p" "$TMPD/$p.out" || fail "core_load said: $(cat "$TMPD/$p.out")"
	log "$p loads alone: $(grep -o 'processed [0-9]* insns' "$TMPD/$p.err" || echo ok)"
done
# Both zcrx layouts, from the relocations libbpf resolved (core_load -v):
# this kernel's, and the 7.3 lab kernel's BTF where the lab cache has one
# (its kbuild tree's vmlinux; the verifier here checks no field offset of a
# probe read, so the program loads against either)
zcrx_layout() {	# LABEL BTF WANT(area|areas): walk_zcrx's ifq field resolved as WANT
	DEVMEMTOP_KERNEL_BTF=$2 "$LOAD" -v "$OBJ" walk_zcrx >"$TMPD/zl.out" 2>"$TMPD/zl.err" ||
		fail "walk_zcrx against $1's BTF: $(grep -v '^[0-9]*: \|^;' "$TMPD/zl.err" | tail -2)"
	grep -q "matching candidate #0 <byte_off> .* struct io_zcrx_ifq\.$3 " "$TMPD/zl.err" ||
		fail "walk_zcrx against $1's BTF did not read ifq->$3: $(grep 'io_zcrx_ifq\.' "$TMPD/zl.err" | head -3)"
	local other=area
	[ "$3" = area ] && other=areas
	! grep -q "matching candidate #0 <byte_off> .* struct io_zcrx_ifq\.$other " "$TMPD/zl.err" ||
		fail "walk_zcrx against $1's BTF read ifq->$other too"
	log "walk_zcrx on $1's layout: reads ifq->$3"
}
if [[ " ${progs[*]} " == *" walk_zcrx "* ]]; then
	if layout io_zcrx_ifq | grep -q ' \*\*areas;'; then want=areas; else want=area; fi
	zcrx_layout "this kernel" "$BTF" $want
fi
CACHE=${DEVMEMTOP_CACHE:-/var/cache/devmemtop}
v73=$(ls -d "$CACHE"/kbuild-work-7.*/vmlinux 2>/dev/null | head -1)
# its .BTF copied under the lab's build lock (make check builds lab kernels
# beside this suite: never read a vmlinux being linked)
if [ -z "$v73" ]; then
	log "no 7.x lab kernel in $CACHE yet: its zcrx layout is checked in the lab (scenarios/zcrx.sh)"
elif ! flock -n "$CACHE/kbuild.lock" objcopy -O binary --only-section=.BTF "$v73" "$TMPD/v73.btf"; then
	log "a lab kernel is being built: the 7.x zcrx layout is checked in the lab (scenarios/zcrx.sh)"
else
	zcrx_layout "the 7.x lab kernel ($v73)" "$TMPD/v73.btf" areas
fi

# Without root (the exporter's unit: CAP_BPF and CAP_PERFMON), with the
# kernel BTF named as devmemtop names it (collector_probe.c, core_btf_path):
# a type this kernel lacks (7.x's struct zcrx_rq_hdr here) fails only its
# own relocation. Left to search the module BTFs, libbpf needs CAP_SYS_ADMIN
# and (1.1, Debian 12) failed the whole object.
if command -v setpriv >/dev/null; then
	cp "$LOAD" "$OBJ" "$TMPD/" && chmod 755 "$TMPD" "$TMPD/core_load" && chmod 644 "$TMPD/devmemtop.bpf.o"
	for p in "${progs[@]}"; do
		DEVMEMTOP_KERNEL_BTF=/sys/kernel/btf/vmlinux setpriv --reuid=65534 --regid=65534 \
			--clear-groups --inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon \
			--bounding-set=+bpf,+perfmon "$TMPD/core_load" "$TMPD/devmemtop.bpf.o" "$p" \
			>"$TMPD/$p.nr" 2>&1 ||
			fail "$p does not load with CAP_BPF+CAP_PERFMON only: $(grep -v '^[0-9]*: \|^;' "$TMPD/$p.nr" | tail -3)"
		log "$p loads without root (CAP_BPF, CAP_PERFMON)"
	done
else
	log "setpriv not installed: the load without root not checked"
fi
# a loader that cannot fail is no test: a program that is not there
"$LOAD" "$OBJ" no_such_prog >/dev/null 2>&1 && fail "core_load loaded a program that does not exist"

# the zcrx figures: available only with their hooks, else the kernel's reason
"$DMT" --json -n 1 -i 200ms -vv >"$TMPD/json" 2>"$TMPD/err" || fail "devmemtop exited $?: $(tail -2 "$TMPD/err")"
python3 - "$TMPD/json" "$TMPD/err" <<'PY' || fail "zcrx availability"
import json, re, sys
s = json.loads(open(sys.argv[1]).readline())
log = open(sys.argv[2]).read()
m = s["metrics"]
probe = re.search(r"^probe zc_alloc_entry\s+fentry\s+io_pp_zc_alloc_netmems\s+(.*)$", log, re.M)
assert probe, "no probe line for zc_alloc_entry"
for k in ("zcrx_calls", "zcrx_area"):
    if probe.group(1) == "ok" and "skip  zc_alloc" not in log:
        assert m[k]["available"], (k, m[k])
    else:
        assert not m[k]["available"] and m[k]["reason"], (k, m[k])
        assert m[k]["reason"] == probe.group(1), (k, m[k]["reason"], probe.group(1))
# no zcrx pool here: a pool of another kind has no zcrx figure, null
for p in s["pools"]:
    if p["kind"] != "io_uring":
        assert all(p.get(k) is None for k in p if k.startswith("zcrx_")), p
print("zcrx:", m["zcrx_calls"]["reason"] or m["zcrx_calls"]["source"])
PY
pass "${progs[*]} load on this kernel's layouts; zcrx availability says why"
