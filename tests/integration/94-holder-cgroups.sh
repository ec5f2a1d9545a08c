#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Holders by pod (issue 24), what this host can prove: the id the token
# programs keep (bpf_get_current_cgroup_id(), read here by bpftrace's
# `cgroup` builtin, the same helper) of a process placed in a kubelet-style
# cgroup is the inode of that cgroup's directory on the host's real cgroup2
# mount, and devmemtop's resolver (src/core/cgpath.c, through the helper
# cgpath_resolve.c) turns it into that path and the right pod uid and
# container id, for the systemd driver with CRI-O and the cgroupfs driver
# with containerd; once the cgroup is removed, the id is "path unknown".
# Our kubelet-style trees live under a prefix of this test's, which the
# resolver is given as its root (as DEVMEMTOP_CGROUP_ROOT would): seen
# from the host's real root, the same cgroups name kubepods outside the
# kubelet's root and are not pods (issue 37: anyone who may make cgroups
# could name one after any pod).
# The token hooks themselves do not load on this host (fentry refused):
# devmemtop must then say holders are unavailable, with the reason. The
# receiver inside a pod's cgroup with real tokens: the lab's "pods" scenario.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd bpftrace
need_cmd python3
need_dmt

if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	CGROOT=/sys/fs/cgroup
elif [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
	CGROOT=/sys/fs/cgroup/unified	# a hybrid host, like this one
else
	skip "no cgroup2 mount at /sys/fs/cgroup or /sys/fs/cgroup/unified"
fi
cc -O2 -Wall -I"$TOP/src/core" -I"$TOP/bpf" -I"$TOP/build" -o "$TMPD/cgpath_resolve" \
	"$TOP/tests/integration/cgpath_resolve.c" "$TOP/build/libdevmemtop-core.a" \
	$(pkg-config --libs zlib json-c yaml-0.1 libprotobuf-c) -lm -lpthread ||
	fail "build cgpath_resolve.c"

# our own tree under a prefix of this test's, removed at the end
PREFIX=/dmt-test-$$
UID1=$(cat /proc/sys/kernel/random/uuid)
UID2=$(cat /proc/sys/kernel/random/uuid)
CID1=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
CID2=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
SYSD=$PREFIX/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID1//-/_}.slice/crio-$CID1.scope
CGFS=$PREFIX/kubepods/besteffort/pod$UID2/$CID2
rm_tree() { [ -d "$CGROOT$PREFIX" ] && find "$CGROOT$PREFIX" -depth -type d -exec rmdir {} + 2>/dev/null; }
trap 'rm_tree; cleanup' EXIT
mkdir -p "$CGROOT$SYSD" "$CGROOT$CGFS" || fail "mkdir in $CGROOT"

# A process in each container cgroup calls getppid(); bpftrace prints its
# cgroup id (bpftrace -c wants an executable file, split on spaces)
cat >"$TMPD/inner.py" <<'EOT'
import os, sys
with open(sys.argv[1] + "/cgroup.procs", "w") as f:
    f.write(str(os.getpid()))
os.getppid()
EOT
PY=/usr/bin/python3	# an ELF (a pyenv shim is a script)
[ -x "$PY" ] || skip "no /usr/bin/python3"
ids() {	# REL: the cgroup id bpftrace saw for a process in $CGROOT/REL
	timeout 60 bpftrace -q -e 'tracepoint:syscalls:sys_enter_getppid
		/pid == cpid/ { printf("cgroup=%llu\n", cgroup); exit(); }' \
		-c "$PY $TMPD/inner.py $CGROOT$1" 2>"$TMPD/bpftrace.err" | sed -n 's/^cgroup=//p'
}
ID1=$(ids "$SYSD")
ID2=$(ids "$CGFS")
[ -n "$ID1" ] && [ -n "$ID2" ] || fail "bpftrace saw no cgroup id: $(head -3 "$TMPD/bpftrace.err")"
INO1=$(stat -c %i "$CGROOT$SYSD")
INO2=$(stat -c %i "$CGROOT$CGFS")
log "bpf_get_current_cgroup_id(): $ID1, $ID2; directory inodes: $INO1, $INO2"
[ "$ID1" = "$INO1" ] && [ "$ID2" = "$INO2" ] ||
	fail "the cgroup id is not the directory's inode ($ID1/$INO1, $ID2/$INO2)"

out=$("$TMPD/cgpath_resolve" "$CGROOT$PREFIX" "$ID1" "$ID2") || fail "cgpath_resolve: $out"
log "$out"
want1="$ID1	${SYSD#$PREFIX}	pod $UID1 cri-o://$CID1"
want2="$ID2	${CGFS#$PREFIX}	pod $UID2 $CID2"
[ "$(sed -n 1p <<<"$out")" = "$want1" ] || fail "systemd/CRI-O: got '$(sed -n 1p <<<"$out")', want '$want1'"
[ "$(sed -n 2p <<<"$out")" = "$want2" ] || fail "cgroupfs/containerd: got '$(sed -n 2p <<<"$out")', want '$want2'"
# from the host's root: kubepods below /dmt-test-PID is not the kubelet's
out=$("$TMPD/cgpath_resolve" "$CGROOT" "$ID1" "$ID2") || fail "cgpath_resolve: $out"
log "$out"
nap="(not a pod: kubepods outside the kubelet's root)"
want1="$ID1	$SYSD	$SYSD $nap"
want2="$ID2	$CGFS	$CGFS $nap"
[ "$(sed -n 1p <<<"$out")" = "$want1" ] || fail "impersonation, systemd: got '$(sed -n 1p <<<"$out")', want '$want1'"
[ "$(sed -n 2p <<<"$out")" = "$want2" ] || fail "impersonation, cgroupfs: got '$(sed -n 2p <<<"$out")', want '$want2'"

# gone before it was resolved: the id alone (once its process has exited:
# bpftrace does not wait for it)
for i in $(seq 100); do
	[ -z "$(cat "$CGROOT$SYSD/cgroup.procs")" ] && break
	sleep 0.1
done
rmdir "$CGROOT$SYSD" || fail "rmdir $SYSD: $(cat "$CGROOT$SYSD/cgroup.procs")"
out=$("$TMPD/cgpath_resolve" "$CGROOT$PREFIX" "$ID1") || fail "cgpath_resolve: $out"
[ "$out" = "$ID1		cgroup $ID1 (path unknown)" ] || fail "removed cgroup: got '$out'"
log "removed: $out"

# devmemtop on this host: holders as the token hooks allow, never silently
json=$(timeout 60 "$DMT" --json -n 1 2>"$TMPD/dmt.err") || fail "devmemtop --json: $(cat "$TMPD/dmt.err")"
verdict=$(python3 -c '
import json, sys
s = json.loads(sys.stdin.read().splitlines()[-1])
m = s["metrics"]["binding_held_by_sockets"]
if m["available"]:
    ok = isinstance(s["holders"], list) and all("pod_uid" in h for h in s["holders"])
    print(("ok" if ok else "bad"), "holders available: %d rows" % len(s["holders"]))
else:
    ok = s["holders"] is None and bool(m["reason"])
    print(("ok" if ok else "bad"), "holders unavailable: %s" % m["reason"])
' <<<"$json")
log "devmemtop here: ${verdict#* }"
[ "${verdict%% *}" = ok ] || fail "devmemtop --json: $verdict"
pass "cgroup id = inode; both layouts resolve to their pod and container at the kubelet's root, to no pod below another cgroup; a removed cgroup is 'path unknown'"
