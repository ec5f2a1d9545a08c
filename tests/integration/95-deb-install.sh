#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian package (`make deb`) installs with apt into a fresh minimal
# Debian 12 root (mmdebstrap from this host's apt mirrors, cached under
# /var/cache/devmemtop/debroot) and runs there: --help, one batch snapshot
# (-b -n 1: root, BPF, chrooted with the host's /proc, /sys and /dev) and
# one exporter scrape (export --once), which promtool accepts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"
. "$(dirname "$0")/deb_lib.sh"

need_root
need_dmt
deb_build
R=$TMPD/root
debroot_base "$R"

# What apt has to fetch is what the package declares (${shlibs:Depends}):
# none of the libraries is in a minbase root.
debroot_install_deb "$R"

# Installed where the package says.
for f in /usr/sbin/devmemtop /usr/share/man/man8/devmemtop.8.gz \
	 /lib/systemd/system/devmemtop-exporter.service \
	 /usr/share/devmemtop/dashboards/devmemtop.json \
	 /usr/share/devmemtop/dashboards/devmemtop-rules.yml \
	 /usr/share/devmemtop/specs/veth-testbed.yaml; do
	[ -e "$R$f" ] || fail "$f not installed"
done
grep -q '^ExecStart=/usr/sbin/devmemtop export' "$R/lib/systemd/system/devmemtop-exporter.service" ||
	fail "the packaged unit does not start /usr/sbin/devmemtop"
# Every library resolves inside the root (ldd there, not the host's).
missing=$(in_root "$R" ldd /usr/sbin/devmemtop | grep 'not found')
[ -z "$missing" ] || fail "libraries not found in the fresh root: $missing"

in_root "$R" devmemtop --help >"$TMPD/help.out" 2>&1 || fail "devmemtop --help in the root: $(tail -3 "$TMPD/help.out")"
grep -q 'export' "$TMPD/help.out" || fail "--help does not list export"
log "devmemtop --help: ok"

in_root "$R" devmemtop -b -n 1 -i 200ms >"$TMPD/batch.out" 2>"$TMPD/batch.err" ||
	fail "devmemtop -b -n 1 in the root: $(tail -3 "$TMPD/batch.err")"
grep -q 'Pools:' "$TMPD/batch.out" || fail "-b -n 1 printed no snapshot: $(head -3 "$TMPD/batch.out")"
log "devmemtop -b -n 1: $(grep -m1 'Pools:' "$TMPD/batch.out")"

in_root "$R" devmemtop export --once -i 200ms >"$TMPD/scrape.txt" 2>"$TMPD/export.err" ||
	fail "devmemtop export --once in the root: $(tail -3 "$TMPD/export.err")"
grep -q '^devmemtop_bpf_program_attached' "$TMPD/scrape.txt" ||
	fail "export --once: no devmemtop_bpf_program_attached: $(head -3 "$TMPD/scrape.txt")"
grep -q '^devmemtop_bpf_program_attached{.*} 1$' "$TMPD/scrape.txt" ||
	fail "export --once in the root: no BPF program attached"
need_cmd promtool
promtool_lint "$TMPD/scrape.txt"
log "export --once: $(grep -vc '^#' "$TMPD/scrape.txt") samples, promtool check metrics clean"
pass "package installs with apt in a fresh Debian 12 root and runs there"
