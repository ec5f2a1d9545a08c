// SPDX-License-Identifier: GPL-2.0
/*
 * Golden outputs of the commands that read recordings (golden.h): `report`
 * (text, --json, --html) and `gate --from` (text, --junit, --json, --html)
 * on the lab recording tests/fixtures/lab-patched-bulk.dmtrec and on the
 * hand-built light-mode run (tests/golden/run-light.dmtrec, itself checked
 * by test_golden). Run in a scratch directory so file names in the outputs
 * are fixed; stdout is captured around each command.
 */
#include <fcntl.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "golden.h"
#include "cmd/commands.h"

static char scratch[] = "/tmp/dmt-golden-cmd-XXXXXX";
static char origin[PATH_MAX];

static void copy(const char *from, const char *to)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");

	if (!a || !b)
		fail_msg("copy %s -> %s: %s", from, to, strerror(errno));
	for (int c; (c = getc(a)) != EOF;)
		putc(c, b);
	fclose(a);
	assert_int_equal(fclose(b), 0);
}

static int setup(void **state)
{
	char p[PATH_MAX + 64];

	golden_init();
	if (!getcwd(origin, sizeof(origin)) || !mkdtemp(scratch))
		return -1;
	snprintf(p, sizeof(p), "%s/../fixtures/lab-patched-bulk.dmtrec", golden_dir);
	if (chdir(scratch))
		return -1;
	copy(p, "lab.dmtrec");
	snprintf(p, sizeof(p), "%s/run-light.dmtrec", golden_dir);
	copy(p, "light.dmtrec");
	snprintf(p, sizeof(p), "%s/../../specs/lab-bulk.yaml", golden_dir);
	copy(p, "lab-bulk.yaml");
	snprintf(p, sizeof(p), "%s/../unit/fixtures/golden-light.yaml", golden_dir);
	copy(p, "light.yaml");
	return 0;
}

static int teardown(void **state)
{
	static const char *const files[] = { "lab.dmtrec", "light.dmtrec", "lab-bulk.yaml",
					     "light.yaml", "out", "out.html", "out.xml",
					     "out.json" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	if (chdir(origin) || rmdir(scratch))
		return -1;
	return 0;
}

/* Run a command with stdout into ./out; returns its exit status. */
static int run_cmd(int (*cmd)(int, char **), char **argv)
{
	int argc = 0, saved, fd, ret;

	while (argv[argc])
		argc++;
	fflush(stdout);
	saved = dup(1);
	fd = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 1);
	close(fd);
	optind = 0;	/* a fresh getopt for every command */
	ret = cmd(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	return ret;
}

static void report(const char *rec, const char *name)
{
	char g[128];

	assert_int_equal(run_cmd(cmd_report, (char *[]){ "report", (char *)rec, NULL }), 0);
	snprintf(g, sizeof(g), "%s-report.txt", name);
	golden_check_file(g, "out");
	assert_int_equal(run_cmd(cmd_report, (char *[]){ "report", "--json", (char *)rec,
							 NULL }), 0);
	snprintf(g, sizeof(g), "%s-report.jsonl", name);
	golden_check_file(g, "out");
	assert_int_equal(run_cmd(cmd_report, (char *[]){ "report", (char *)rec, "--html",
							 "out.html", NULL }), 0);
	snprintf(g, sizeof(g), "%s-report.html", name);
	golden_check_file(g, "out.html");
}

static void gate(const char *spec, const char *rec, const char *name, int want)
{
	char g[128];

	assert_int_equal(run_cmd(cmd_gate, (char *[]){ "gate", "--spec", (char *)spec, "--from",
						       (char *)rec, "--junit", "out.xml",
						       "--json", "out.json", "--html",
						       "out.html", NULL }), want);
	snprintf(g, sizeof(g), "%s-gate.txt", name);
	golden_check_file(g, "out");
	snprintf(g, sizeof(g), "%s-gate.xml", name);
	golden_check_file(g, "out.xml");
	snprintf(g, sizeof(g), "%s-gate.json", name);
	golden_check_file(g, "out.json");
	snprintf(g, sizeof(g), "%s-gate.html", name);
	golden_check_file(g, "out.html");
}

static void test_report_lab(void **state)
{
	report("lab.dmtrec", "lab");
}

static void test_report_light(void **state)
{
	report("light.dmtrec", "light");
}

static void test_gate_lab(void **state)
{
	gate("lab-bulk.yaml", "lab.dmtrec", "lab", 0);
}

static void test_gate_light(void **state)
{
	gate("light.yaml", "light.dmtrec", "light", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_lab),
		cmocka_unit_test(test_report_light),
		cmocka_unit_test(test_gate_lab),
		cmocka_unit_test(test_gate_light),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
