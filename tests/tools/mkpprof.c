// SPDX-License-Identifier: BSD-2-Clause
/*
 * mkpprof: write pprof profiles with the report/output/pprof.c builder, for the
 * tests that read them back with real decoders (protoc, go tool pprof).
 *
 *   mkpprof basic OUT             the fixture profile of tests/golden/pprof_basic.txt
 *   mkpprof random N SEED OUT     N samples over random stacks; prints one
 *                                 line "total V0 V1" (each sample type's sum)
 *
 * Exit 0 ok, 1 failure, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pprof.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct pprof_value_type cpu_types[] = {
	{ "samples", "count" },
	{ "cpu", "nanoseconds" },
};

/* 99 Hz, as stkrec -F 99 would record. */
#define PERIOD_NS (1000000000 / 99)

static struct pprof *new_cpu_profile(void)
{
	struct pprof_opts opts = {
		.sample_types = cpu_types,
		.nr_sample_types = ARRAY_SIZE(cpu_types),
		.period_type = { "cpu", "nanoseconds" },
		.period = PERIOD_NS,
		.time_nanos = 1700000000123456789,
		.duration_nanos = 5000000000,
	};

	return pprof__new(&opts);
}

/* Every call below must succeed; a failure names the step. */
#define TRY(what, call)                                                              \
	do {                                                                         \
		int err_ = (call);                                                   \
		if (err_) {                                                          \
			fprintf(stderr, "mkpprof: %s: %s\n", what, strerror(-err_)); \
			return err_;                                                 \
		}                                                                    \
	} while (0)

/*
 * A small CPU profile shaped like stkreport's: an executable with inline
 * frames and lines, libc with names only, the kernel, a C++ function, an
 * unsymbolized address, the "--" separator pseudo-frame, string and
 * number labels.
 */
static int build_basic(struct pprof *p)
{
	const struct pprof_mapping app = {
		.start = 0x555555554000, .limit = 0x555555559000, .offset = 0,
		.filename = "/usr/bin/app", .build_id = "0123456789abcdef0123456789abcdef01234567",
		.has_functions = true, .has_filenames = true, .has_line_numbers = true,
		.has_inline_frames = true,
	};
	const struct pprof_mapping libc = {
		.start = 0x7ffff7dc3000, .limit = 0x7ffff7f18000, .offset = 0x28000,
		.filename = "/usr/lib/x86_64-linux-gnu/libc.so.6",
		.build_id = "fedcba9876543210fedcba9876543210fedcba98", .has_functions = true,
	};
	const struct pprof_mapping kernel = {
		.start = 0xffffffff81000000, .limit = 0xffffffff83000000,
		.filename = "[kernel.kallsyms]", .build_id = "aabbccddeeff00112233445566778899aabbccdd",
		.has_functions = true,
	};
	uint64_t m_app, m_libc, m_kernel, f_main, f_compute, f_square, f_run, f_start, f_sys,
		f_irq, f_sep, l_sq, l_compute, l_main, l_run, l_start, l_sys, l_irq, l_unknown, l_sep;
	struct pprof_function fn;
	struct pprof_line lines[2];
	int64_t values[2];

	TRY("mapping app", pprof__mapping(p, 1, &app, &m_app));
	TRY("mapping libc", pprof__mapping(p, 2, &libc, &m_libc));
	TRY("mapping kernel", pprof__mapping(p, 3, &kernel, &m_kernel));

	fn = (struct pprof_function){ "main", "main", "/src/app.c", 10 };
	TRY("function", pprof__function(p, &fn, &f_main));
	fn = (struct pprof_function){ "compute", "compute", "/src/app.c", 20 };
	TRY("function", pprof__function(p, &fn, &f_compute));
	fn = (struct pprof_function){ "square", "square", "/src/app.c", 30 };
	TRY("function", pprof__function(p, &fn, &f_square));
	fn = (struct pprof_function){ "ns::Widget::run()", "_ZN2ns6Widget3runEv", "/src/w.cc", 5 };
	TRY("function", pprof__function(p, &fn, &f_run));
	fn = (struct pprof_function){ "__libc_start_call_main", "__libc_start_call_main", NULL, 0 };
	TRY("function", pprof__function(p, &fn, &f_start));
	fn = (struct pprof_function){ "__x64_sys_getpid", "__x64_sys_getpid", NULL, 0 };
	TRY("function", pprof__function(p, &fn, &f_sys));
	fn = (struct pprof_function){ "asm_sysvec_apic_timer_interrupt",
				      "asm_sysvec_apic_timer_interrupt", NULL, 0 };
	TRY("function", pprof__function(p, &fn, &f_irq));
	fn = (struct pprof_function){ "--", "--", NULL, 0 };
	TRY("function", pprof__function(p, &fn, &f_sep));

	/* square() inlined into compute(): innermost first. */
	lines[0] = (struct pprof_line){ f_square, 31 };
	lines[1] = (struct pprof_line){ f_compute, 24 };
	TRY("location", pprof__location(p, m_app, 0x555555555149, lines, 2, &l_sq));
	lines[0] = (struct pprof_line){ f_compute, 25 };
	TRY("location", pprof__location(p, m_app, 0x555555555180, lines, 1, &l_compute));
	lines[0] = (struct pprof_line){ f_main, 12 };
	TRY("location", pprof__location(p, m_app, 0x5555555551c0, lines, 1, &l_main));
	lines[0] = (struct pprof_line){ f_run, 7 };
	TRY("location", pprof__location(p, m_app, 0x555555555200, lines, 1, &l_run));
	lines[0] = (struct pprof_line){ f_start, 0 };
	TRY("location", pprof__location(p, m_libc, 0x7ffff7dec24a, lines, 1, &l_start));
	lines[0] = (struct pprof_line){ f_sys, 0 };
	TRY("location", pprof__location(p, m_kernel, 0xffffffff810c5e10, lines, 1, &l_sys));
	lines[0] = (struct pprof_line){ f_irq, 0 };
	TRY("location", pprof__location(p, m_kernel, 0xffffffff82000ca6, lines, 1, &l_irq));
	TRY("location", pprof__location(p, m_libc, 0x7ffff7e00001, NULL, 0, &l_unknown));
	lines[0] = (struct pprof_line){ f_sep, 0 };
	TRY("location", pprof__location(p, 0, 0, lines, 1, &l_sep));

	{
		const uint64_t stack[] = { l_sq, l_main, l_start };
		const struct pprof_label labels[] = {
			{ .key = "pid", .num = 4242 },
			{ .key = "tid", .num = 4243 },
			{ .key = "comm", .str = "app" },
		};

		values[0] = 60;
		values[1] = 60 * (int64_t)PERIOD_NS;
		TRY("sample", pprof__add_sample(p, stack, ARRAY_SIZE(stack), values, 2, labels,
						ARRAY_SIZE(labels)));
	}
	{
		const uint64_t stack[] = { l_compute, l_main, l_start };
		const struct pprof_label labels[] = {
			{ .key = "pid", .num = 4242 },
			{ .key = "tid", .num = 4244 },
			{ .key = "comm", .str = "app-worker" },
		};

		values[0] = 25;
		values[1] = 25 * (int64_t)PERIOD_NS;
		TRY("sample", pprof__add_sample(p, stack, ARRAY_SIZE(stack), values, 2, labels,
						ARRAY_SIZE(labels)));
	}
	{
		/* A kernel stack under a user one, interrupt frame leaf first. */
		const uint64_t stack[] = { l_irq, l_sys, l_run, l_main, l_start };
		const struct pprof_label labels[] = {
			{ .key = "pid", .num = 4242 },
			{ .key = "tid", .num = 4242 },
			{ .key = "comm", .str = "app" },
		};

		values[0] = 10;
		values[1] = 10 * (int64_t)PERIOD_NS;
		TRY("sample", pprof__add_sample(p, stack, ARRAY_SIZE(stack), values, 2, labels,
						ARRAY_SIZE(labels)));
	}
	{
		/* offwake shape: target frames, "--", waker frames. */
		const uint64_t stack[] = { l_unknown, l_sep, l_sys };
		const struct pprof_label labels[] = {
			{ .key = "pid", .num = 17 },
			{ .key = "tid", .num = 17 },
			{ .key = "comm", .str = "kworker/0:1" },
			{ .key = "waker_pid", .num = 4242 },
			{ .key = "waker_comm", .str = "app" },
			{ .key = "blocked", .num = 1500, .num_unit = "nanoseconds" },
		};

		values[0] = 5;
		values[1] = 5 * (int64_t)PERIOD_NS;
		TRY("sample", pprof__add_sample(p, stack, ARRAY_SIZE(stack), values, 2, labels,
						ARRAY_SIZE(labels)));
	}
	TRY("comment", pprof__add_comment(p, "stk test fixture"));
	return 0;
}

/* xorshift64*: deterministic for a seed, so a failure can be replayed. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/*
 * @n samples whose stacks draw from 50 functions in 3 mappings, with
 * values that vary; prints each sample type's total, which the test
 * compares with what go tool pprof reads back.
 */
static int build_random(struct pprof *p, unsigned long n, uint64_t seed)
{
	const struct pprof_mapping m = {
		.start = 0x400000, .limit = 0x800000, .has_functions = true,
	};
	uint64_t map_ids[3], fn_ids[50], stack[32], total[2] = { 0, 0 }, s = seed | 1;
	char name[32], file[32];
	struct pprof_line line;
	unsigned long i, j, depth;
	int64_t values[2];

	for (i = 0; i < ARRAY_SIZE(map_ids); i++) {
		struct pprof_mapping mi = m;

		/* Distinct files: pprof merges same-file mappings itself. */
		snprintf(file, sizeof(file), "/usr/lib/librand%lu.so", i);
		mi.filename = file;
		mi.start += i << 24;
		mi.limit += i << 24;
		TRY("mapping", pprof__mapping(p, i, &mi, &map_ids[i]));
	}
	for (i = 0; i < ARRAY_SIZE(fn_ids); i++) {
		struct pprof_function fn = { name, name, file, (int64_t)i };

		snprintf(name, sizeof(name), "fn_%lu", i);
		snprintf(file, sizeof(file), "src%lu.c", i % 7);
		TRY("function", pprof__function(p, &fn, &fn_ids[i]));
	}
	for (i = 0; i < n; i++) {
		depth = 1 + next_rand(&s) % ARRAY_SIZE(stack);
		for (j = 0; j < depth; j++) {
			unsigned long f = next_rand(&s) % ARRAY_SIZE(fn_ids), mi = f % 3;

			line = (struct pprof_line){ fn_ids[f], (int64_t)(next_rand(&s) % 4) + 1 };
			TRY("location", pprof__location(p, map_ids[mi],
							0x400000 + (mi << 24) + f * 0x100 +
								(uint64_t)line.line,
							&line, 1, &stack[j]));
		}
		values[0] = 1 + (int64_t)(next_rand(&s) % 1000);
		values[1] = values[0] * PERIOD_NS;
		total[0] += (uint64_t)values[0];
		total[1] += (uint64_t)values[1];
		TRY("sample", pprof__add_sample(p, stack, depth, values, 2, NULL, 0));
	}
	printf("total %" PRIu64 " %" PRIu64 "\n", total[0], total[1]);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: mkpprof basic OUT | mkpprof random N SEED OUT\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct pprof *p = NULL;
	const char *out;
	int fd = -1, ret = 1, err;

	if (argc == 3 && strcmp(argv[1], "basic") == 0)
		out = argv[2];
	else if (argc == 5 && strcmp(argv[1], "random") == 0)
		out = argv[4];
	else
		return usage();

	p = new_cpu_profile();
	if (!p) {
		fprintf(stderr, "mkpprof: pprof__new: %s\n", strerror(errno));
		goto out;
	}
	if (argc == 3)
		err = build_basic(p);
	else
		err = build_random(p, strtoul(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
	if (err)
		goto out;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "mkpprof: %s: %s\n", out, strerror(errno));
		goto out;
	}
	err = pprof__write(p, fd);
	if (err) {
		fprintf(stderr, "mkpprof: writing %s: %s\n", out, strerror(-err));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		fprintf(stderr, "mkpprof: closing %s: %s\n", out, strerror(errno));
		goto out;
	}
	fd = -1;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	pprof__free(p);
	return ret;
}
