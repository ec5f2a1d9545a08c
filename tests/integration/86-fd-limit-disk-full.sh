#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two resource errors say their real cause in one line (issue 26 item 9):
#  - a hard open-file limit too low for the BPF objects (`ulimit -n 4`):
#    "open file limit is 4 (ulimit -n): needs at least 128 ...", exit 1 from
#    top and export, 2 from record (it said "cannot parse kernel BTF: No such
#    process", libbpf's last errno after EMFILE on every BTF path); a low
#    soft limit under a higher hard one is raised and the run works;
#  - report --html and gate --html onto a full file system: "No space left
#    on device", exit 2 (it said "Input/output error": the page's ferror()
#    hid the write's errno).
source "$(dirname "$0")/lib.sh"
need_root
need_dmt
REC=$TOP/tests/fixtures/lab-patched-bulk.dmtrec
[ -s "$REC" ] || fail "fixture $REC missing"

lowfd() {	# LIMIT-ARGS CMD...: stderr of CMD run under `ulimit LIMIT-ARGS`; exit status in $rc
	local lim=$1
	shift
	rc=0
	out=$(bash -c "exec 2>&1 >/dev/null; ulimit $lim || exit 99; exec \"\$@\"" lowfd "$@") || rc=$?
}
for c in "1 -b -n 1" "1 export --listen 127.0.0.1:0" "2 record -o $TMPD/r.dmtrec -d 1s"; do
	want=${c%% *}	# each command's exit status for an error
	cmd=${c#* }
	lowfd "-n 4" "$DMT" $cmd
	[ "$rc" = "$want" ] || fail "ulimit -n 4, $cmd: exit $rc, want $want ($out)"
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "ulimit -n 4, $cmd: not one line: $out"
	case $out in *"open file limit is 4 (ulimit -n): needs at least 128"*) ;;
	*) fail "ulimit -n 4, $cmd: '$out' does not name the limit" ;; esac
done
log "ulimit -n 4: $out"
lowfd "-Sn 16" "$DMT" -b -n 1
[ "$rc" = 0 ] || fail "soft limit 16 under a higher hard limit: exit $rc ($out)"
log "soft limit 16, hard $(ulimit -Hn): raised, the run works"

mkdir "$TMPD/full"
mount -t tmpfs -o size=64k tmpfs "$TMPD/full" || skip "cannot mount a tmpfs"
trap 'umount "$TMPD/full" 2>/dev/null; cleanup' EXIT
dd if=/dev/zero of="$TMPD/full/fill" bs=4k 2>/dev/null
[ "$(df --output=avail "$TMPD/full" | tail -1 | tr -d ' ')" = 0 ] || fail "the tmpfs is not full"
full() {	# WHAT CMD...: exit 2, one line naming ENOSPC
	local what=$1 rc=0 out
	shift
	out=$("$@" 2>&1 >/dev/null) || rc=$?
	[ "$rc" = 2 ] || fail "$what onto a full disk: exit $rc, want 2 ($out)"
	echo "$out" | grep -qx "devmemtop [a-z]*: cannot write $TMPD/full/[a-z]*.html: No space left on device" ||
		fail "$what onto a full disk: '$out'"
	log "$what: $out"
}
full "report --html" "$DMT" report "$REC" --html "$TMPD/full/r.html"
full "gate --html" "$DMT" gate --spec "$TOP/specs/veth-testbed.yaml" --from "$REC" --html "$TMPD/full/g.html"
pass "fd limit and full disk: one line with the real cause"
