# SPDX-License-Identifier: GPL-2.0
# The Debian package and a fresh Debian 12 root for it (95-*, 96-*); source
# after lib.sh.
#
# deb_build: build/deb/devmemtop_*.deb from this tree (`make deb`), again
# only when it is older than build/devmemtop (which `make` keeps current).
# debroot_base DIR: DIR becomes a fresh minimal Debian 12 root (mmdebstrap
# --variant=minbase from the mirrors apt on this host is configured with).
# Made once and cached as a tarball under $DEBROOT_CACHE keyed by everything
# that decides its package list (suite, variant, sources, mmdebstrap's
# version), so a rerun extracts it instead of bootstrapping again.

DEBROOT_CACHE=${DEBROOT_CACHE:-/var/cache/devmemtop/debroot}
DEBROOT_SUITE=bookworm
DEBROOT_VARIANT=minbase
DEBROOT_SOURCES=${DEBROOT_SOURCES:-/etc/apt/sources.list.d/debian.sources}
DEB=

deb_build() {
	local f
	need_cmd dpkg-buildpackage
	dpkg-query -W -f='${Status}' debhelper 2>/dev/null | grep -q 'ok installed' ||
		skip "debhelper not installed (scripts/install-deps.sh)"
	f=$(ls "$TOP"/build/deb/devmemtop_*.deb 2>/dev/null | head -1)
	if [ -z "$f" ] || [ "$f" -ot "$DMT" ]; then
		log "make deb"
		make -C "$TOP" --no-print-directory deb >"$TMPD/make-deb.log" 2>&1 ||
			fail "make deb: $(tail -5 "$TMPD/make-deb.log")"
		f=$(ls "$TOP"/build/deb/devmemtop_*.deb 2>/dev/null | head -1)
	fi
	[ -f "$f" ] || fail "make deb made no build/deb/devmemtop_*.deb"
	DEB=$f
	log "package $(basename "$DEB")"
}

debroot_key() {
	{
		echo "$DEBROOT_SUITE $DEBROOT_VARIANT"
		dpkg-query -W -f='${Version}\n' mmdebstrap
		cat "$DEBROOT_SOURCES"
	} | sha256sum | cut -c1-16
}

debroot_base() {
	local dir=$1 key tarball t0
	need_cmd mmdebstrap
	[ -r "$DEBROOT_SOURCES" ] || skip "no apt sources at $DEBROOT_SOURCES"
	key=$(debroot_key)
	tarball=$DEBROOT_CACHE/$DEBROOT_SUITE-$DEBROOT_VARIANT-$key.tar
	mkdir -p "$DEBROOT_CACHE"
	t0=$(date +%s.%N)
	(
		flock 9
		[ -s "$tarball" ] && exit 0
		mmdebstrap --variant=$DEBROOT_VARIANT --mode=root --format=tar \
			"$DEBROOT_SUITE" "$tarball.tmp" "$DEBROOT_SOURCES" \
			>"$TMPD/mmdebstrap.log" 2>&1 || exit 1
		mv "$tarball.tmp" "$tarball"
		echo made >"$TMPD/debroot.made"
	) 9>"$DEBROOT_CACHE/.lock" || fail "mmdebstrap: $(tail -5 "$TMPD/mmdebstrap.log")"
	mkdir -p "$dir"
	tar -C "$dir" -xpf "$tarball" || fail "extract $tarball"
	DEBROOT_SECS=$(echo "$(date +%s.%N) - $t0" | bc)
	if [ -f "$TMPD/debroot.made" ]; then
		log "root: mmdebstrap $DEBROOT_SUITE $DEBROOT_VARIANT (cold) + extract: ${DEBROOT_SECS}s -> $tarball"
	else
		log "root: cached $tarball, extract: ${DEBROOT_SECS}s"
	fi
}

# in_root DIR CMD...: CMD chrooted in DIR, in a private mount namespace with
# the host's /proc, /sys (BTF, bpffs) and /dev bound in; nothing outlives it.
in_root() {
	local dir=$1
	shift
	unshare --mount --propagation private -- /bin/sh -c '
		d=$1; shift
		mount --rbind /proc "$d/proc" && mount --rbind /sys "$d/sys" &&
		mount --rbind /dev "$d/dev" || exit 125
		exec chroot "$d" "$@"' in_root "$dir" "$@"
}

# debroot_install_deb DIR: apt-get update + install build/deb's package in
# the root DIR, the way an administrator would (apt fetches the declared
# dependencies; downloaded .debs are kept in $DEBROOT_CACHE/archives).
debroot_install_deb() {
	local dir=$1 t0
	cp /etc/resolv.conf "$dir/etc/resolv.conf"
	cp "$DEB" "$dir/tmp/"
	mkdir -p "$DEBROOT_CACHE/archives/partial" "$DEBROOT_CACHE/lists/partial"
	t0=$(date +%s.%N)
	# apt's lists and downloads persist in the cache: a rerun's update
	# is "Hit" lines, its install reads the .debs already fetched
	# (one apt at a time on the shared cache: flock)
	flock "$DEBROOT_CACHE/.apt.lock" unshare --mount --propagation private -- /bin/sh -c '
		mount --bind "$2/archives" "$1/var/cache/apt/archives" &&
		mount --bind "$2/lists" "$1/var/lib/apt/lists" &&
		chroot "$1" apt-get -q update &&
		DEBIAN_FRONTEND=noninteractive chroot "$1" apt-get -q -y --no-install-recommends \
			install "/tmp/$3"' sh "$dir" "$DEBROOT_CACHE" "$(basename "$DEB")" \
		>"$TMPD/apt.log" 2>&1 ||
		fail "apt-get install of the package in the fresh root: $(tail -5 "$TMPD/apt.log")"
	rm -f "$dir/tmp/$(basename "$DEB")"
	APT_SECS=$(echo "$(date +%s.%N) - $t0" | bc)
	log "apt-get update + install: ${APT_SECS}s, $(grep -c '^Setting up' "$TMPD/apt.log") packages set up"
	grep -q '^Setting up devmemtop ' "$TMPD/apt.log" ||
		fail "apt did not set up devmemtop: $(tail -3 "$TMPD/apt.log")"
}

# debroot_apt DIR PKG...: apt-get update + install PKG... in the root DIR, as
# debroot_install_deb does (the shared cache, one apt at a time).
debroot_apt() {
	local dir=$1
	shift
	cp /etc/resolv.conf "$dir/etc/resolv.conf"
	mkdir -p "$DEBROOT_CACHE/archives/partial" "$DEBROOT_CACHE/lists/partial"
	flock "$DEBROOT_CACHE/.apt.lock" unshare --mount --propagation private -- /bin/sh -c '
		d=$1 c=$2; shift 2
		mount --bind "$c/archives" "$d/var/cache/apt/archives" &&
		mount --bind "$c/lists" "$d/var/lib/apt/lists" &&
		chroot "$d" apt-get -q update &&
		DEBIAN_FRONTEND=noninteractive chroot "$d" apt-get -q -y --no-install-recommends \
			install "$@"' sh "$dir" "$DEBROOT_CACHE" "$@" >"$TMPD/apt-$1.log" 2>&1 ||
		fail "apt-get install $* in the root: $(tail -5 "$TMPD/apt-$1.log")"
}

# deb_rebuilt VERSION: $DEB again as version VERSION (its files unchanged), in
# $TMPD; prints its path. An upgrade to it runs the maintainer scripts of an
# upgrade.
deb_rebuilt() {
	local v=$1 d=$TMPD/rebuilt-$1
	rm -rf "$d" && mkdir -p "$d" && dpkg-deb -R "$DEB" "$d/pkg" &&
		sed -i "s/^Version: .*/Version: $v/" "$d/pkg/DEBIAN/control" &&
		dpkg-deb --root-owner-group -b "$d/pkg" "$d/devmemtop_${v}_amd64.deb" >/dev/null ||
		fail "repacking $DEB as $v"
	echo "$d/devmemtop_${v}_amd64.deb"
}
