#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# HTTP robustness of devmemtop export: index, /healthz, unknown paths (404),
# other methods (405 + Allow), malformed requests (400/505), oversized
# headers and targets (413/414/431), silent and dripping slow-loris clients
# closed at --http-timeout while scrapes go on; the exporter keeps serving
# valid metrics throughout and exits cleanly.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/export_lib.sh"
need_root
need_dmt
need_cmd curl
need_cmd promtool
need_cmd python3

export_start -i 500ms --http-timeout 2
python3 "$TOP/tests/integration/export_http.py" "$EXP_PORT" 2 || fail "HTTP checks"
kill -0 "$EXP_PID" 2>/dev/null || fail "exporter died during the HTTP checks"
scrape "$TMPD/after.prom"
promtool_lint "$TMPD/after.prom"
export_stop
pass "HTTP robustness checks, exporter served valid metrics afterwards"
