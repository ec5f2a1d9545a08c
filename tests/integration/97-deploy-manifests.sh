#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# deploy/*.yaml validate against the Kubernetes API schema (npm's
# kubernetes-models 5.1.0: the OpenAPI schema of Kubernetes 1.3x compiled to
# validators; @kubernetes-models/prometheus-operator 6.0.0 for PodMonitor),
# the validator rejects broken copies of them (so this test can fail), and
# the DaemonSet asks for what docs/deploy.md says and nothing more.
. "$(dirname "$0")/lib.sh"

# The PodMonitor's sampleLimit is a guard above what the DaemonSet's
# exporter can render (issue 37, finding 14): so the DaemonSet must cap its
# pool series (--max-pools N), and N pools at the most series a pool can
# have (35: docs/exporter.md, "Cardinality") plus the host's own must fit.
need_cmd python3
python3 - "$TOP/deploy/daemonset.yaml" "$TOP/deploy/podmonitor.yaml" "$TOP/docs/deploy.md" <<'PY' ||
import re, sys, yaml
ds = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet"][0]
pm = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d and d["kind"] == "PodMonitor"][0]
doc = open(sys.argv[3]).read()
args = ds["spec"]["template"]["spec"]["containers"][0]["args"]
mp = [a.split("=", 1)[1] for a in args if a.startswith("--max-pools=")]
if not mp:
    sys.exit("the DaemonSet passes no --max-pools: the PodMonitor's sampleLimit guards nothing")
n, limit = int(mp[0]), pm["spec"]["sampleLimit"]
need = n * 35 + 5000	# the host, bindings and holders: 242 + 64 bindings x 60 + 30
if need > limit:
    sys.exit("sampleLimit %d below --max-pools=%d x 35 + 5000 = %d" % (limit, n, need))
if "--max-pools=%d" % n not in doc or "sampleLimit: %d" % limit not in doc:
    sys.exit("docs/deploy.md does not name --max-pools=%d and sampleLimit: %d" % (n, limit))
if "--mode=light" in args and re.search(r"holders are\s+unavailable\s+there", doc):
    sys.exit("docs/deploy.md says light mode has no holders; it exports them")
print("--max-pools=%d: at most %d samples, sampleLimit %d" % (n, need, limit))
PY
	fail "deploy/ and docs/deploy.md disagree"

need_cmd node
need_cmd npm
NPMDIR=${NPMDIR:-/var/cache/devmemtop/npm-k8s}
PKGS="kubernetes-models@5.1.0 @kubernetes-models/prometheus-operator@6.0.0"
if [ ! -f "$NPMDIR/.installed" ] || [ "$(cat "$NPMDIR/.installed")" != "$PKGS" ]; then
	mkdir -p "$NPMDIR"
	(cd "$NPMDIR" && npm install --no-audit --no-fund --loglevel=error $PKGS) \
		>"$TMPD/npm.log" 2>&1 || skip "npm install $PKGS failed (registry unreachable?): $(tail -2 "$TMPD/npm.log")"
	echo "$PKGS" >"$NPMDIR/.installed"
fi
cp "$TOP/tests/integration/k8s_validate.mjs" "$NPMDIR/"

# YAML -> JSON (python3-yaml), one array per file
for f in "$TOP"/deploy/*.yaml; do
	python3 -c 'import json, sys, yaml
json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], open(sys.argv[2], "w"))' \
		"$f" "$TMPD/$(basename "$f" .yaml).json" || fail "$f: not YAML"
done
node "$NPMDIR/k8s_validate.mjs" "$TMPD"/*.json >"$TMPD/valid.out" 2>&1 ||
	fail "schema validation: $(grep -v ': valid$' "$TMPD/valid.out")"
sed 's|^.*/||' "$TMPD/valid.out" | while read -r l; do log "$l"; done
[ "$(grep -c ': valid$' "$TMPD/valid.out")" -ge 5 ] || fail "fewer than 5 objects validated"

# Broken copies must be refused: a string port, an unknown enum value, a
# missing required field.
python3 - "$TMPD" <<'PY' || fail "making broken copies"
import copy, json, sys
d = sys.argv[1]
ds = json.load(open(d + "/daemonset.json"))[0]
pm = json.load(open(d + "/podmonitor.json"))[0]
breaks = []
b = copy.deepcopy(ds); b["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "9435"; breaks.append(b)
b = copy.deepcopy(ds); b["spec"]["updateStrategy"]["type"] = "Sometimes"; breaks.append(b)
b = copy.deepcopy(ds); del b["spec"]["selector"]; breaks.append(b)
b = copy.deepcopy(pm); b["spec"]["podMetricsEndpoints"][0]["scheme"] = "gopher"; breaks.append(b)
for i, b in enumerate(breaks):
    json.dump([b], open("%s/broken-%d.json" % (d, i), "w"))
PY
for f in "$TMPD"/broken-*.json; do
	node "$NPMDIR/k8s_validate.mjs" "$f" >"$TMPD/broken.out" 2>&1 &&
		fail "the validator accepted a broken copy: $(cat "$TMPD/broken.out")"
done
log "4 broken copies refused"

# What the DaemonSet holds: host network, no privileged, no escalation, a
# read-only root, all capabilities dropped and exactly these five added.
python3 - "$TMPD/daemonset.json" <<'PY' || fail "DaemonSet security settings"
import json, sys
ds = json.load(open(sys.argv[1]))[0]
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
sc = c["securityContext"]
problems = []
if pod.get("hostNetwork") is not True: problems.append("hostNetwork is not true")
if pod.get("hostPID") or pod.get("hostIPC"): problems.append("hostPID/hostIPC set")
if sc.get("privileged") is not False: problems.append("privileged not false")
if sc.get("allowPrivilegeEscalation") is not False: problems.append("allowPrivilegeEscalation not false")
if sc.get("readOnlyRootFilesystem") is not True: problems.append("root not read-only")
if sc["capabilities"].get("drop") != ["ALL"]: problems.append("not drop ALL")
if sorted(sc["capabilities"].get("add", [])) != ["BPF", "PERFMON", "SETGID", "SETPCAP", "SETUID"]:
    problems.append("capabilities added: %s" % sc["capabilities"].get("add"))
if any(v.get("hostPath") for v in pod.get("volumes", [])): problems.append("a hostPath volume")
r = c["resources"]
if "cpu" not in r["requests"] or "memory" not in r["requests"] or "memory" not in r["limits"]:
    problems.append("resource requests/limits missing")
if problems:
    sys.exit("; ".join(problems))
PY
pass "deploy/ validates against the Kubernetes schema; the DaemonSet holds host network + 5 capabilities, nothing else"
