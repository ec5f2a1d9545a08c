#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate the README's pictures from real runs on the host test bed
# (tests/integration/lib.sh: veth pair in private netns, XDP_PASS, TCP):
#   docs/img/detail-pane.png  the live view's detail pane of the test bed's
#                             pool in an 80x24 tmux terminal, after ~40 s
#   docs/img/html-report.png  devmemtop report --html of one recording
#                             against another as baseline
# Root; needs tmux and chromium (scripts/install-deps.sh). Each image is
# kept under 200 KB.
source "$(dirname "$0")/../tests/integration/lib.sh"
need_root
need_dmt
need_cmd tmux
CHROMIUM=$(command -v chromium) || skip "chromium not installed"
IMG=$TOP/docs/img
mkdir -p "$IMG"
SES=dmt-docimg-$$
trap 'tmux kill-session -t "$SES" 2>/dev/null; cleanup' EXIT

shot() {	# shot HTML PNG WIDTH HEIGHT
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update --no-first-run \
		--disable-sync --user-data-dir="$(mktemp -d "$TMPD/prof.XXXXXX")" \
		--hide-scrollbars --window-size="$3,$4" --screenshot="$2" "file://$1" \
		>/dev/null 2>&1 || fail "chromium screenshot of $1"
	[ "$(stat -c %s "$2")" -lt 204800 ] || fail "$2 is over 200 KB"
	log "$2: $(stat -c %s "$2") bytes"
}

testbed_up
make_stream() { testbed_traffic "$1"; }

# 1. two recordings for the report: a baseline and a longer candidate
make_stream 4
"$DMT" record -o "$TMPD/base.dmtrec" -i 250ms --duration 5s 2>/dev/null || fail "record"
testbed_wait
make_stream 8
"$DMT" record -o "$TMPD/cand.dmtrec" -i 250ms --duration 9s 2>/dev/null || fail "record"
testbed_wait
"$DMT" report "$TMPD/cand.dmtrec" --baseline "$TMPD/base.dmtrec" --html "$TMPD/report.html" ||
	fail "report --html"
shot "$TMPD/report.html" "$IMG/html-report.png" 1000 1650

# 2. the detail pane: select the test bed's pool, let the minute fill a bit
make_stream 110
tmux new-session -d -s "$SES" -x 80 -y 24 -e LANG=C.UTF-8 "$DMT -i 1s"
sleep 3
for i in $(seq 12); do
	tmux send-keys -t "$SES" Enter
	sleep 0.5
	tmux capture-pane -p -t "$SES" | grep -q "^Pool [0-9]* on $IF_RX\b" && break
	tmux send-keys -t "$SES" Escape j
	sleep 0.5
done
sleep 40
tmux capture-pane -e -p -t "$SES" >"$TMPD/pane.ansi"
grep -q "on $IF_RX" "$TMPD/pane.ansi" || fail "the pane is not our pool's"
tmux send-keys -t "$SES" q
# terminal text with its bold/reverse attributes as HTML, then a screenshot
python3 - "$TMPD/pane.ansi" "$TMPD/pane.html" <<'PY'
import html, re, sys
src = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
out = []
for line in src[:24]:
    bold = rev = False
    buf, col = "", 0
    for tok in re.split(r"(\x1b\[[0-9;]*m)", line):
        m = re.fullmatch(r"\x1b\[([0-9;]*)m", tok)
        if m:
            for c in (m.group(1) or "0").split(";"):
                c = int(c or 0)
                if c == 0: bold = rev = False
                elif c == 1: bold = True
                elif c == 7: rev = True
                elif c == 22: bold = False
                elif c == 27: rev = False
            continue
        if tok:
            cls = " ".join(x for x, on in (("b", bold), ("r", rev)) if on)
            buf += '<span class="%s">%s</span>' % (cls, html.escape(tok)) if cls else html.escape(tok)
            col += len(tok)
    # reverse-video lines (title bars) span the terminal
    out.append(buf + (" " * (80 - col) if rev else ""))
out += [""] * (24 - len(out))
open(sys.argv[2], "w", encoding="utf-8").write(
    "<!DOCTYPE html><html><head><meta charset='utf-8'><style>"
    "body{margin:0;background:#1e1e1e}pre{margin:8px;font:14px/17px 'DejaVu Sans Mono',"
    "monospace;color:#d4d4d4}.b{font-weight:bold;color:#fff}.r{background:#d4d4d4;"
    "color:#1e1e1e}</style></head><body><pre>" + "\n".join(out) + "</pre></body></html>")
PY
shot "$TMPD/pane.html" "$IMG/detail-pane.png" 700 424
log "done: $IMG/detail-pane.png $IMG/html-report.png"
