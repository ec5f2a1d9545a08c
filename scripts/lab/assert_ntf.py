#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the "ntf" lab scenario (issue 25; scenarios/ntf.sh): a
page-pool notification locates a listed pool in light mode.

  * light mode (windows once an hour) said the new device's pool
    notification brought a window forward (-vv), after the device came;
  * the new device's page pool (by its ifindex, listed by page-pool-get)
    is located in light's JSON after the page was taken: its address
    known, holds and releases counted from the pool itself, and its
    inflight equal to the kernel's own (page-pool-get's);
  * the page was taken inside the window the notification brought
    forward (the only one open then: the period is an hour), so that
    window is what located the pool (in the snapshot that first listed it
    or later: a snapshot runs its window before its page-pool-get dump).
"""
import os

from labcheck import json_lines as lines, kv, read


def scenario_ntf(c, d):
    dev = kv(read(os.path.join(d, "dev.txt"), ""))
    snaps = [s for s in lines(d, "light.json") if s]
    log = read(os.path.join(d, "light.log"), "") or ""
    c.check("ntf: devmemtop -m light ran and exited 0", bool(snaps) and
            (read(os.path.join(d, "dmt.rc"), "") or "").strip() == "0",
            "%d snapshots, rc %s" % (len(snaps), (read(os.path.join(d, "dmt.rc"), "?") or
                                                  "?").strip()))
    if "ifindex" not in dev:
        c.check("ntf: the new device came up", False, "no ifindex in dev.txt")
        return
    ifx = int(dev["ifindex"])
    fwd_before, fwd_seen = int(dev.get("fwd_before", 0)), int(dev.get("fwd_seen", 0))
    c.check("ntf: page-pool notifications subscribed", "page-pool notifications: subscribed"
            in log, "", "light.log has no subscription line")
    c.check("ntf: the device's pool notification brought a window forward",
            fwd_seen > fwd_before, "windows brought forward: %d before the device, %d after"
            % (fwd_before, fwd_seen), "no 'window brought forward' line after the device came")
    pools = [(k, p) for k, s in enumerate(snaps) for p in s.get("pools") or []
             if p.get("ifindex") == ifx]
    listed = [k for k, p in pools if p.get("netlink_listed")]
    located = [(k, p) for k, p in pools if p.get("addr") and p.get("holds") is not None]
    c.check("ntf: the new device's pool listed by page-pool-get", bool(listed),
            "in %d snapshots" % len(listed), "ifindex %d never listed" % ifx)
    if not located:
        c.check("ntf: the new device's pool located by light mode", False,
                "listed in %d snapshots" % len(listed),
                "never located: no window caught its page")
        return
    k0, p0 = located[0]
    first_listed = listed[0] if listed else None
    if first_listed is not None and k0 < first_listed:
        c.check("ntf: not located before page-pool-get listed it", False,
                "listed in snapshot %d, located in %d" % (first_listed, k0))
    c.check("ntf: the new device's pool located by light mode", True,
            "pool %s at %s, listed in snapshot %s, located in %d: holds %s, releases %s"
            % (p0.get("id"), p0.get("addr"), first_listed, k0, p0.get("holds"),
               p0.get("releases")))
    # the period is an hour: the start's window closed before the first
    # snapshot, so the only window open when the page was taken is one a
    # notification brought forward (its 3 s from its log line)
    at, held = float(dev.get("at", "nan")), float(dev.get("held", "nan"))
    c.check("ntf: the page was taken inside the brought-forward window",
            0 < held - at < 3, "window logged at %.2f s, page taken at %.2f s" % (at, held),
            "the page came outside the window: the check proves nothing")
    same = [(p.get("inflight"), p.get("netlink_inflight")) for _, p in located
            if p.get("state") == "alive" and p.get("netlink_inflight") is not None]
    c.check("ntf: the located pool's inflight is the kernel's (page-pool-get)",
            bool(same) and all(a == b and a > 0 for a, b in same),
            "%d snapshots, (ours, kernel's): %s" % (len(same), sorted(set(same))[:4]))


SCENARIOS = {"ntf": scenario_ntf}
