#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make CFLAGS=...` replaces only the user's flags (issue 13): the project's
# include paths, pkg-config flags and warnings stay (DMT_CFLAGS), so e.g. a
# sanitizer build from the command line compiles. Dry run, nothing built.
source "$(dirname "$0")/lib.sh"
need_cmd make
need_cmd pkg-config
cd "$TOP" || fail "cd $TOP"
pkg=$(pkg-config --cflags libnl-genl-3.0 2>/dev/null | tr ' ' '\n' | grep -m1 '^-I')
[ -n "$pkg" ] || skip "libnl-genl-3.0 development files not installed (scripts/install-deps.sh)"
make -n -B OUTPUT="$TMPD/out" CFLAGS="-O0 -DDMT_USER_FLAG" "$TMPD/out/src/core/util.o" \
	>"$TMPD/make.out" 2>&1 || fail "make -n: $(tail -3 "$TMPD/make.out")"
line=$(grep -m1 -- ' -c src/core/util.c' "$TMPD/make.out")
[ -n "$line" ] || fail "no compile line for src/core/util.c: $(cat "$TMPD/make.out")"
for want in -DDMT_USER_FLAG -Isrc -Ibpf "-I$TMPD/out" "$pkg" -D_GNU_SOURCE -Wall; do
	case " $line " in
	*" $want "*) ;;
	*) fail "make CFLAGS=... dropped $want: $line" ;;
	esac
done
make -n -B OUTPUT="$TMPD/out" LDLIBS="-lfoo" "$TMPD/out/devmemtop" >"$TMPD/link.out" 2>&1
grep -- '-o '"$TMPD/out/devmemtop" "$TMPD/link.out" | grep -q -- '-lbpf.*-lfoo' ||
	fail "make LDLIBS=... dropped the project's libraries: $(grep -- "-o $TMPD/out/devmemtop" "$TMPD/link.out")"
pass "command-line CFLAGS/LDLIBS keep the project's flags"
