#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install the Debian 12 packages devmemtop needs, only those missing.
#   scripts/install-deps.sh          build + run + host tests
#   scripts/install-deps.sh --lab    also the QEMU lab (make vmtest)
#   scripts/install-deps.sh --run    only what building and running needs
set -eu

# building and running devmemtop
BUILD=(make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
       libnl-3-dev libnl-genl-3-dev libjson-c-dev libncurses-dev libmicrohttpd-dev
       libyaml-dev libgnutls28-dev libcrypt-dev libcap-dev
       protobuf-c-compiler libprotobuf-c-dev)
# tests on the host: test bed, oracles, test libraries
TEST=(libcmocka-dev iproute2 python3 tmux linux-perf bpftrace util-linux procps
      prometheus curl libxml2-utils libclang-rt-14-dev
      python3-yaml strace systemd	# exporter tests: rule parsing, unit checks
      ethtool			# NIC kit test (scripts/nic/validate.sh)
      man-db groff-base		# devmemtop(8) lint: man --warnings, lexgrog
      chromium tidy		# HTML reports: headless browser DOM + screenshot, HTML5 check
      openssl			# exporter TLS tests: certificates made at test time
      debhelper mmdebstrap podman runc bc	# make deb; fresh Debian root + image (95-96)
      nodejs			# deploy/ schema validation (97; npm: below)
      python3-scipy)		# compare's oracle: U test, Welch (tests/integration/90)
# the QEMU lab
LAB=(qemu-system-x86 dwarves busybox-static flex bison bc
     libssl-dev cpio xz-utils ccache python3 kmod rsync
     libmnl-dev python3-jsonschema	# ncdevmem: includes libmnl.h; YNL code generator
     iproute2 ethtool python3-yaml	# the kernel's Python selftests, run in the guest on the host's /usr
     socat)	# upstream's devmem.py: its remote end (scenarios/upstream.sh)

# The lab's kernel sources are pinned to one Debian upload each
# (kernel-patches/BASE for 6.12, kernel-patches/<series>/BASE for newer ones):
# "apt-get install linux-source-6.12" would take whatever is newest that day
# and the lab refuses a source it was not checked against. Install exactly
# the pinned version (downgrading a newer one), or stop here with one line
# when the archive no longer serves it. A base from a suite the machine does
# not use (suite=trixie-backports) gets an apt source of its own, pinned so
# that only that one package can come from it.
base_pin() {	# base_pin BASEFILE
	local line pkg ver suite= f have
	line=$(grep -v '^#' "$1" | grep -m1 .) || {
		echo "install-deps.sh: no base line in ${1#"$ROOT"/}" >&2; exit 1; }
	read -r pkg ver _ extra <<<"$line"
	for f in $extra; do case $f in suite=*) suite=${f#suite=} ;; esac; done
	have=$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null || true)
	[ "$have" = "install ok installed $ver" ] && return 0
	[ "$(id -u)" = 0 ] || { missing+=("$pkg=$ver"); return 0; }	# said below
	[ -z "$suite" ] || apt_suite "$suite" "$pkg"
	# a fresh machine has no lists yet: refresh them once before deciding
	apt-cache madison "$pkg" 2>/dev/null | grep -q "| $ver |" ||
		apt-get update -o DPkg::Lock::Timeout=300 >>/tmp/install-deps.log 2>&1 || true
	apt-cache madison "$pkg" 2>/dev/null | grep -q "| $ver |" || {
		echo "install-deps.sh: the archive no longer serves $pkg $ver (${1#"$ROOT"/});" \
		     "move BASE to an upload it serves (apt-cache madison $pkg), then make kseries-build vmtest" >&2
		exit 1; }
	missing+=("$pkg=$ver")
}

# apt_suite SUITE PKG: Debian's SUITE as an apt source whose packages apt
# never installs (priority -1), but PKG (500).
apt_suite() {
	local src=/etc/apt/sources.list.d/devmemtop-$1.sources
	local pref=/etc/apt/preferences.d/devmemtop-$1
	local want_pref
	want_pref=$(printf 'Package: *\nPin: release n=%s\nPin-Priority: -1\n\nPackage: %s\nPin: release n=%s\nPin-Priority: 500\n' "$1" "$2" "$1")
	[ -f "$pref" ] && [ "$(cat "$pref")" = "$want_pref" ] && [ -f "$src" ] && return 0
	printf '%s\n' "$want_pref" >"$pref"
	printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$1" >"$src"
	apt-get update -o DPkg::Lock::Timeout=300 >>/tmp/install-deps.log 2>&1 || true
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
want=("${BUILD[@]}")
case "${1:-}" in
--run)	;;
--lab)	want+=("${TEST[@]}" "${LAB[@]}") ;;
"")	want+=("${TEST[@]}") ;;
*)	echo "install-deps.sh: unknown option '$1' (--run, --lab)" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ "${1:-}" = --lab ]; then
	for b in "$ROOT"/kernel-patches/BASE "$ROOT"/kernel-patches/*/BASE; do
		[ -f "$b" ] && base_pin "$b"
	done
fi
# npm by command: a nodejs from elsewhere may bundle it (Debian's npm would conflict)
[ -n "${1:-}" ] && [ "$1" != --lab ] || command -v npm >/dev/null 2>&1 || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: missing packages (${missing[*]}): run as root" >&2
	exit 1
fi
echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# a fresh machine has no package lists yet; refresh them when a look-up fails
APT=(apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends --allow-downgrades)
if ! "${APT[@]}" "${missing[@]}" >/tmp/install-deps.log 2>&1; then
	apt-get update -o DPkg::Lock::Timeout=300 >>/tmp/install-deps.log 2>&1
	"${APT[@]}" "${missing[@]}" >>/tmp/install-deps.log 2>&1 || {
		echo "install-deps.sh: apt-get install failed, see /tmp/install-deps.log" >&2
		tail -5 /tmp/install-deps.log >&2
		exit 1
	}
fi
