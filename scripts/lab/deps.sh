#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# deps.sh: install the Debian packages the lab needs, only those missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read_base

PKGS=(qemu-system-x86 dwarves busybox-static flex bison bc
      libssl-dev libelf-dev cpio xz-utils gcc make git python3 file
      pkg-config libnl-3-dev libnl-genl-3-dev rsync
      libmnl-dev python3-yaml python3-jsonschema ethtool	# ncdevmem build (YNL) and run
      iproute2	# the selftests scenario: the guest runs the host's /usr (python3, yaml, ip, ethtool)
      socat	# upstream's devmem.py sends and listens with it (scenarios/upstream.sh)
      clang libbpf-dev bpftool)	# upstream-more: the netkit tests' BPF objects, their .bss updates
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
# exactly the pinned source (scripts/install-deps.sh says why)
[ "$(dpkg-query -W -f='${Version}' "$BASE_PKG" 2>/dev/null)" = "$BASE_DEBVER" ] ||
	missing+=("$BASE_PKG=$BASE_DEBVER")
[ ${#missing[@]} -eq 0 ] && exit 0
[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}), and not root to install them"
log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || die "apt-get update failed"
apt-get install -y -qq --no-install-recommends --allow-downgrades "${missing[@]}" >/dev/null ||
	die "apt-get install ${missing[*]} failed"
