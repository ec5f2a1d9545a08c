#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A container image without any registry: the cached mmdebstrap root plus
# the package (apt), imported with podman. On the host veth + XDP bed it
# runs as uid 65534 with CAP_BPF and CAP_PERFMON only (every other
# capability dropped, not --privileged), host network, read-only root
# filesystem, the runtime's default seccomp profile with bpf() and
# perf_event_open() allowed for CAP_BPF / CAP_PERFMON (seccomp_bpf.py; the
# unchanged Debian 12 profile allows them only with CAP_SYS_ADMIN); it
# drops both capabilities after attach and serves a scrape promtool
# accepts, with the veth's pool. Without either capability it refuses.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"
. "$(dirname "$0")/deb_lib.sh"

need_root
need_dmt
need_cmd podman
need_cmd promtool
deb_build
R=$TMPD/root
debroot_base "$R"
debroot_install_deb "$R"
rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin "$R/etc/resolv.conf"

IMG=localhost/devmemtop-test:$TB_ID
CTR=dmt-test-$TB_ID
CTRS=() PORTS=()
podman_cleanup() {
	local c
	for c in "${CTRS[@]}"; do "${PODMAN[@]}" rm -f "$c" >/dev/null 2>&1; done
	podman rmi -f "$IMG" >/dev/null 2>&1
	cleanup
}
trap podman_cleanup EXIT

t0=$(date +%s.%N)
tar -C "$R" -cf "$TMPD/rootfs.tar" . || fail "tar of the root"
podman import -q --change 'ENTRYPOINT ["/usr/sbin/devmemtop"]' --change 'USER 65534:65534' \
	"$TMPD/rootfs.tar" "$IMG" >"$TMPD/import.log" 2>&1 || fail "podman import: $(tail -3 "$TMPD/import.log")"
log "image $IMG: $(podman image inspect -f '{{.Size}}' "$IMG") bytes, tar + import $(echo "$(date +%s.%N) - $t0" | bc)s"

# This test machine: crun refuses hybrid cgroup hierarchies (v1 + a v2
# mount), so runc with cgroupfs; and root here has no CAP_SYS_RESOURCE, so
# podman's default rlimits (nofile 1048576) cannot be set: explicit ones.
PODMAN=(podman)
if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
	need_cmd runc
	PODMAN=(podman --runtime runc --cgroup-manager=cgroupfs)
fi
python3 "$TOP/tests/integration/seccomp_bpf.py" /usr/share/containers/seccomp.json \
	"$TMPD/seccomp.json" || fail "seccomp profile"
# The flags deploy/daemonset.yaml's securityContext mirrors.
RUN=("${PODMAN[@]}" run --network host --read-only --user 65534:65534 --cap-drop all
     --security-opt no-new-privileges --security-opt seccomp="$TMPD/seccomp.json"
     --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

# Refused without either capability, before loading anything.
for caps in CAP_BPF CAP_PERFMON; do
	out=$("${RUN[@]}" --rm --cap-add "$caps" "$IMG" export --once 2>&1) &&
		fail "started with only $caps: $out"
	echo "$out" | grep -q 'CAP_BPF and CAP_PERFMON' || fail "with only $caps: unexpected error: $out"
done
log "with CAP_BPF only or CAP_PERFMON only: refused (needs both)"

# ctr_check NAME USER CAPS BOUNDING: serve from the image with exactly
# CAPS, wait for the drop, check the process from the host (its bounding
# set must then be BOUNDING) and take a scrape. The default mode (devmem)
# locates the veth's pool of pages in its sampling windows, which attach
# after the drop: every second here, so that the 3 s stream falls in some.
ctr_check() {
	local name=$1 user=$2 caps=$3 bnd_want=$4 port pid st s v bnd i

	port=$(newport)
	"${RUN[@]}" -d --name "$name" --user "$user" --cap-add "$caps" "$IMG" \
		export -v --listen 127.0.0.1:$port -i 500ms --sampling 200ms/1s >"$TMPD/run.log" 2>&1 ||
		fail "podman run: $(tail -3 "$TMPD/run.log")"
	CTRS+=("$name")
	for i in $(seq 1 100); do
		"${PODMAN[@]}" logs "$name" >"$TMPD/export.err" 2>&1
		grep -q 'dropped all capabilities' "$TMPD/export.err" && break
		[ "$("${PODMAN[@]}" inspect -f '{{.State.Running}}' "$name")" = true ] ||
			fail "$name exited: $(tail -3 "$TMPD/export.err")"
		sleep 0.1
	done
	grep -q 'dropped all capabilities' "$TMPD/export.err" ||
		fail "$name: no privilege drop in 10 s: $(tail -3 "$TMPD/export.err")"
	grep -q 'serving http://' "$TMPD/export.err" || sleep 0.5

	# From the host: uid 65534, no capability left in any set, the
	# bounding set what podman gave, no_new_privs, read-only root.
	pid=$("${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$name")
	st=/proc/$pid/status
	grep -q "^Uid:[[:space:]]*65534[[:space:]]" "$st" || fail "$name: not uid 65534: $(grep Uid: "$st")"
	for s in CapInh CapPrm CapEff CapAmb; do
		v=$(awk -v k="$s:" '$1 == k { print $2 }' "$st")
		[ "$((16#$v))" = 0 ] || fail "$name: $s = $v after attach (want 0)"
	done
	bnd=$(awk '$1 == "CapBnd:" { print $2 }' "$st")
	[ "$((16#$bnd))" = "$((bnd_want))" ] || fail "$name: bounding set $bnd, want $bnd_want"
	grep -q '^NoNewPrivs:[[:space:]]*1' "$st" || fail "$name: no_new_privs not set"
	[ "$("${PODMAN[@]}" inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$name")" = true ] ||
		fail "$name: root not read-only"
	"${PODMAN[@]}" exec "$name" /bin/sh -c 'echo x >/usr/x' 2>/dev/null &&
		fail "$name: wrote to the read-only root"
	log "$name ($user, $caps): after attach uid 65534, CapInh/Prm/Eff/Amb 0, CapBnd $bnd, NoNewPrivs 1, read-only root"
	PORTS+=("$port")
}

# ctr_scrape NAME PORT: a scrape promtool accepts, then SIGTERM: exit 0.
ctr_scrape() {
	local name=$1 port=$2 rc

	EXP_URL=http://127.0.0.1:$port
	scrape "$TMPD/$name.txt"
	promtool_lint "$TMPD/$name.txt"
	"${PODMAN[@]}" stop -t 10 "$name" >/dev/null || fail "podman stop $name"
	rc=$("${PODMAN[@]}" inspect -f '{{.State.ExitCode}}' "$name")
	[ "$rc" = 0 ] || fail "$name exited $rc on SIGTERM: $("${PODMAN[@]}" logs "$name" 2>&1 | tail -3)"
}

testbed_up
# podman and systemd style: uid 65534 holding the two as ambient capabilities
# (a non-root exporter cannot shrink its bounding set: it stays these two,
# unusable with no_new_privs)
ctr_check "$CTR" 65534:65534 CAP_BPF,CAP_PERFMON 0xc000000000
# deploy/daemonset.yaml's: Kubernetes gives a non-root container no ambient
# capabilities, so it starts as uid 0 with three more to switch to 65534
# (as root it empties its bounding set before the switch)
ctr_check "$CTR-k8s" 0:0 CAP_BPF,CAP_PERFMON,CAP_SETUID,CAP_SETGID,CAP_SETPCAP 0
# traffic only now: both have attached, both must count the veth pool's holds
testbed_traffic 3
testbed_wait
# until each has a snapshot with the pool's holds in it (60 s at most), not
# a fixed 1 s after the stream
for p in "${PORTS[@]}"; do
	EXP_URL=http://127.0.0.1:$p
	scrape_until_pool "$TMPD/wait.txt" "$IF_RX"
done
ctr_scrape "$CTR" "${PORTS[0]}"
ctr_scrape "$CTR-k8s" "${PORTS[1]}"

for f in "$TMPD/$CTR.txt" "$TMPD/$CTR-k8s.txt"; do
	holds=$(awk -v k="ifname=\"$IF_RX\"" '/^devmemtop_page_pool_holds_total\{/ && index($0, k) { s += $NF } END { print s + 0 }' "$f")
	[ "${holds%.*}" -gt 0 ] || fail "$(basename "$f"): no holds of $IF_RX's pool ($holds)"
	log "$(basename "$f" .txt): $(grep -vc '^#' "$f") samples, promtool clean, $IF_RX pool holds $holds"
done
avail=$(grep -c '^devmemtop_metric_available{.*} 1$' "$TMPD/$CTR.txt")
log "metrics available in the container: $avail ($(grep '^devmemtop_metric_available{.*} 0$' "$TMPD/$CTR.txt" |
	sed 's/.*metric="\([^"]*\)".*/\1/' | tr '\n' ' ')unavailable)"

# The same with the host's root for comparison: the container loses nothing.
"$DMT" export --once -i 500ms >"$TMPD/host.txt" 2>/dev/null || fail "host export --once"
havail=$(grep -c '^devmemtop_metric_available{.*} 1$' "$TMPD/host.txt")
[ "$avail" = "$havail" ] || fail "container has $avail metrics available, root on the host $havail"
pass "image runs with CAP_BPF + CAP_PERFMON only, read-only, host network; drops them; promtool-clean scrape"
