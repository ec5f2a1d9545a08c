#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A page pool that is destroyed during the gated run keeps what it did:
# stream through the veth, then delete the namespaces (the veth and its
# page_pool go away) while the gate is still collecting (--linger). The pool's holds
# still count and page_pool_release is seen (destroy_inflight has data).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/gate_lib.sh"
need_root
need_dmt
need_cmd python3
testbed_up
make_traffic_cmd
cat >"$TMPD/teardown.sh" <<EOS
#!/bin/bash
"$TMPD/traffic.sh" 2 || exit 1
ip netns del $NS_TX && ip netns del $NS_RX || exit 1
EOS
chmod +x "$TMPD/teardown.sh"
cat >"$TMPD/life.yaml" <<Y
name: pool-lifecycle
interval: 250ms
thresholds:
  - metric: pool.holds
    interface: "$IF_RX"
    expect: [ count >= 64 ]
  - metric: pool.refill_batch
    interface: "$IF_RX"
    expect: [ count > 0, max <= 64 ]
  - metric: pool.destroy_inflight
    interface: "$IF_RX"
    expect: [ max >= 0 ]
Y
# --linger: the pool is torn down asynchronously after the command returns
"$DMT" gate --spec "$TMPD/life.yaml" --json "$TMPD/life.json" --linger 1500ms \
	-- "$TMPD/teardown.sh" >"$TMPD/life.out" 2>&1
rc=$?
cat "$TMPD/life.out"
[ $rc = 0 ] || fail "pool destroyed mid-run: exit $rc, want 0"
python3 - "$TMPD/life.json" <<'PY' || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))
d = {t["metric"] + " " + t["expr"]: t for t in r["thresholds"]}
assert d["pool.destroy_inflight max >= 0"]["observed"] is not None
print("holds after destroy:", d["pool.holds count >= 64"]["observed"],
      "inflight at destroy:", d["pool.destroy_inflight max >= 0"]["observed"])
PY
pass "a destroyed pool keeps its counts; page_pool_release seen"
