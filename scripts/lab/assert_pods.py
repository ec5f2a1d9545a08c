#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side checks of the "pods" scenario (issue 24, holders by pod),
called by assert_lab.py through its SCENARIOS table.

scenarios/pods.sh ran the devmem receiver in a cgroup laid out as a
kubelet (systemd driver) and containerd lay out a BestEffort pod's
container, with a random pod uid and container id (pod.env), while
devmemtop ran in the root cgroup. Checked:

  * the receiver really ran in that cgroup (its /proc/PID/cgroup);
  * devmemtop --json (devmem tracepoints) and -m fentry (the
    put_cmsg_notrunc fallback): the receiver is a holder, and every holder
    row names its pid, the cgroup's id (the directory's inode), its path,
    the pod uid, the container id and runtime containerd;
  * -m light: holders from the TCP socket iterator (issue 25) with the
    receiver's pid and the pod's cgroup id; on a devmemtop without it,
    holders null and binding_held_by_sockets unavailable with its reason;
  * the exporters (one as uid 65534 after its privilege drop, one with
    --keep-privileges), scraped while every token was held: the
    receiver's holder series carry pod_uid and container_id;
  * the live view (-b): the receiver's row shows "pod <uid>
    containerd://<first 12 digits>";
  * the recording: report's holders table shows the pod and the full
    container id, report --json every holder's fields as live.

Run by hand: scripts/lab/assert_pods.py --dir build/lab/out/baseline
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labcheck import DEVMEMTOP, Checks, read  # noqa: E402


def pod_env(d):
    env = {}
    for line in (read(os.path.join(d, "pod.env"), "") or "").splitlines():
        for word in line.split():
            if "=" in word:
                k, v = word.split("=", 1)
                env[k] = v
    return env


def jsonl(text):
    out = []
    for line in (text or "").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def holder_rows(c, name, snaps, env):
    """Every holder row of every snapshot: the receiver's, with its pod."""
    pid = int(env["rx_pid"])
    want = {"pid": pid, "cgroup": env["CGROUP"], "cgroup_id": int(env["CGROUP_ID"]),
            "pod_uid": env["POD_UID"], "container_id": env["CONTAINER_ID"],
            "container_runtime": "containerd"}
    rows = [h for s in snaps for h in (s.get("holders") or [])]
    bad = []
    for h in rows:
        diff = {k: h.get(k) for k in want if h.get(k) != want[k]}
        if diff:
            bad.append("%s (want %s)" % (diff, {k: want[k] for k in diff}))
    c.check(name, bool(rows) and not bad,
            "%d holder rows in %d snapshots, all pid %d in pod %s container %s..."
            % (len(rows), len(snaps), pid, want["pod_uid"], want["container_id"][:12]),
            "no holder row at all" if not rows else "; ".join(bad[:3]))


def check_light(c, d, name):
    snaps = jsonl(read(os.path.join(d, "devmemtop-light.json")))
    if not snaps:
        c.check(name, False, "", "no snapshot in devmemtop-light.json (see its .log)")
        return
    held = [s["metrics"]["binding_held_by_sockets"] for s in snaps]
    if all(m["available"] and m["source"].startswith("iter/tcp") for m in held):
        # issue 25: light mode reads held tokens at snapshot time
        env = pod_env(d)
        rows = [h for s in snaps for h in (s.get("holders") or [])]
        ok = bool(rows) and all(str(h.get("pid")) == env.get("rx_pid") and
                                str(h.get("cgroup_id")) == env.get("CGROUP_ID") for h in rows)
        c.check("pods: -m light: holders from iter/tcp, the receiver's pid and cgroup", ok,
                "%d holder rows in %d snapshots" % (len(rows), len(snaps)),
                "rows: %s" % rows[:2])
        return
    ok = all(s.get("holders") is None for s in snaps) and \
        all(not m["available"] and m.get("reason") for m in held)
    c.check(name, ok, "%d snapshots, holders null, reason: %s"
            % (len(snaps), held[-1].get("reason")),
            "holders present or no reason given")


def check_top(c, d, env):
    name = "pods: live view (-b) holder row shows the pod and container"
    txt = read(os.path.join(d, "devmemtop-top.txt"), "") or ""
    want = "pod %s containerd://%s" % (env["POD_UID"], env["CONTAINER_ID"][:12])
    rows = [l for l in txt.splitlines() if l.split()[:1] == [env["rx_pid"]]]
    c.check(name, bool(rows) and all(l.rstrip().endswith(want) for l in rows),
            "%d rows of pid %s end with '%s'" % (len(rows), env["rx_pid"], want),
            "rows: %s" % rows[:2])


def check_recording(c, d, env):
    rec = os.path.join(d, "devmemtop-pods.dmtrec")
    if not os.path.exists(rec):
        c.check("pods: recording", False, "", "no %s" % rec)
        return
    p = subprocess.run([DEVMEMTOP, "report", rec], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    want = "pod %s containerd://%s" % (env["POD_UID"], env["CONTAINER_ID"])
    rows = [l for l in p.stdout.splitlines() if l.split()[:1] == [env["rx_pid"]]]
    c.check("pods: report holders table shows the pod and the full container id",
            p.returncode == 0 and bool(rows) and all(l.rstrip().endswith(want) for l in rows),
            "report exit %d, %d rows of pid %s" % (p.returncode, len(rows), env["rx_pid"]),
            p.stderr.strip() or "rows: %s" % rows[:2])
    p = subprocess.run([DEVMEMTOP, "report", "--json", rec], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    holder_rows(c, "pods: report --json holders (from the recording)", jsonl(p.stdout), env)


def check_export(c, d, env, f, who):
    """The scrape while every token was held: the receiver's holder series
    carry its pod_uid and container_id."""
    name = "pods: exporter (%s): holder series carry pod_uid and container_id" % who
    txt = read(os.path.join(d, f))
    if txt is None:
        c.check(name, False, "", "no %s (see devmemtop-export*.log, scenario.log)" % f)
        return
    tail = 'pod_uid="%s",container_id="%s"}' % (env["POD_UID"], env["CONTAINER_ID"])
    fams = ("devmemtop_token_holder_tokens{", "devmemtop_token_holder_niovs{",
            "devmemtop_token_holder_oldest_token_age_seconds{")
    rows = [l for l in txt.splitlines() if l.startswith(fams)]
    mine = [l for l in rows if l.split("{", 1)[1].startswith('pid="%s",' % env["rx_pid"])]
    good = [l for l in mine if ("," + tail + " ") in l]
    tokens = [float(l.rsplit(" ", 1)[1]) for l in good if l.startswith(fams[0])]
    c.check(name, len(mine) == 3 and len(good) == 3 and bool(tokens) and tokens[0] > 0,
            "%d holder series, %d of pid %s with the pod's labels, tokens %s"
            % (len(rows), len(good), env["rx_pid"], tokens),
            "want ...,%s; got %s" % (tail, (mine or rows)[:2]))


def scenario_pods(c, d):
    env = pod_env(d)
    need = ("POD_UID", "CONTAINER_ID", "CGROUP", "CGROUP_ID", "rx_pid", "rx_cgroup")
    if any(k not in env for k in need):
        c.check("pods: scenario facts (pod.env)", False, "", "missing: %s"
                % [k for k in need if k not in env])
        return
    c.check("pods: the receiver ran in the container's cgroup",
            env["rx_cgroup"] == "0::" + env["CGROUP"],
            "pid %s: %s" % (env["rx_pid"], env["rx_cgroup"]), "want 0::" + env["CGROUP"])
    if not os.access(DEVMEMTOP, os.X_OK):
        c.skip("pods: devmemtop checks", "%s not built" % DEVMEMTOP)
        return
    rcs = (read(os.path.join(d, "devmemtop.rcs"), "") or "").split("\n")
    rcs = [l.split() for l in rcs if l.strip()]
    c.check("pods: the devmemtops exited 0 (SIGINT)", len(rcs) == 7 and
            all(r[1] == "0" for r in rcs), str(rcs), "see devmemtop-*.log")
    for f, name in (("devmemtop-live.json", "devmem tracepoints"),
                    ("devmemtop-fentry.json", "-m fentry, put_cmsg_notrunc fallback")):
        snaps = jsonl(read(os.path.join(d, f)))
        holder_rows(c, "pods: --json holders (%s)" % name, snaps, env)
    check_light(c, d, "pods: -m light: holders unavailable, with the reason (no iterator)")
    check_export(c, d, env, "export.prom", "as uid 65534 after its drop")
    check_export(c, d, env, "export-root.prom", "--keep-privileges")
    check_top(c, d, env)
    check_recording(c, d, env)


SCENARIOS = {"pods": scenario_pods}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, help="the kernel's output directory")
    a = ap.parse_args()
    c = Checks("[pods]")
    scenario_pods(c, os.path.join(a.dir, "pods"))
    print("pods: %d passed, %d failed, %d skipped" % (c.n["PASS"], c.n["FAIL"], c.n["SKIP"]))
    return 1 if c.n["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
