# SPDX-License-Identifier: GPL-2.0
# Shared by the bench scripts (sourced after tests/integration/lib.sh).

# The kernel's per-program accounting (run_time_ns, run_cnt) on for the
# run, the old setting and the test bed restored at exit.
bench_bpf_stats_on() {
	old_stats=$(sysctl -n kernel.bpf_stats_enabled)
	restore() { sysctl -qw kernel.bpf_stats_enabled="$old_stats"; cleanup; }
	trap restore EXIT
	sysctl -qw kernel.bpf_stats_enabled=1
}

# The programs a process holds, as bpftool prints them (JSON, one a line).
prog_stats() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
		bpftool -j prog show id "$id" 2>/dev/null
		echo
	done
}
