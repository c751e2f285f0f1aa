// SPDX-License-Identifier: BSD-2-Clause
/*
 * uworacle - the BPF unwinder's oracle (test tool).  Runs CMD, samples it
 * with the unwinder stkrec uses (bpf/unwind.bpf.h, tables from
 * record/unwind/unwinder.c) and, for every user-mode sample, also copies its
 * registers and the top 16 KiB of its stack (tests/tools/uworacle.bpf.c);
 * then unwinds that copy with libdwfl (dwfl_attach_state +
 * dwfl_getthread_frames, elfutils' own CFI unwinder) and compares the two
 * frame by frame.
 *
 *   uworacle [-F HZ] [-v] -- CMD [ARGS...]
 *
 * Prints one line: "compared N samples: M mismatches, S bpf-shorter,
 * O oracle-shorter, F frames; K not compared (...)".  Samples whose walk
 * met an address outside the mappings loaded so far (a library dlopen'ed
 * since the last reload, every 50 ms here) are not compared, only
 * counted: what they test is the reload, not the unwinder.  A mismatch is a frame that differs where
 * both have one; bpf-shorter a stack the BPF walk ended (stop marker)
 * before libdwfl did (within the copied stack); oracle-shorter the other
 * way round (libdwfl ran out of the copy, or stopped).  With -v each
 * mismatch is printed.  Exit 0 when it ran, 1 on errors.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "procmaps.h"
#include "stkrec.h"
#include "unwinder.h"
#include "uworacle.skel.h"

#define ORACLE_STACK 16384

struct oracle_rec {
	uint32_t tgid, tid;
	uint32_t nr;
	uint32_t stack_len;
	uint64_t regs[17];
	uint64_t ips[STKREC_MAX_DEPTH];
	uint8_t stack[ORACLE_STACK];
};

static struct {
	pid_t pid;
	int verbose;
	Dwfl *dwfl;
	const struct oracle_rec *cur;
	uint64_t dw[STKREC_MAX_DEPTH];
	int ndw;
	uint64_t compared, mismatches, bpf_shorter, oracle_shorter, frames;
} g;

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **targ)
{
	(void)dwfl;
	(void)arg;
	if (*targ)
		return 0;
	*targ = (void *)1;
	return g.cur ? (pid_t)g.cur->tid : 0;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **targ)
{
	(void)dwfl;
	(void)arg;
	*targ = (void *)1;
	return g.cur && tid == (pid_t)g.cur->tid;
}

/* Only the copied stack: anything else is not what the sample saw. */
static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	uint64_t sp = g.cur->regs[7];

	(void)dwfl;
	(void)arg;
	if (addr < sp || addr + 8 > sp + g.cur->stack_len)
		return false;
	memcpy(result, g.cur->stack + (addr - sp), 8);
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *targ)
{
	(void)targ;
	return dwfl_thread_state_registers(thread, 0, 17, g.cur->regs);
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

static int frame_cb(Dwfl_Frame *f, void *arg)
{
	Dwarf_Addr pc;
	bool act;

	(void)arg;
	if (!dwfl_frame_pc(f, &pc, &act) || g.ndw >= STKREC_MAX_DEPTH)
		return DWARF_CB_ABORT;
	g.dw[g.ndw++] = pc;
	return DWARF_CB_OK;
}

static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* (Re)report the process's modules: it maps more as it runs. */
static int dwfl_refresh(void)
{
	if (g.dwfl)
		dwfl_end(g.dwfl);
	g.dwfl = dwfl_begin(&dwfl_cbs);
	if (!g.dwfl)
		return -1;
	if (dwfl_linux_proc_report(g.dwfl, g.pid) != 0 || dwfl_report_end(g.dwfl, NULL, NULL) != 0)
		return -1;
	if (!dwfl_attach_state(g.dwfl, NULL, g.pid, &callbacks, NULL))
		return -1;
	return 0;
}

static int on_rec(void *ctx, void *data, size_t size)
{
	const struct oracle_rec *r = data;
	uint32_t nb, i, n;
	int marker;

	(void)ctx;
	if (size < sizeof(*r) || (pid_t)r->tgid != g.pid)
		return 0;
	g.cur = r;
	g.ndw = 0;
	dwfl_getthread_frames(g.dwfl, (pid_t)r->tid, frame_cb, NULL);
	g.cur = NULL;
	if (g.ndw == 0)
		return 0;
	nb = r->nr > STKREC_MAX_DEPTH ? STKREC_MAX_DEPTH : r->nr;
	marker = nb && r->ips[nb - 1] >= STKREC_UW_MARK;
	if (marker)
		nb--;
	n = nb < (uint32_t)g.ndw ? nb : (uint32_t)g.ndw;
	g.compared++;
	g.frames += n;
	for (i = 0; i < n; i++)
		if (r->ips[i] != g.dw[i])
			break;
	if (i < n) {
		g.mismatches++;
		if (g.verbose) {
			fprintf(stderr, "mismatch at frame %u:\n bpf:", i);
			for (i = 0; i < nb; i++)
				fprintf(stderr, " %llx", (unsigned long long)r->ips[i]);
			fprintf(stderr, " marker %llx sp %llx len %u\n dwfl:", marker ? (unsigned long long)r->ips[nb] : 0ULL, (unsigned long long)r->regs[7], r->stack_len);
			for (i = 0; i < (uint32_t)g.ndw; i++)
				fprintf(stderr, " %llx", (unsigned long long)g.dw[i]);
			fprintf(stderr, "\n");
		}
	} else if (nb < (uint32_t)g.ndw) {
		g.bpf_shorter++;
		if (g.verbose) {
			fprintf(stderr, "bpf shorter: %u frames (marker %llx), dwfl %d\n bpf:", nb,
				marker ? (unsigned long long)r->ips[nb] : 0ULL, g.ndw);
			for (i = 0; i < nb; i++)
				fprintf(stderr, " %llx", (unsigned long long)r->ips[i]);
			fprintf(stderr, "\n dwfl:");
			for (i = 0; i < (uint32_t)g.ndw; i++)
				fprintf(stderr, " %llx", (unsigned long long)g.dw[i]);
			fprintf(stderr, "\n");
		}
	} else if (nb > (uint32_t)g.ndw) {
		g.oracle_shorter++;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[256] = { 0 };
	struct uworacle_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct unwinder *uw = NULL;
	struct procmaps *pm = NULL;
	struct unwinder_maps um;
	int ncpu, i, opt, status, sync[2], freq = 199, ret = 1;
	uint64_t last_snap = 0;
	uint32_t key;
	uint8_t one = 1;
	char c = 0;

	while ((opt = getopt(argc, argv, "+F:v")) != -1) {
		if (opt == 'F')
			freq = atoi(optarg);
		else if (opt == 'v')
			g.verbose = 1;
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: uworacle [-F HZ] [-v] -- CMD [ARGS...]\n");
		return 2;
	}
	if (pipe(sync))
		return 1;
	g.pid = fork();
	if (g.pid == 0) {
		close(sync[1]);
		if (read(sync[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	close(sync[0]);
	skel = uworacle_bpf__open();
	if (!skel)
		goto out;
	skel->rodata->unwind_mode = 1; /* auto, as stkrec's default */
	skel->rodata->filter_tgids = 1;
	if (unwinder__configure_obj(skel->obj, 1, 0) ||
	    bpf_program__set_autoload(skel->progs.symbolize_kaddrs, false) ||
	    bpf_program__set_autoload(skel->progs.on_process_fork, false) ||
	    bpf_program__set_autoload(skel->progs.on_process_exec, false) ||
	    bpf_program__set_autoload(skel->progs.on_process_exit, false) ||
	    uworacle_bpf__load(skel)) {
		fprintf(stderr, "uworacle: load BPF: %s\n", strerror(errno));
		goto out;
	}
	key = (uint32_t)g.pid;
	bpf_map_update_elem(bpf_map__fd(skel->maps.tgids), &key, &one, BPF_ANY);
	um.rows_fd = bpf_map__fd(skel->maps.unwind_rows);
	um.rows_cap = bpf_map__max_entries(skel->maps.unwind_rows) * STKREC_UW_CHUNK_ROWS;
	um.pages_fd = bpf_map__fd(skel->maps.unwind_pages);
	um.procs_fd = bpf_map__fd(skel->maps.unwind_procs);
	uw = unwinder__new(&um);
	pm = procmaps__new();
	rb = ring_buffer__new(bpf_map__fd(skel->maps.oracle), on_rec, NULL, NULL);
	if (!uw || !pm || !rb)
		goto out;
	ncpu = libbpf_num_possible_cpus();
	for (i = 0; i < ncpu && i < 256; i++) {
		struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
					     .size = sizeof(a), .freq = 1, .sample_freq = (uint64_t)freq };
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, i, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			continue;
		links[i] = bpf_program__attach_perf_event(skel->progs.on_oracle_sample, fd);
		if (!links[i])
			close(fd);
	}
	if (write(sync[1], &c, 1) != 1)
		goto out;
	close(sync[1]);
	for (;;) {
		pid_t w = waitpid(g.pid, &status, WNOHANG);

		/* Mappings (tables) and modules kept current, every 50 ms. */
		if (w == 0 && now_ns() - last_snap > 50000000ull) {
			struct stk_proc_maps maps = { 0 };
			char comm[16] = "";

			if (procmaps__snapshot(pm, "/proc", (uint32_t)g.pid, comm, 0, &maps) == 0)
				unwinder__add_process(uw, &maps);
			procmaps__free_snapshot(&maps);
			ring_buffer__consume(rb); /* with the modules they were taken with */
			if (dwfl_refresh() != 0)
				fprintf(stderr, "uworacle: dwfl: %s\n", dwfl_errmsg(-1));
			last_snap = now_ns();
		}
		ring_buffer__poll(rb, 10);
		if (w == g.pid)
			break;
	}
	/* Samples still queued belong to a process that is gone: the
	 * modules reported last are still right for them. */
	ring_buffer__consume(rb);
	printf("compared %llu samples: %llu mismatches, %llu bpf-shorter, %llu oracle-shorter, "
	       "%llu frames; %llu not compared (a mapping not loaded yet)\n",
	       (unsigned long long)g.compared, (unsigned long long)g.mismatches,
	       (unsigned long long)g.bpf_shorter, (unsigned long long)g.oracle_shorter,
	       (unsigned long long)g.frames, (unsigned long long)skel->bss->stale_skipped);
	ret = 0;
out:
	for (i = 0; i < 256; i++)
		bpf_link__destroy(links[i]);
	ring_buffer__free(rb);
	unwinder__free(uw);
	procmaps__free(pm);
	if (g.dwfl)
		dwfl_end(g.dwfl);
	uworacle_bpf__destroy(skel);
	return ret;
}
