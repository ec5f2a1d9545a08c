// SPDX-License-Identifier: GPL-2.0
// k8s_validate.mjs FILE.json...: validate Kubernetes objects (one JSON
// array of objects per file, converted from deploy/*.yaml) against the
// Kubernetes API's OpenAPI schema as compiled by the npm package
// kubernetes-models (and @kubernetes-models/prometheus-operator for the
// PodMonitor CRD). Prints one line per object; exit 1 on any error or on
// an object kind it has no schema for.
import { readFileSync } from "node:fs";
import * as core from "kubernetes-models/v1";
import * as apps from "kubernetes-models/apps/v1";
import * as mon from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

const models = {
	"v1/Namespace": core.Namespace, "v1/Service": core.Service, "v1/Secret": core.Secret,
	"apps/v1/DaemonSet": apps.DaemonSet, "monitoring.coreos.com/v1/PodMonitor": mon.PodMonitor,
};
let bad = 0;
for (const f of process.argv.slice(2)) {
	for (const o of JSON.parse(readFileSync(f, "utf8"))) {
		const key = `${o.apiVersion}/${o.kind}`;
		const M = models[key];
		const name = `${f}: ${key} ${o.metadata?.name}`;
		if (!M) { console.log(`${name}: no schema for this kind`); bad++; continue; }
		try {
			new M(o).validate();
			console.log(`${name}: valid`);
		} catch (e) {
			console.log(`${name}: INVALID: ${e.message}`);
			bad++;
		}
	}
}
process.exit(bad ? 1 : 0);
