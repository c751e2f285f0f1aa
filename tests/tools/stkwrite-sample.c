// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkwrite-sample: write a .stk file for tests, without BPF.
 *
 *   stkwrite-sample [options] OUT.stk
 *     (default)         a small capture with known totals (see below)
 *     --seed N          instead, random records of every type (format_sample.h)
 *     --small           with --seed: few, short records
 *     --empty           no records at all (with --ancillary/--critical: only that)
 *     --ancillary TAG   add a raw chunk TAG (lowercase first letter)
 *     --critical TAG    add a raw chunk TAG (uppercase: readers must refuse)
 *     --no-close        stop without index and trailer, as if killed
 *     --esym-tables     add an ESYM symbol table (kind 2, 3 symbols, build-id
 *                       ab cd) and a perf map (kind 3, tgid 100, 2 symbols)
 *     --pycode          add two ESYM Python code chunks (kind 4): tgid 100 with
 *                       3 code objects (CPython 3.11), tgid 200 with 1 (3.8)
 *     --pycode-corrupt  add an ESYM kind 4 chunk whose fingerprint is over 24
 *                       bits (corrupt: readers report it and skip it)
 *     --pid-ns          add a pidn chunk: tgid 100 is 7 in its PID namespace,
 *                       tgid 200 is 1 (then, pid reused, 3)
 *
 * The default capture: META mode=profile hostname=testhost; 4 stacks; two
 * CNTS chunks (1 s to 3 s) with 3 rows and 42 samples; one OFFC chunk with
 * 2 rows, 7 episodes, 1.5 s blocked; MAPS for 2 processes (3 snapshots,
 * 8 mappings); 5 kernel symbols; KBID with the kernel and 2 modules; one
 * ESYM; two STAT chunks, the last with samples=42 lost=1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stk.h"
#include "format_sample.h"

#define S 1000000000ull

static int write_known(struct stk_writer *w)
{
	static const struct stk_kv meta[] = {
		{ "mode", "profile" }, { "hostname", "testhost" }, { "kernel", "6.1.0-test" },
		{ "frequency_hz", "49" }, { "command", "cpuwork" },
	};
	static const uint64_t u1[] = { 0x401136, 0x401182, 0x7f0000029d90 };
	static const uint64_t u2[] = { 0x4011a0, 0x401182, 0x7f0000029d90 };
	static const uint64_t k3[] = { 0xffffffff81001000, 0xffffffff81002010 };
	static const uint64_t k4[] = { 0xffffffffc0001000 };
	static const struct stk_stack stacks[] = {
		{ 1, 3, u1 }, { 2, 3, u2 }, { 3, 2, k3 }, { 4, 1, k4 },
	};
	static const struct stk_count c1[] = {
		{ 100, 100, "cpuwork", 1, 3, 0xffffffff81001000, 0, 10 },
		{ 100, 101, "cpuwork", 2, -14, 0, 0, 20 },
	};
	static const struct stk_count c2[] = {
		{ 200, 200, "other", 1, 4, 0, 0, 12 },
	};
	static const struct stk_offcpu off[] = {
		{ { 100, 100, "cpuwork", 1, 3 }, { 0, 0, "", -2, -2 }, 3, 1 * S },
		{ { 200, 200, "other", 2, -14 }, { 0, 0, "", -2, -2 }, 4, S / 2 },
	};
	static const struct stk_mapping m100[] = {
		{ 0x400000, 0x402000, 0, 0x801, 11, 5, 2, { 0xab, 0xcd }, "/usr/bin/cpuwork" },
		{ 0x7f0000000000, 0x7f0000200000, 0, 0x801, 12, 5, 0, { 0 }, "/usr/lib/libc.so.6" },
		{ 0x7ffff7fc0000, 0x7ffff7fc2000, 0, 0, 0, 5, 0, { 0 }, "[vdso]" },
	};
	static const struct stk_mapping m200[] = {
		{ 0x400000, 0x401000, 0, 0x801, 13, 5, 0, { 0 }, "/usr/bin/other (deleted)" },
		{ 0x500000, 0x501000, 0, 0, 0, 3, 0, { 0 }, "" },
	};
	static const struct stk_proc_maps procs[] = {
		{ 100, "cpuwork", 1 * S, 3, m100 }, { 200, "other", 1 * S, 2, m200 },
	};
	static const struct stk_proc_maps again[] = { { 100, "cpuwork", 2 * S, 3, m100 } };
	static const struct stk_ksym ksyms[] = {
		{ 0xffffffff81001000, 0x100, 't', "do_syscall_64", "" },
		{ 0xffffffff81002000, 0x80, 'T', "entry_SYSCALL_64", "" },
		{ 0xffffffff81003000, 0x40, 't', "schedule", "" },
		{ 0xffffffffc0001000, 0x200, 't', "ext4_readdir", "ext4" },
		{ 0xffffffffc0002000, 0x20, 't', "ext4_sync_fs", "ext4" },
	};
	static const struct stk_kobj kobjs[] = {
		{ "[kernel.kallsyms]", 0xffffffff81000000, 0x2000000, 20, { 1, 2, 3 } },
		{ "ext4", 0xffffffffc0000000, 0x10000, 0, { 0 } },
		{ "xfs", 0xffffffffc0100000, 0x10000, 0, { 0 } },
	};
	static const struct stk_stat st1[] = { { "samples", 30 }, { "lost", 0 } };
	static const struct stk_stat st2[] = { { "samples", 42 }, { "lost", 1 } };
	static const uint8_t bid[2] = { 0xab, 0xcd };
	int err;

	if ((err = stk_writer__add_meta(w, meta, 5)) ||
	    (err = stk_writer__add_ksyms(w, ksyms, 5)) ||
	    (err = stk_writer__add_kobjs(w, kobjs, 3)) ||
	    (err = stk_writer__add_maps(w, procs, 2)) ||
	    (err = stk_writer__add_stacks(w, stacks, 4)) ||
	    (err = stk_writer__add_counts(w, 1 * S, 2 * S, c1, 2)) ||
	    (err = stk_writer__add_stats(w, st1, 2)) ||
	    (err = stk_writer__add_maps(w, again, 1)) ||
	    (err = stk_writer__add_counts(w, 2 * S, 3 * S, c2, 1)) ||
	    (err = stk_writer__add_offcpu(w, 1 * S, 3 * S, off, 2)) ||
	    (err = stk_writer__add_esym(w, bid, 2, "symtab", 6)) ||
	    (err = stk_writer__add_stats(w, st2, 2)))
		return err;
	return 0;
}

static int write_esym_tables(struct stk_writer *w)
{
	static const struct stk_esym_sym tab[] = {
		{ 0x1100, 0x40, "main" }, { 0x1140, 0x20, "_Z4spinv" }, { 0x1000, 0x10, "_init" },
	};
	static const struct stk_esym_sym jit[] = {
		{ 0x7f0000100000, 0x80, "LazyCompile:~spin /app/x.js:1" },
		{ 0x7f0000100080, 0x40, "py::work:/app/y.py" },
	};
	static const uint8_t bid[2] = { 0xab, 0xcd };
	int err;

	err = stk_writer__add_esym_symtab(w, bid, 2, STK_ESYM_SRC_SYMTAB, tab, 3);
	return err ?: stk_writer__add_esym_perf_map(w, 100, jit, 2);
}

static int write_pycode(struct stk_writer *w)
{
	static const uint8_t lt[] = { 0x80, 0x00, 0xd8, 0x04, 0x08 };
	static const struct stk_esym_pycode a[] = {
		{ 0x7f0000200000, 0x123456, 10, "Worker.run", "/app/worker.py", lt, sizeof(lt) },
		{ 0x7f0000200100, 0xffffff, 1, "<module>", "<string>", NULL, 0 },
		{ 0x7f0000200200, 0, 42, "f.<locals>.g", "", lt, 2 },
	};
	static const struct stk_esym_pycode b[] = {
		{ 0x10000, 7, 3, "spin", "/tmp/x.py", (const uint8_t *)"\x02\x01", 2 },
	};
	int err;

	err = stk_writer__add_esym_pycode(w, 100, 0x030b, a, 3);
	return err ?: stk_writer__add_esym_pycode(w, 200, 0x0308, b, 1);
}

static int write_pycode_corrupt(struct stk_writer *w)
{
	/* kind 4, tgid 5, version 0x030b, 1 code: addr 0x10, fingerprint
	 * 0x1000000, firstlineno 2, "f", "a", no line table */
	static const uint8_t blob[] = { 4, 5, 0x8b, 0x06, 1, 0x10, 0x80, 0x80, 0x80, 0x08, 2,
					1, 'f', 1, 'a', 0 };

	return stk_writer__add_esym(w, NULL, 0, blob, sizeof(blob));
}

static int write_pid_ns(struct stk_writer *w)
{
	static const struct stk_pid_ns pids[] = {
		{ .tgid = 100, .ns_tgid = 7, .time_ns = S, .pid_ns = 4026532001u },
		{ .tgid = 200, .ns_tgid = 1, .time_ns = S, .pid_ns = 4026532002u },
		{ .tgid = 200, .ns_tgid = 3, .time_ns = 2 * S, .pid_ns = 0 },
	};

	return stk_writer__add_pid_ns(w, pids, 3);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: stkwrite-sample [--seed N [--small] | --empty] [--ancillary TAG]\n"
		   "                      [--critical TAG] [--no-close] [--esym-tables] [--pycode]\n"
		   "                      [--pycode-corrupt] [--pid-ns]\n"
		   "                      OUT.stk\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "small", no_argument, NULL, 'm' },
		{ "ancillary", required_argument, NULL, 'a' },
		{ "critical", required_argument, NULL, 'c' },
		{ "no-close", no_argument, NULL, 'n' },
		{ "empty", no_argument, NULL, 'e' },
		{ "esym-tables", no_argument, NULL, 'y' },
		{ "pid-ns", no_argument, NULL, 'p' },
		{ "pycode", no_argument, NULL, 'Y' },
		{ "pycode-corrupt", no_argument, NULL, 'Z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stk_writer_opts wopts = {
		.sz = sizeof(wopts), .wall_start_ns = 1700000000ull * S, .mono_start_ns = S / 2,
	};
	const char *extra = NULL;
	struct stk_writer *w;
	struct fs_sample s;
	int seeded = 0, small = 0, no_close = 0, empty = 0, esym_tables = 0, pid_ns = 0;
	int pycode = 0, pycode_corrupt = 0;
	uint64_t seed = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			seeded = 1;
			break;
		case 'm':
			small = 1;
			break;
		case 'a':
		case 'c':
			if (strlen(optarg) != 4) {
				fprintf(stderr, "stkwrite-sample: a tag is 4 characters\n");
				return 2;
			}
			extra = optarg;
			break;
		case 'n':
			no_close = 1;
			break;
		case 'e':
			empty = 1;
			break;
		case 'y':
			esym_tables = 1;
			break;
		case 'p':
			pid_ns = 1;
			break;
		case 'Y':
			pycode = 1;
			break;
		case 'Z':
			pycode_corrupt = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		usage(stderr);
		return 2;
	}
	w = stk_writer__open(argv[optind], &wopts);
	if (!w) {
		fprintf(stderr, "stkwrite-sample: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	/* As stkrec once started: a --no-close run leaves the file at its name. */
	err = stk_writer__commit(w);
	if (err) {
		fprintf(stderr, "stkwrite-sample: %s\n", stk_writer__errmsg(w));
		stk_writer__discard(w);
		return 1;
	}
	if (empty) {
		err = 0;
	} else if (seeded) {
		fs_init(&s, seed, small);
		err = fs_write(&s, w);
		fs_free(&s);
	} else {
		err = write_known(w);
	}
	if (!err && esym_tables)
		err = write_esym_tables(w);
	if (!err && pycode)
		err = write_pycode(w);
	if (!err && pycode_corrupt)
		err = write_pycode_corrupt(w);
	if (!err && pid_ns)
		err = write_pid_ns(w);
	if (!err && extra)
		err = stk_writer__add_raw(w, extra, 0, 0, "extra", 5);
	if (err) {
		fprintf(stderr, "stkwrite-sample: %s\n", stk_writer__errmsg(w));
		stk_writer__close(w);
		return 1;
	}
	if (no_close)
		_exit(0);	/* like kill -9: no index, no trailer */
	err = stk_writer__close(w);
	if (err) {
		fprintf(stderr, "stkwrite-sample: close: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
