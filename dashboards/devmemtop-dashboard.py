#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generates dashboards/devmemtop.json, the Grafana dashboard for `devmemtop export`.

    python3 dashboards/devmemtop-dashboard.py > dashboards/devmemtop.json

Edit this file, not the JSON: tests/integration/51-export-rules.sh checks the
two agree, and 52-export-names.sh that every metric a panel uses is exported.
"""
import json
DS = {"type": "prometheus", "uid": "${datasource}"}
panels = []
pid = [0]
y = [0]
def nid():
    pid[0] += 1
    return pid[0]
def row(title):
    panels.append({"type": "row", "title": title, "id": nid(), "collapsed": False,
                   "gridPos": {"h": 1, "w": 24, "x": 0, "y": y[0]}, "panels": []})
    y[0] += 1
x = [0]
def place(w, h):
    if x[0] + w > 24:
        x[0] = 0; y[0] += h
    g = {"h": h, "w": w, "x": x[0], "y": y[0]}
    x[0] += w
    if x[0] >= 24:
        x[0] = 0; y[0] += h
    return g
def tgt(expr, legend="", ref="A", fmt=None, instant=False):
    t = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref}
    if fmt: t["format"] = fmt
    if instant: t["instant"] = True; t["range"] = False
    return t
def ts(title, targets, unit="short", w=12, h=8, desc="", thresholds=None, stack=False):
    p = {"type": "timeseries", "title": title, "id": nid(), "datasource": DS,
         "description": desc, "gridPos": place(w, h), "targets": targets,
         "fieldConfig": {"defaults": {"unit": unit, "custom": {"drawStyle": "line", "lineWidth": 1,
                          "fillOpacity": 10, "stacking": {"mode": "normal" if stack else "none"}}},
                         "overrides": []},
         "options": {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull", "max"]},
                     "tooltip": {"mode": "multi"}}}
    if thresholds:
        p["fieldConfig"]["defaults"]["thresholds"] = {"mode": "absolute", "steps": thresholds}
        p["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"] = {"mode": "line"}
    return panels.append(p)
def heat(title, exprs, unit, w=12, h=8, desc=""):
    """exprs: one, or [native, classic]: a target for each kind (one of them is empty)."""
    exprs = [exprs] if isinstance(exprs, str) else exprs
    panels.append({"type": "heatmap", "title": title, "id": nid(), "datasource": DS, "description": desc,
        "gridPos": place(w, h),
        "targets": [tgt(e, "{{le}}", ref=chr(ord("A") + i), fmt="heatmap") for i, e in enumerate(exprs)],
        "options": {"calculate": False, "yAxis": {"unit": unit},
                    "cellGap": 1, "color": {"mode": "scheme", "scheme": "Oranges", "exponent": 0.5},
                    "tooltip": {"show": True, "yHistogram": True}, "legend": {"show": True},
                    "rowsFrame": {"layout": "le"}},
        "fieldConfig": {"defaults": {}, "overrides": []}})
def stat(title, targets, unit="short", w=6, h=8, desc="", thresholds=None):
    p = {"type": "stat", "title": title, "id": nid(), "datasource": DS, "description": desc,
         "gridPos": place(w, h), "targets": targets,
         "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                     "colorMode": "background", "graphMode": "none", "textMode": "value_and_name"},
         "fieldConfig": {"defaults": {"unit": unit, "thresholds": {"mode": "absolute",
                          "steps": thresholds or [{"color": "green", "value": None}]}}, "overrides": []}}
    panels.append(p)
def table(title, expr, w=12, h=8, desc="", mappings=None):
    panels.append({"type": "table", "title": title, "id": nid(), "datasource": DS, "description": desc,
        "gridPos": place(w, h), "targets": [tgt(expr, "", fmt="table", instant=True)],
        "transformations": [{"id": "organize", "options": {"excludeByName": {"Time": True, "__name__": True, "job": True}}}],
        "fieldConfig": {"defaults": {"mappings": mappings or []}, "overrides": []},
        "options": {"showHeader": True}})

I = 'instance=~"$instance"'
B = I + ',ifname=~"$ifname"'
RI = "$__rate_interval"

def lat_quantile(q, fam, by, sel):
    """Either kind: the exact native ns twin (scaled to s) or the classic _seconds buckets."""
    return (f'histogram_quantile({q}, sum by ({by}) (rate({fam}_nanoseconds{{{sel}}}[{RI}]))) / 1e9'
            f' or histogram_quantile({q}, sum by (le, {by}) (rate({fam}_seconds_bucket{{{sel}}}[{RI}])))')

def fleet_quantile(q, by):
    """Refill batch quantile over the selected hosts: native or classic."""
    h = "devmemtop_page_pool_refill_batch_items"
    return (f'histogram_quantile({q}, sum{by and f" by ({by})"} (rate({h}{{{B}}}[{RI}])))'
            f' or histogram_quantile({q}, sum by (le{by and ", " + by}) (rate({h}_bucket{{{B}}}[{RI}])))')

# One line per host first: which of hundreds to look at (then pick it in $instance).
row("Fleet overview")
stat("Hosts reporting", [tgt(f'count(devmemtop_build_info{{{I}}})', "hosts")], w=4,
     desc="Exporters with a current scrape among the selected instances.")
stat("Hosts with a binding over 90 %", [tgt(f'count(max by (instance) (devmemtop_binding_occupancy_ratio{{{I}}}) > 0.9) or vector(0)', "hosts")],
     w=4, desc="Hosts the DevmemBindingOccupancyHigh alert is about (before its 1m hold).",
     thresholds=[{"color": "green", "value": None}, {"color": "red", "value": 1}])
stat("Hosts that leaked niovs (1h)", [tgt(f'count(sum by (instance) (increase(devmemtop_leaked_niovs_total{{{I}}}[1h])) > 0) or vector(0)', "hosts")],
     w=4, thresholds=[{"color": "green", "value": None}, {"color": "red", "value": 1}])
ts("Fleet refill batch p50 / p99", [
    tgt(fleet_quantile(0.5, ""), "fleet p50", "A"),
    tgt(fleet_quantile(0.99, ""), "fleet p99", "B"),
   ], w=12, desc="All selected hosts' refill batches as one histogram (summed, native or classic).")
table("Worst binding occupancy by host", f'topk(20, max by (instance) (devmemtop_binding_occupancy_ratio{{{I}}}))',
      w=8, desc="The 20 fullest hosts: highest binding occupancy on each.")
ts("Refill batch p50 by host", [tgt(fleet_quantile(0.5, "instance"), "{{instance}}")], w=8,
   desc="One line per host: a host whose batches shrink stands out.")
ts("Pool series per host", [
    tgt(f'count by (instance) (devmemtop_page_pool_info{{{I}}})', "pools {{instance}}", "A"),
    tgt(f'sum by (instance) (devmemtop_page_pools_not_exported{{{I}}})', "not exported {{instance}}", "B"),
   ], w=8, desc="Pools exported per host (about 10 series each with native histograms, 20 classic), and pools left out by --iface-include/--iface-exclude or --max-pools (docs/exporter.md, Cardinality).")

row("Devmem bindings")
x[0] = 0
ts("Occupancy per binding", [tgt(f'devmemtop_binding_occupancy_ratio{{{B}}}', "{{ifname}} binding {{binding_id}}")],
   unit="percentunit", desc="(capacity - free) / capacity niovs; the DevmemBindingOccupancyHigh alert fires above 90 % for 1m.",
   thresholds=[{"color": "green", "value": None}, {"color": "red", "value": 0.9}])
ts("Niovs per binding", [
    tgt(f'devmemtop_binding_capacity_niovs{{{B}}}', "capacity {{ifname}}/{{binding_id}}", "A"),
    tgt(f'devmemtop_binding_free_niovs{{{B}}}', "free {{ifname}}/{{binding_id}}", "B"),
    tgt(f'devmemtop_binding_pool_held_niovs{{{B}}}', "in page pools {{ifname}}/{{binding_id}}", "C"),
    tgt(f'devmemtop_binding_socket_held_niovs{{{B}}}', "held by sockets {{ifname}}/{{binding_id}}", "D"),
   ], desc="Where a binding's niovs are. Series the kernel cannot tell (held by sockets on most kernels) are absent, not zero.")
heat("Allocation latency (provider call)",
     f'sum by (le) (increase(devmemtop_binding_alloc_latency_seconds_bucket{{{B}}}[{RI}]))', "s",
     desc="Time per devmem provider allocation call, log2 buckets from the BPF side."
          " The classic _seconds family: every Prometheus has it (the exact native twin is in ns).")
ts("Allocation latency p50 / p99", [
    tgt(lat_quantile(0.5, "devmemtop_binding_alloc_latency", "ifname, binding_id", B), "p50 {{ifname}}/{{binding_id}}", "A"),
    tgt(lat_quantile(0.99, "devmemtop_binding_alloc_latency", "ifname, binding_id", B), "p99 {{ifname}}/{{binding_id}}", "B"),
   ], unit="s", desc="The DevmemAllocLatencyHigh alert fires when p99 stays over 100 us for 5m.",
   thresholds=[{"color": "green", "value": None}, {"color": "red", "value": 0.0001}])
ts("Allocation failures", [tgt(f'sum by (ifname, binding_id) (rate(devmemtop_binding_alloc_failures_total{{{B}}}[{RI}]))', "{{ifname}}/{{binding_id}}")],
   unit="ops", desc="Provider allocations that found no free niov.")
ts("Niovs allocated and released", [
    tgt(f'sum by (ifname, binding_id) (rate(devmemtop_binding_alloc_niovs_total{{{B}}}[{RI}]))', "allocated {{ifname}}/{{binding_id}}", "A"),
    tgt(f'sum by (ifname, binding_id) (rate(devmemtop_binding_released_niovs_total{{{B}}}[{RI}]))', "released {{ifname}}/{{binding_id}}", "B"),
   ], unit="ops")
heat("Release latency (per niov)",
     f'sum by (le) (increase(devmemtop_binding_release_latency_seconds_bucket{{{B}}}[{RI}]))', "s")
stat("Leaked niovs (since exporter start)", [tgt(f'sum(devmemtop_leaked_niovs_total{{{I}}})', "leaked")],
     desc="Niovs outstanding when their binding was freed (kernel: 'outstanding net_iovs').",
     thresholds=[{"color": "green", "value": None}, {"color": "red", "value": 1}])
stat("Outstanding at unbind", [tgt(f'sum(devmemtop_binding_unbind_outstanding_niovs{{{B}}})', "at unbind")],
     thresholds=[{"color": "green", "value": None}, {"color": "orange", "value": 1}])

row("Devmem TX bindings")
x[0] = 0
ts("TX bytes and sends", [
    tgt(f'sum by (ifname, binding_id) (rate(devmemtop_binding_tx_bytes_total{{{B}}}[{RI}]))', "bytes {{ifname}}/{{binding_id}}", "A"),
    tgt(f'sum by (ifname, binding_id) (rate(devmemtop_binding_tx_sendmsg_calls_total{{{B}}}[{RI}]))', "sendmsg {{ifname}}/{{binding_id}}", "B"),
   ], unit="Bps", desc="Devmem TX (7.x bind-tx): bytes sent from each TX binding (axis) and its sendmsg calls."
                        " RX bindings have no TX series.")
ts("TX send errors and niov references in flight", [
    tgt(f'sum by (ifname, binding_id) (rate(devmemtop_binding_tx_errors_total{{{B}}}[{RI}]))', "refused {{ifname}}/{{binding_id}}", "A"),
    tgt(f'sum(rate(devmemtop_devmem_tx_no_binding_total{{{I}}}[{RI}]))', "no TX binding", "B"),
    tgt(f'devmemtop_binding_tx_niov_refs{{{B}}}', "refs {{ifname}}/{{binding_id}}", "C"),
   ], desc="Sends a TX binding refused (an offset past its dma-buf, a route to another device),"
           " sends naming no TX binding, and the skb references on its niovs now.")
heat("TX niov send-to-release time",
     f'sum by (le) (increase(devmemtop_binding_tx_ref_time_seconds_bucket{{{B}}}[{RI}]))', "s", w=24,
     desc="Per TX niov: from its first skb reference (the send) to its last (the skb freed after the device read it).")

row("io_uring zero-copy receive")
x[0] = 0
ts("zcrx area: free, in the kernel, held by user space", [
    tgt(f'sum by (ifname, queue) (devmemtop_page_pool_zcrx_free_niovs{{{B}}})', "free {{ifname}}/q{{queue}}", "A"),
    tgt(f'sum by (ifname, queue) (devmemtop_page_pool_zcrx_kernel_niovs{{{B}}})', "in the kernel {{ifname}}/q{{queue}}", "B"),
    tgt(f'sum by (ifname, queue) (devmemtop_page_pool_zcrx_user_niovs{{{B}}})', "user space {{ifname}}/q{{queue}}", "C"),
   ], stack=True, desc="niovs of each zcrx interface queue's areas at snapshot time: on the freelists, in the kernel"
                       " (pool caches, skbs not yet received) and held by user space (returned through the"
                       " refill ring or not). Other pools have no zcrx series.")
ts("zcrx refill ring: entries taken, pending; allocation failures", [
    tgt(f'sum by (ifname, queue) (rate(devmemtop_page_pool_zcrx_refill_ring_taken_total{{{B}}}[{RI}]))', "taken/s {{ifname}}/q{{queue}}", "A"),
    tgt(f'sum by (ifname, queue) (devmemtop_page_pool_zcrx_refill_ring_pending{{{B}}})', "pending {{ifname}}/q{{queue}}", "B"),
    tgt(f'sum by (ifname, queue) (rate(devmemtop_page_pool_zcrx_alloc_fail_total{{{B}}}[{RI}]))', "failed calls/s {{ifname}}/q{{queue}}", "C"),
   ], desc="Buffers user space returned that the kernel took back per second, those waiting in the ring now,"
           " and provider calls that found ring and areas empty (the queue drops then).")
ts("zcrx refill ring batch p50", [
    tgt(f'histogram_quantile(0.5, sum by (ifname) (rate(devmemtop_page_pool_zcrx_refill_ring_batch_entries{{{B}}}[{RI}])))'
        f' or histogram_quantile(0.5, sum by (le, ifname) (rate(devmemtop_page_pool_zcrx_refill_ring_batch_entries_bucket{{{B}}}[{RI}])))', "p50 {{ifname}}", "A"),
   ], desc="Refill ring entries taken per provider call that took any.")
heat("zcrx provider call latency",
     f'sum by (le) (increase(devmemtop_page_pool_zcrx_alloc_latency_seconds_bucket{{{B}}}[{RI}]))', "s",
     desc="Time per io_pp_zc_alloc_netmems call: one refill of the pool's alloc cache from the ring or the areas.")

row("Page pools")
x[0] = 0
heat("Refill batch size", [
        f'sum(increase(devmemtop_page_pool_refill_batch_items{{{B}}}[{RI}]))',
        f'sum by (le) (increase(devmemtop_page_pool_refill_batch_items_bucket{{{B}}}[{RI}]))'], "none",
     desc="Pages or niovs per slow-path refill of a pool's alloc cache (1..128; 64 = PP_ALLOC_CACHE_REFILL)."
          " Query A: the native histogram (a Prometheus with native histograms); B: the classic buckets (any other).")
ts("Refill batch p50 / mean", [
    # either kind: native (Prometheus with native histograms) or classic
    tgt(f'histogram_quantile(0.5, sum by (ifname) (rate(devmemtop_page_pool_refill_batch_items{{{B}}}[{RI}])))'
        f' or histogram_quantile(0.5, sum by (le, ifname) (rate(devmemtop_page_pool_refill_batch_items_bucket{{{B}}}[{RI}])))', "p50 {{ifname}}", "A"),
    tgt(f'histogram_sum(sum by (ifname) (rate(devmemtop_page_pool_refill_batch_items{{{B}}}[{RI}])))'
        f' / histogram_count(sum by (ifname) (rate(devmemtop_page_pool_refill_batch_items{{{B}}}[{RI}])))'
        f' or sum by (ifname) (rate(devmemtop_page_pool_refill_batch_items_sum{{{B}}}[{RI}])) / sum by (ifname) (rate(devmemtop_page_pool_refill_batch_items_count{{{B}}}[{RI}]))', "mean {{ifname}}", "B"),
   ])
ts("Holds and releases", [
    tgt(f'sum by (ifname, kind) (rate(devmemtop_page_pool_holds_total{{{B}}}[{RI}]))', "holds {{ifname}} ({{kind}})", "A"),
    tgt(f'sum by (ifname, kind) (rate(devmemtop_page_pool_releases_total{{{B}}}[{RI}]))', "releases {{ifname}} ({{kind}})", "B"),
   ], unit="ops", desc="Slow-path page/niov holds and releases per second.")
ts("Inflight per pool", [tgt(f'devmemtop_page_pool_inflight{{{B}}}', "{{ifname}} pool {{pool_id}} ({{kind}})")],
   desc="Kernel hold minus release counters.")
ts("Page pools by kind and state", [tgt(f'sum by (kind, state) (devmemtop_page_pools{{{I}}})', "{{kind}} {{state}}")], stack=True)
ts("Pools destroyed", [tgt(f'sum by (kind) (increase(devmemtop_page_pools_destroyed_total{{{I}}}[{RI}]))', "{{kind}}")])

row("Tool health")
x[0] = 0
table("BPF programs attached", f'devmemtop_bpf_program_attached{{{I}}}', w=8,
      mappings=[{"type": "value", "options": {"0": {"text": "detached", "color": "red"}, "1": {"text": "attached", "color": "green"}}}])
table("Metric availability", f'devmemtop_metric_available{{{I}}}', w=16,
      desc="0 = the collector cannot measure this metric on this kernel; 'reason' says why.",
      mappings=[{"type": "value", "options": {"0": {"text": "unavailable", "color": "orange"}, "1": {"text": "available", "color": "green"}}}])
ts("BPF run time per event", [tgt(f'rate(devmemtop_bpf_program_run_time_seconds_total{{{I}}}[{RI}]) / rate(devmemtop_bpf_program_runs_total{{{I}}}[{RI}])', "{{program}}")],
   unit="s", w=8, desc="Needs kernel.bpf_stats_enabled (export --bpf-stats).")
ts("BPF runs", [tgt(f'rate(devmemtop_bpf_program_runs_total{{{I}}}[{RI}])', "{{program}}")], unit="ops", w=8)
ts("Lost events", [
    tgt(f'rate(devmemtop_ringbuf_drops_total{{{I}}}[{RI}])', "ring buffer drops {{instance}}", "A"),
    tgt(f'rate(devmemtop_map_full_total{{{I}}}[{RI}])', "map full {{instance}}", "B"),
    tgt(f'rate(devmemtop_latency_unmatched_total{{{I}}}[{RI}])', "latency unmatched {{instance}}", "C"),
   ], unit="ops", w=8)
ts("Collection and scrape duration", [
    tgt(f'devmemtop_collection_duration_seconds{{{I}}}', "collection {{instance}}", "A"),
    tgt(f'devmemtop_scrape_duration_seconds{{{I}}}', "scrape render {{instance}}", "B"),
   ], unit="s", w=12)
ts("Snapshot age and errors", [
    tgt(f'time() - devmemtop_last_collection_timestamp_seconds{{{I}}}', "age {{instance}}", "A"),
    tgt(f'rate(devmemtop_collection_errors_total{{{I}}}[{RI}])', "errors/s {{instance}}", "B"),
   ], unit="s", w=12)

dash = {
    "__inputs": [{"name": "DS_PROMETHEUS", "label": "Prometheus", "type": "datasource", "pluginId": "prometheus", "pluginName": "Prometheus"}],
    "__requires": [{"type": "grafana", "id": "grafana", "name": "Grafana", "version": "10.0.0"},
                   {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
                   {"type": "panel", "id": "heatmap", "name": "Heatmap", "version": ""},
                   {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""},
                   {"type": "panel", "id": "stat", "name": "Stat", "version": ""},
                   {"type": "panel", "id": "table", "name": "Table", "version": ""}],
    "title": "devmemtop: page pools and devmem TCP",
    "uid": "devmemtop",
    "description": "Occupancy, allocation latency, refill batches, failures and leaks of devmem TCP bindings and page pools, from devmemtop export.",
    "tags": ["devmemtop", "devmem", "page_pool", "ebpf"],
    "editable": True, "graphTooltip": 1, "schemaVersion": 38, "version": 1,
    "time": {"from": "now-1h", "to": "now"}, "refresh": "30s", "timezone": "",
    "annotations": {"list": [{"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True,
        "hide": True, "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts", "type": "dashboard"}]},
    "templating": {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus", "current": {}, "hide": 0},
        {"name": "instance", "label": "Instance", "type": "query", "datasource": DS,
         "query": {"query": "label_values(devmemtop_build_info, instance)", "refId": "instance"},
         "definition": "label_values(devmemtop_build_info, instance)",
         "includeAll": True, "multi": True, "allValue": ".*", "refresh": 2, "current": {}, "hide": 0},
        {"name": "ifname", "label": "Interface", "type": "query", "datasource": DS,
         "query": {"query": "label_values(devmemtop_page_pool_info{instance=~\"$instance\"}, ifname)", "refId": "ifname"},
         "definition": "label_values(devmemtop_page_pool_info{instance=~\"$instance\"}, ifname)",
         "includeAll": True, "multi": True, "allValue": ".*", "refresh": 2, "current": {}, "hide": 0},
    ]},
    "panels": panels,
}
print(json.dumps(dash, indent=2))
