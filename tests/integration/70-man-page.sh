#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# devmemtop(8): troff warning-free (man --warnings), NAME section parseable
# (lexgrog, as mandb indexes it), installed by `make install` where man
# finds it, every option of every command's --help described in that
# command's section, and every --help pointing to the page.
source "$(dirname "$0")/lib.sh"
need_dmt
need_cmd man
need_cmd lexgrog
need_cmd col
PAGE=$TOP/man/devmemtop.8
[ -f "$PAGE" ] || fail "$PAGE missing"
export LC_ALL=C.UTF-8 MANWIDTH=250

# 1. lint: groff warnings (-ww) go to stderr; there must be none
man --warnings -E UTF-8 -l "$PAGE" >"$TMPD/page.raw" 2>"$TMPD/lint.err" || fail "man -l failed: $(cat "$TMPD/lint.err")"
[ -s "$TMPD/lint.err" ] && fail "man --warnings: $(head -5 "$TMPD/lint.err")"
# the same linter flags a bad request, so a clean run means something
printf '.TH X 8\n.SH NAME\nx \\- y\n.nosuchmacro\n' >"$TMPD/bad.8"
man --warnings -E UTF-8 -l "$TMPD/bad.8" 2>&1 >/dev/null | grep -q "warning" ||
	fail "man --warnings did not flag an undefined macro: the lint proves nothing"
log "man --warnings: clean"

# 2. lexgrog parses the NAME section the way mandb/whatis will
whatis=$(lexgrog "$PAGE") || fail "lexgrog cannot parse NAME: $whatis"
echo "$whatis" | grep -q '"devmemtop - .*devmem' || fail "lexgrog NAME: $whatis"
log "lexgrog: $whatis"

# 3. make install puts it under MANDIR/man8 and man finds it there
make -s -C "$TOP" install DESTDIR="$TMPD/root" PREFIX=/usr >"$TMPD/install.log" 2>&1 ||
	fail "make install: $(tail -3 "$TMPD/install.log")"
[ -f "$TMPD/root/usr/share/man/man8/devmemtop.8" ] || fail "make install: no man8/devmemtop.8"
man -M "$TMPD/root/usr/share/man" 8 devmemtop 2>/dev/null | grep -q "^SYNOPSIS" ||
	fail "man -M <installed> 8 devmemtop does not render"
make -s -C "$TOP" uninstall DESTDIR="$TMPD/root" PREFIX=/usr >/dev/null 2>&1
[ -e "$TMPD/root/usr/share/man/man8/devmemtop.8" ] && fail "make uninstall left the page"
log "make install: \$(MANDIR)/man8/devmemtop.8, man renders it; uninstall removes it"

# 4. each command's options, from its --help, in its own section of the page
col -b <"$TMPD/page.raw" | sed 's/\xe2\x88\x92/-/g; s/\xe2\x80\x90/-/g' >"$TMPD/page.txt"
section() {	# text of subsection "devmemtop $1..." up to the next heading
	awk -v h="   devmemtop $1" '
		index($0, h) == 1 { on = 1; next }
		on && (/^   [^ ]/ || /^[A-Z]/) { exit }
		on { print }' "$TMPD/page.txt"
}
for cmd in top export gate record report compare; do
	"$DMT" "$cmd" --help >"$TMPD/help.$cmd" 2>&1 || fail "$cmd --help exits non-zero"
	grep -q 'devmemtop(8)' "$TMPD/help.$cmd" || fail "$cmd --help does not point to devmemtop(8)"
	if [ "$cmd" = top ]; then section "[top]"; else section "$cmd"; fi >"$TMPD/sec.$cmd"
	[ -s "$TMPD/sec.$cmd" ] || fail "no section for '$cmd' in the page"
	# long options anywhere in the help; short ones where an option line starts
	opts=$( { grep -oE -- '--[a-z][a-z-]+' "$TMPD/help.$cmd"
		  grep -oE -- '^ +-[A-Za-z]\b' "$TMPD/help.$cmd" | tr -d ' '; } | sort -u)
	n=$(echo "$opts" | grep -c .)
	[ "$n" -ge 2 ] || fail "$cmd --help: only $n options found, the parsing is broken"
	for o in $opts; do
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$TMPD/sec.$cmd" ||
			fail "$cmd: option $o (from --help) is not in the man page's $cmd section"
	done
	log "$cmd: $n options, all in its section"
done
"$DMT" --help | grep -q 'devmemtop(8)' || fail "devmemtop --help does not point to devmemtop(8)"
# 5. the sections the issue asks for
for s in "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
	grep -q "^$s" "$TMPD/page.txt" || fail "no $s section"
done
grep -q DEVMEMTOP_KERNEL_BTF "$TMPD/page.txt" || fail "ENVIRONMENT misses DEVMEMTOP_KERNEL_BTF"
for c in top export gate record report compare; do
	awk '/^EXIT STATUS/{on=1;next} /^[A-Z]/{on=0} on' "$TMPD/page.txt" |
		grep -q "devmemtop.*$c" || fail "EXIT STATUS says nothing about $c"
done
pass "devmemtop(8) lints clean, installs, and covers every command's options"
