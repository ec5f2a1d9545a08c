#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The live view's detail pane in a real terminal (tmux, 80x24) on the veth
# test bed: j/k select our pool, Enter opens its pane (netns by name, refill
# histogram bars, sparklines of the last minute), Esc returns; the help
# overlay clears the box it draws on; at 60x15 and 30x8 the view still
# draws (header, key line) and keeps running; q exits 0 leaving no BPF.
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
need_cmd tmux
need_cmd bpftool
SES=dmt-detail-$$
tmux kill-session -t "$SES" 2>/dev/null
trap 'tmux kill-session -t "$SES" 2>/dev/null; cleanup' EXIT
testbed_up
testbed_traffic 25

cap() { tmux capture-pane -p -t "$SES" >"$TMPD/pane"; }
wait_pane() {	# wait_pane REGEX SECONDS
	local i
	for i in $(seq $(($2 * 5))); do
		cap
		grep -Eq -- "$1" "$TMPD/pane" && return 0
		sleep 0.2
	done
	return 1
}
key() { tmux send-keys -t "$SES" "$@"; sleep 0.4; }

tmux new-session -d -s "$SES" -x 80 -y 24 -e LANG=C.UTF-8 \
	"$DMT -i 500ms; echo EXIT=\$?; sleep 30"
wait_pane "^[0-9]+ +$IF_RX .* alive +[1-9][0-9]*" 15 ||
	fail "no pool row with holds/s for $IF_RX: $(cat "$TMPD/pane")"
# the table names the namespace as ip netns does
grep -Eq "^[0-9]+ +$IF_RX +$NS_RX " "$TMPD/pane" ||
	fail "NETNS column is not '$NS_RX': $(grep -E "$IF_RX" "$TMPD/pane")"
pid=$(pgrep -f "^$DMT -i 500ms" | head -1)
ids=$(bpf_ids_of "$pid")

# select our pool (other test beds' pools may be listed too), open it
found=0
for i in $(seq 12); do
	key Enter
	cap
	if grep -q "^Pool [0-9]* on $IF_RX\b" "$TMPD/pane"; then found=1; break; fi
	key Escape
	key j
done
[ $found = 1 ] || fail "j/Enter never opened the pane of our pool: $(head -3 "$TMPD/pane")"
wait_pane "^  holds/s .* now [0-9.]+k? max" 5 || fail "no holds/s sparkline: $(cat "$TMPD/pane")"
cp "$TMPD/pane" "$TOP/build/test-logs/detail-pane-80x24.txt" 2>/dev/null
grep -q "^  netns $NS_RX (" "$TMPD/pane" || fail "pane: netns not named $NS_RX"
# the default, the devmem mode, samples a pool of pages' refills in windows
grep -Eq "^Refill batches (since start|\(sampled\)): [0-9]+ refills, .*max (6[0-4]|[1-5][0-9]|[1-9])\$" "$TMPD/pane" ||
	fail "pane: no refill summary"
grep -Eq "^ +64 \|#+ *\| [0-9]+ [0-9]+%\$" "$TMPD/pane" || fail "pane: no bar for batches of 64"
grep -Eq "^  inflight .*[▁▂▃▄▅▆▇█]+ now [0-9]+" "$TMPD/pane" || fail "pane: no inflight sparkline"
grep -q "^Esc back" "$TMPD/pane" || fail "pane: no key line"
python3 -c 'import sys; sys.exit(max(len(l) for l in open(sys.argv[1], encoding="utf-8").read().split("\n")) > 80)' \
	"$TMPD/pane" || fail "pane wider than 80 columns"
log "detail pane: $(grep -c . "$TMPD/pane") lines, $(grep '^Refill' "$TMPD/pane")"

# the help overlay over the pane: inside the box only help text
key h
cap
grep -q "toggle this help" "$TMPD/pane" || fail "h shows no help"
python3 - "$TMPD/pane" <<'PY' || fail "help box is not cleared: $(cat "$TMPD/pane")"
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
top = next(i for i, l in enumerate(lines) if "┌" in l)
x0, x1 = lines[top].index("┌"), lines[top].index("┐")
rows = []
for l in lines[top + 1:]:
    if "└" in l:
        break
    inner = l[x0 + 1:x1]
    assert l[x0] == "│" and l[x1] == "│", l
    rows.append(inner.strip())
# every inner line is blank or one of the help lines, nothing else
allowed = re.compile(r"^(|devmemtop keys|[a-zA-Z0-9.?, ]{1,14}\s{2,}\S.*)$")
for r in rows:
    assert allowed.match(r), "stray text in the help box: %r" % r
assert any(r.startswith("q ") and r.endswith("quit") for r in rows), rows
print("help box clean:", len(rows), "rows")
PY
key h
key Escape
wait_pane "^POOL +IFACE +NETNS" 3 || fail "Esc did not return to the tables: $(head -5 "$TMPD/pane")"
log "Esc: back to the tables"

# smaller terminals: still drawn, still running
for size in 60x15 30x8; do
	tmux resize-window -t "$SES" -x "${size%x*}" -y "${size#*x}"
	sleep 1.2
	cap
	head -1 "$TMPD/pane" | grep -q "^devmemtop" || fail "$size: no header: $(cat "$TMPD/pane")"
	tail -1 "$TMPD/pane" | grep -q "^q quit" || fail "$size: no key line: $(cat "$TMPD/pane")"
	key Enter
	cap
	head -1 "$TMPD/pane" | grep -q "^Pool\|^Binding" || fail "$size: pane has no title: $(cat "$TMPD/pane")"
	key Escape
	kill -0 "$pid" || fail "devmemtop died at $size"
	log "$size: header, key line, pane title"
done
key q
wait_pane "^EXIT=" 5 || fail "q did not exit"
grep -q "^EXIT=0" "$TMPD/pane" || fail "exit status: $(grep EXIT= "$TMPD/pane")"
left=$(echo "$ids" | bpf_ids_alive)
[ -z "$left" ] || fail "BPF objects left behind: $(echo $left)"
pass "detail pane of the test bed's pool, help overlay, small terminals, clean exit"
