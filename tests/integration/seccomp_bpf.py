#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""seccomp_bpf.py DEFAULT.json OUT.json: the container runtime's default
seccomp profile (read at test time from the installed containers-common),
changed in one place: bpf() is allowed to a container holding CAP_BPF and
perf_event_open() to one holding CAP_PERFMON, instead of only to one
holding CAP_SYS_ADMIN (Debian 12's containers-common 0.50 profile; newer
moby/containerd default profiles already carry these two rules)."""
import json
import sys

WANT = {"bpf": "CAP_BPF", "perf_event_open": "CAP_PERFMON"}

d = json.load(open(sys.argv[1]))
for s in d["syscalls"]:
    if s["action"] == "SCMP_ACT_ERRNO" and "CAP_SYS_ADMIN" in s.get("excludes", {}).get("caps", []):
        s["names"] = [n for n in s["names"] if n not in WANT]
for name, cap in WANT.items():
    d["syscalls"].append({"names": [name], "action": "SCMP_ACT_ALLOW", "includes": {"caps": [cap]}})
json.dump(d, open(sys.argv[2], "w"), indent=1)
