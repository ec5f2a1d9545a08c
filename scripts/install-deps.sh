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
LAB=(qemu-system-x86 linux-source-6.12 dwarves busybox-static flex bison bc
     libssl-dev cpio xz-utils ccache python3 kmod rsync
     libmnl-dev python3-jsonschema	# ncdevmem: includes libmnl.h; YNL code generator
     iproute2 ethtool python3-yaml)	# the kernel's Python selftests, run in the guest on the host's /usr

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
if ! apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}" >/tmp/install-deps.log 2>&1; then
	apt-get update -o DPkg::Lock::Timeout=300 >>/tmp/install-deps.log 2>&1
	apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}" >>/tmp/install-deps.log 2>&1 || {
		echo "install-deps.sh: apt-get install failed, see /tmp/install-deps.log" >&2
		tail -5 /tmp/install-deps.log >&2
		exit 1
	}
fi
