#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The lab's kernel source is the pinned upload, on any day: install-deps
# installs exactly kernel-patches/BASE's version (not the newest the archive
# has), and a pin the archive no longer serves stops install-deps with one
# line that says what to do, before any kernel build starts.
source "$(dirname "$0")/lib.sh"
need_root
need_cmd apt-cache

line=$(grep -v '^#' "$TOP/kernel-patches/BASE" | grep -m1 .) || fail "no base line in BASE"
read -r pkg ver _ <<<"$line"

# 1. the pinned version is the installed one (make check ran install-deps --lab)
have=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) ||
	fail "$pkg not installed: install-deps --lab should have installed $ver"
[ "$have" = "$ver" ] || fail "$pkg $have installed, BASE pins $ver"
log "ok: $pkg $have installed = BASE"
newest=$(apt-cache madison "$pkg" | awk -F' [|] ' 'NR == 1 { print $2 }')
log "archive's newest $pkg: $newest (BASE: $ver)"

# 1b. every newer series' base: installed at its pin, its tarball the pinned
# bytes, and its apt suite scoped so that nothing else comes from it
for b in "$TOP"/kernel-patches/*/BASE; do
	[ -f "$b" ] || continue
	read -r p2 v2 _ extra <<<"$(grep -v '^#' "$b" | grep -m1 .)"
	[ "$(dpkg-query -W -f='${Version}' "$p2" 2>/dev/null)" = "$v2" ] ||
		fail "$p2 not installed at ${b#$TOP/}'s $v2"
	for f in $extra; do
		case $f in
		sha256=*) [ "$(sha256sum "/usr/src/$p2.tar.xz" | cut -d' ' -f1)" = "${f#sha256=}" ] ||
				fail "/usr/src/$p2.tar.xz does not match ${b#$TOP/}'s sha256" ;;
		suite=*) suite=${f#suite=}
			 # a package only that suite has is not installable: the pin holds
			 other=$(apt-cache madison linux-source-7.2 2>/dev/null | head -1)
			 cand=$(apt-cache policy linux-source-7.2 | sed -n 's/^ *Candidate: //p')
			 [ -z "$other" ] || [ "$cand" = "(none)" ] ||
				fail "$suite is not scoped: linux-source-7.2's candidate is $cand"
			 log "ok: $suite scoped (linux-source-7.2 candidate: ${cand:-none})" ;;
		esac
	done
	log "ok: $p2 $v2 installed = ${b#$TOP/}"
done

# 2. a stale pin: a tree whose BASE names an upload no archive has
tree=$TMPD/tree
mkdir -p "$tree/scripts" "$tree/kernel-patches"
cp "$TOP/scripts/install-deps.sh" "$tree/scripts/"
printf '# stale pin\n%s 0.0.1-1~stale 0.0.1\n' "$pkg" >"$tree/kernel-patches/BASE"
t0=$(date +%s)
"$tree/scripts/install-deps.sh" --lab >"$TMPD/out" 2>"$TMPD/err" </dev/null
rc=$?
[ $rc = 1 ] || fail "stale pin: exit $rc, expected 1; stderr: $(cat "$TMPD/err")"
[ "$(wc -l <"$TMPD/err")" = 1 ] || fail "stale pin: expected one line on stderr: $(cat "$TMPD/err")"
grep -q "no longer serves $pkg 0.0.1-1~stale" "$TMPD/err" ||
	fail "stale pin: stderr does not name the pin: $(cat "$TMPD/err")"
# and nothing was changed: the pinned package is still the installed one
[ "$(dpkg-query -W -f='${Version}' "$pkg")" = "$ver" ] || fail "stale pin changed $pkg"
log "ok: stale pin -> rc 1 in $(( $(date +%s) - t0 ))s: $(cat "$TMPD/err")"

# 3. a malformed BASE is one line too
printf '# nothing\n' >"$tree/kernel-patches/BASE"
"$tree/scripts/install-deps.sh" --lab >"$TMPD/out" 2>"$TMPD/err" </dev/null
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$TMPD/err")" = 1 ] && grep -q "no base line" "$TMPD/err" ||
	fail "empty BASE: rc $rc, stderr: $(cat "$TMPD/err")"
pass "install-deps pins $pkg $ver; a stale pin fails in one line"
