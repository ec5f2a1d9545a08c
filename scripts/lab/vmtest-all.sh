#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vmtest-all.sh: `make vmtest`. The lab on 6.12 (kernel-patches/series:
# baseline and patched), then on 7.3, the kernel users run
# (kernel-patches/7.3). Both run whatever the first gave; the exit status
# is 0 only if both passed, and the last line says which did not.
set -u
LAB_DIR=$(cd "$(dirname "$0")" && pwd)

echo "vmtest-all: the 6.12 lab"
"$LAB_DIR/vmtest.sh" "$@"
a=$?
echo "vmtest-all: the 6.12 lab exited $a; the 7.3 lab"
DEVMEMTOP_LAB_SERIES=7.3 "$LAB_DIR/vmtest.sh" "$@"
b=$?
echo "vmtest-all: 6.12 lab exit $a, 7.3 lab exit $b"
[ $a = 0 ] && [ $b = 0 ]
