#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The exporter unit across the package's life, with real dpkg in a fresh
# Debian 12 root (issue 37, finding 4; Debian policy for daemons):
#   fresh install        installed, not enabled (docs/deploy.md), not started
#   enable               systemctl enable, as docs/deploy.md says
#   upgrade              still enabled; the postinst restarts it
#   remove               the prerm stops it; its enablement stays (a conffile-
#                        like state: reinstalling keeps it)
#   purge                no enablement left, nothing of deb-systemd-helper's
# systemd's on-disk state is read with the root's own systemctl
# (is-enabled works offline). No systemd runs in the root (this host's PID 1
# is not systemd and there is no systemd-nspawn), so the start, restart and
# stop themselves are checked as the maintainer scripts dpkg installed and
# ran: each script must carry that action for that case.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deb_lib.sh"

need_root
need_dmt
deb_build
R=$TMPD/root
debroot_base "$R"
# systemd (its systemctl) and deb-systemd-helper first, as on a real host
debroot_apt "$R" systemd init-system-helpers
debroot_install_deb "$R"
U=devmemtop-exporter.service

enabled() { in_root "$R" systemctl is-enabled "$U" 2>/dev/null; }
state() {	# one line: is-enabled, the wants link, deb-systemd-helper's record
	local l=no h=no
	[ -L "$R/etc/systemd/system/multi-user.target.wants/$U" ] && l=yes
	[ -e "$R/var/lib/systemd/deb-systemd-helper-enabled/$U.dsh-also" ] && h=yes
	echo "$(enabled) link=$l dsh=$h"
}
script_has() {	# SCRIPT PATTERN: dpkg's copy of our maintainer script
	grep -Eq "$2" "$R/var/lib/dpkg/info/devmemtop.$1" ||
		fail "devmemtop.$1 has no '$2': $(grep -v '^#' "$R/var/lib/dpkg/info/devmemtop.$1")"
}

# fresh install: not enabled, and the start in postinst is for enabled units
# only (deb-systemd-invoke starts no disabled unit)
s=$(state)
log "fresh install: $s"
[ "${s% dsh=*}" = "disabled link=no" ] || fail "fresh install: want disabled, got '$s'"
script_has postinst 'deb-systemd-invoke \$_dh_action'
script_has postinst '_dh_action=restart'

in_root "$R" systemctl enable "$U" >"$TMPD/enable.log" 2>&1 || fail "systemctl enable: $(cat "$TMPD/enable.log")"
s=$(state)
log "enabled: $s"
[ "${s% dsh=*}" = "enabled link=yes" ] || fail "after enable: '$s'"

# upgrade to a rebuilt version: enabled still, restarted by its postinst
NEW=$(deb_rebuilt 0.1.0+lifecycle1)
cp "$NEW" "$R/tmp/" && in_root "$R" dpkg -i "/tmp/$(basename "$NEW")" >"$TMPD/upgrade.log" 2>&1 ||
	fail "dpkg -i (upgrade): $(tail -5 "$TMPD/upgrade.log")"
grep -q "Unpacking devmemtop (0.1.0+lifecycle1) over (0.1.0)" "$TMPD/upgrade.log" || fail "not an upgrade: $(cat "$TMPD/upgrade.log")"
s=$(state)
log "upgraded: $s"
[ "${s% dsh=*}" = "enabled link=yes" ] || fail "after upgrade: '$s'"
# no stop before the upgrade, the restart after it
[ ! -e "$R/var/lib/dpkg/info/devmemtop.preinst" ] || ! grep -q 'deb-systemd-invoke stop' \
	"$R/var/lib/dpkg/info/devmemtop.preinst" || fail "preinst stops the unit on upgrade"
# remove: stopped by the prerm dpkg runs then (and not on upgrade); the
# unit file goes, dpkg keeps the state
script_has prerm '"\$1" = remove'
script_has prerm 'deb-systemd-invoke stop'
in_root "$R" dpkg -r devmemtop >"$TMPD/remove.log" 2>&1 || fail "dpkg -r: $(tail -5 "$TMPD/remove.log")"
[ ! -e "$R/lib/systemd/system/$U" ] || fail "the unit stayed after remove"
log "removed: unit file gone, link $([ -L "$R/etc/systemd/system/multi-user.target.wants/$U" ] && echo kept || echo gone)"

# purge: nothing of its enablement left
in_root "$R" dpkg -P devmemtop >"$TMPD/purge.log" 2>&1 || fail "dpkg -P: $(tail -5 "$TMPD/purge.log")"
[ ! -L "$R/etc/systemd/system/multi-user.target.wants/$U" ] || fail "the wants link stayed after purge"
left=$(ls "$R/var/lib/systemd/deb-systemd-helper-enabled/" 2>/dev/null | grep devmemtop)
[ -z "$left" ] || fail "deb-systemd-helper state left after purge: $left"
log "purged: no link, no deb-systemd-helper state"
pass "dpkg install/enable/upgrade/remove/purge: disabled on install, enabled across the upgrade with a restart, stopped on remove, forgotten on purge"
