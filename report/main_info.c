// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkreport info [--chunks] FILE: what a capture holds and whether it is
 * sound.  Output is "key: value" lines (grouped under "[segment N]",
 * "[total]" and "[chunks]" headings) so scripts and tests can grep it.
 * Every read error also goes to stderr as one line naming the file and the
 * byte offset; exit 0 for a sound file, 1 for a damaged or unclosed one
 * (after printing everything recovered), 2 for usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "info.h"
#include "main_args.h"
#include "output.h"
#include "slice.h"
#include "stk.h"
#include "symbols_info.h"
#include "textsafe.h"
#include "timeline.h"
#include "unwind_info.h"

/* Errors printed one per line; the rest are only counted. */
#define MAX_ERROR_LINES 100
/* Timeline: at most this many lines per segment, bars this wide. */
#define TIMELINE_LINES 60
#define TIMELINE_BAR 40

struct info_opts {
	int chunks;		/* --chunks: list every chunk */
	int symbols;		/* --symbols: where each module's symbols come from */
};

/* The option table: one entry per option, so new ones are one line here
 * and one case below. */
static const struct option long_opts[] = {
	{ "chunks", no_argument, NULL, 'c' },
	{ "symbols", no_argument, NULL, 's' },
	{ "sysroot", required_argument, NULL, 'R' },
	{ "debug-dir", required_argument, NULL, 'D' },
	TIME_SLICE_LONG_OPTS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: stkreport info [--chunks] [--symbols [--sysroot DIR] [--debug-dir DIR]...] FILE.stk\n"
		"\n"
		"Print what a .stk capture holds (META facts, file header, chunk counts,\n"
		"totals, the recorder's last statistics) and validate every chunk.\n"
		"FILE may be '-' for standard input.\n"
		"\n"
		"  -c, --chunks   also list every chunk: segment, seq, offset, tag, sizes, interval\n"
		"  -s, --symbols  per module: samples, build-id, the file its symbols come from\n"
		"                 or why none (--sysroot DIR, --debug-dir DIR as for the report)\n"
		"      --since SECONDS, --until SECONDS\n"
		"                 the timeline of that slice only, and its total (the\n"
		"                 report's rule: intervals by their midpoint)\n"
		"  -h, --help     this help\n"
		"\n"
		"Each segment ends with its timeline: samples (off-CPU: episodes and\n"
		"blocked time) per second from its start, or per 2, 5, 10... s so that\n"
		"it fits in 60 lines, with a bar; a flush interval counts in the line\n"
		"of its midpoint, so a line's bounds given to --since/--until select\n"
		"exactly that line.\n"
		"\n"
		"Exit status: 0 sound and closed cleanly, 1 damaged, truncated or not\n"
		"closed cleanly (after printing what was recovered), 2 usage error.\n");
}

static void print_uuid(FILE *out, const uint8_t *u)
{
	int i;

	for (i = 0; i < 16; i++)
		fprintf(out, "%02x%s", u[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
}

static void print_wall(FILE *out, uint64_t ns)
{
	time_t sec = ns / 1000000000u;
	struct tm tm;
	char buf[32];

	if (!ns || !gmtime_r(&sec, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm)) {
		fprintf(out, "unknown");
		return;
	}
	fprintf(out, "%s.%09" PRIu64 "Z", buf, ns % 1000000000u);
}

static void print_seconds(FILE *out, const char *key, uint64_t ns)
{
	fprintf(out, "%s: %" PRIu64 ".%09" PRIu64 " s\n", key, ns / 1000000000u, ns % 1000000000u);
}

static void print_totals(FILE *out, const struct info_totals *t)
{
	int type;

	fprintf(out, "chunks: %" PRIu64 "\n", t->chunks);
	for (type = STK_CHUNK_META; type < INFO_NR_TYPES; type++)
		if (t->by_type[type])
			fprintf(out, "chunks %s: %" PRIu64 "\n", stk_chunk_type__tag(type),
			       t->by_type[type]);
	if (t->by_type[STK_CHUNK_UNKNOWN])
		fprintf(out, "chunks unknown: %" PRIu64 "\n", t->by_type[STK_CHUNK_UNKNOWN]);
	fprintf(out, "bytes compressed: %" PRIu64 "\n", t->bytes_comp);
	fprintf(out, "bytes raw: %" PRIu64 "\n", t->bytes_raw);
	if (t->bytes_comp)
		fprintf(out, "compression ratio: %.2f\n", (double)t->bytes_raw / t->bytes_comp);
	if (t->t_last) {
		print_seconds(out, "interval", t->t_last - t->t_first);
		fprintf(out, "interval start ns: %" PRIu64 "\n", t->t_first);
		fprintf(out, "interval end ns: %" PRIu64 "\n", t->t_last);
	}
	fprintf(out, "count rows: %" PRIu64 "\n", t->count_rows);
	fprintf(out, "samples: %" PRIu64 "\n", t->samples);
	if (t->by_type[STK_CHUNK_OFFC]) {
		fprintf(out, "off-cpu rows: %" PRIu64 "\n", t->offcpu_rows);
		fprintf(out, "off-cpu episodes: %" PRIu64 "\n", t->offcpu_count);
		print_seconds(out, "off-cpu blocked time", t->blocked_ns);
	}
	if (t->by_type[STK_CHUNK_TRCE]) {
		fprintf(out, "trace rows: %" PRIu64 "\n", t->trace_rows);
		fprintf(out, "trace events: %" PRIu64 "\n", t->trace_events);
		for (type = 0; type < INFO_TRACE_EVENTS; type++)
			if (t->trace_by_event[type])
				fprintf(out, "trace event %d: %" PRIu64 "\n", type,
					t->trace_by_event[type]);
	}
	fprintf(out, "stacks: %" PRIu64 "\n", t->stacks);
	fprintf(out, "processes with maps: %" PRIu64 "\n", t->procs_with_maps);
	fprintf(out, "map snapshots: %" PRIu64 "\n", t->map_snapshots);
	fprintf(out, "mappings: %" PRIu64 "\n", t->mappings);
	fprintf(out, "kernel symbols: %" PRIu64 "\n", t->ksyms);
	fprintf(out, "kernel images: %" PRIu64 "\n", t->kernel_images);
	fprintf(out, "kernel modules: %" PRIu64 "\n", t->modules);
	if (t->esyms) {
		fprintf(out, "embedded symbol tables: %" PRIu64 "\n", t->esyms);
		fprintf(out, "embedded symbols: %" PRIu64 "\n", t->esym_syms);
		if (t->esym_pycodes)
			fprintf(out, "embedded python code objects: %" PRIu64 "\n",
				t->esym_pycodes);
		/* What --embed-symbols costs: the payloads, compressed. */
		fprintf(out, "embedded bytes: %" PRIu64 "\n", t->esym_bytes);
	}
}

/*
 * An empty --since/--until slice is an error, as the report's: one line on
 * stderr with the recorded duration (segment 0's META), to slice within.
 */
static void empty_slice(const char *path, const struct info *in, const struct time_slice *s)
{
	const char *d = info__meta(in, 0, "duration_ns");
	char span[64] = "", until[32] = "the end";

	if (d && *d)
		snprintf(span, sizeof(span), "; the capture lasts %.1f s", strtod(d, NULL) / 1e9);
	if (s->until_ns != UINT64_MAX)
		snprintf(until, sizeof(until), "%.9g s", (double)s->until_ns / 1e9);
	textline__printf(stderr, "stkreport: %s: no samples in the slice %.9g s to %s%s (the timeline without --since/--until shows where they are)",
			 path, (double)s->since_ns / 1e9, until, span);
}

/* The timeline of segment @i (see the --help text). */
static int print_timeline(FILE *out, const struct info *in, const struct timeline *tl, uint32_t i,
			  const struct time_slice *slice, uint64_t *kept)
{
	const char *fl = info__meta(in, i, "flush_interval_ns");
	uint64_t width, max = 0, total = 0, blocked = 0, v;
	int offcpu = i < tl->nr_segs && tl->segs[i].offcpu;
	const char *mode = info__meta(in, i, "mode");
	/* A trace capture's rows count events. */
	const char *unit = mode && strcmp(mode, "trace") == 0 ? "events" : "samples";
	struct tl_bucket *b;
	size_t n, k;
	int err, bar, sat = 0;

	err = timeline__buckets(tl, i, fl ? strtoull(fl, NULL, 10) : 0, TIMELINE_LINES, &b, &n,
				&width);
	if (err)
		return err;
	for (k = 0; k < n; k++) {
		v = offcpu ? b[k].blocked_ns : b[k].count;
		if (v > max)
			max = v;
		total = sat_add(total, b[k].count, &sat);
		blocked = sat_add(blocked, b[k].blocked_ns, &sat);
	}
	*kept = sat_add(*kept, total, &sat);
	if (!time_slice__all(slice)) {
		fprintf(out, "slice: %" PRIu64 ".%03" PRIu64 " s to ", slice->since_ns / 1000000000u,
		       slice->since_ns % 1000000000u / 1000000u);
		if (slice->until_ns == UINT64_MAX)
			fprintf(out, "the end");
		else
			fprintf(out, "%" PRIu64 ".%03" PRIu64 " s", slice->until_ns / 1000000000u,
			       slice->until_ns % 1000000000u / 1000000u);
		fprintf(out, ": %" PRIu64 " %s", total, offcpu ? "episodes" : unit);
		if (offcpu)
			fprintf(out, ", %" PRIu64 ".%03" PRIu64 " s blocked", blocked / 1000000000u,
			       blocked % 1000000000u / 1000000u);
		fprintf(out, "\n");
	}
	if (n)
		fprintf(out, "timeline: %" PRIu64 " s per line, from the segment start\n",
		       width / 1000000000u);
	for (k = 0; k < n; k++) {
		v = offcpu ? b[k].blocked_ns : b[k].count;
		if (!time_slice__all(slice) && !b[k].count && !b[k].blocked_ns)
			continue;	/* outside the slice */
		fprintf(out, "timeline %" PRIu64 "-%" PRIu64 " s: %" PRIu64 " %s", b[k].start_ns / 1000000000u,
		       b[k].end_ns / 1000000000u, b[k].count, offcpu ? "episodes" : unit);
		if (offcpu)
			fprintf(out, ", %" PRIu64 ".%03" PRIu64 " s blocked", b[k].blocked_ns / 1000000000u,
			       b[k].blocked_ns % 1000000000u / 1000000u);
		fprintf(out, " ");
		bar = max ? (int)((v * TIMELINE_BAR + max - 1) / max) : 0;
		while (bar-- > 0)
			putc('#', out);
		fprintf(out, "\n");
	}
	free(b);
	return 0;
}

static void print_segment(FILE *out, const struct info *in, const struct stk_reader *r, uint32_t i)
{
	const struct stk_segment_info *seg = stk_reader__segment(r, i);
	static const struct info_segment empty;
	const struct info_segment *s = i < in->nr_segs ? &in->segs[i] : &empty;
	size_t k;

	fprintf(out, "\n[segment %u]\n", i);
	fprintf(out, "offset: %" PRIu64 "\n", seg->offset);
	if (seg->read_version) {
		fprintf(out, "uuid: ");
		print_uuid(out, seg->uuid);
		fprintf(out, "\nread version: %u\n", seg->read_version);
		fprintf(out, "write version: %u\n", seg->write_version);
		fprintf(out, "writer: stk %s\n", seg->writer_version);
		fprintf(out, "started: ");
		print_wall(out, seg->wall_start_ns);
		fprintf(out, "\nwall start ns: %" PRIu64 "\n", seg->wall_start_ns);
		fprintf(out, "mono start ns: %" PRIu64 "\n", seg->mono_start_ns);
	} else {
		/* Found through its chunks after its header was damaged. */
		fprintf(out, "header: lost (segment id %02x%02x%02x%02x)\n", seg->uuid[0], seg->uuid[1],
		       seg->uuid[2], seg->uuid[3]);
	}
	fprintf(out, "closed: %s\n", seg->closed ? "yes" : "no");
	for (k = 0; k < s->nr_meta; k++)
		textline__printf(out, "meta %s: %s", s->meta[k].key, s->meta[k].value);
	print_totals(out, &s->t);
	for (k = 0; k < s->nr_stats; k++)
		textline__printf(out, "stat %s: %" PRIu64, s->stats[k].name, s->stats[k].value);
}

static void print_chunk(FILE *out, const struct stk_chunk *ch)
{
	/* An unknown chunk's tag is four bytes from the file. */
	textline__printf(out, "%u %u %" PRIu64 " %s %u %u %" PRIu64 " %" PRIu64, ch->segment, ch->seq,
	       ch->offset, ch->tag, ch->comp_size, ch->raw_size, ch->t0_ns, ch->t1_ns);
}

/* The verdict line, and its exit status. */
static int print_verdict(FILE *out, const struct stk_read_summary *sum, const struct stk_reader *r,
			 const char *first_error)
{
	uint32_t i, open = 0, first_open = 0;

	for (i = stk_reader__segment_count(r); i-- > 0; ) {
		if (!stk_reader__segment(r, i)->closed) {
			open++;
			first_open = i;
		}
	}
	fprintf(out, "\n");
	/* A file that only stops early (a copy cut short, a full disk) is an
	 * unfinished capture, not a damaged one: everything before is sound. */
	if (sum->errors == 1 && sum->truncated) {
		textline__printf(out, "verdict: NOT CLOSED CLEANLY: %s", first_error);
		return 1;
	}
	if (sum->errors) {
		textline__printf(out, "verdict: DAMAGED: %" PRIu64 " error%s, %" PRIu64
				 " chunks recovered, %" PRIu64 " bytes skipped%s; first: %s", sum->errors,
				 sum->errors == 1 ? "" : "s", sum->chunks, sum->bytes_skipped,
				 sum->truncated ? ", truncated" : "", first_error);
		return 1;
	}
	if (open) {
		fprintf(out, "verdict: NOT CLOSED CLEANLY: %" PRIu64 " chunks, segment %u has no trailer "
		       "(the recorder stopped before finishing the file)\n", sum->chunks, first_open);
		return 1;
	}
	fprintf(out, "verdict: OK: %" PRIu64 " chunks, closed cleanly\n", sum->chunks);
	return 0;
}

/* Whether a segment's user stacks were unwound from tables (META
 * unwind_used auto or dwarf), so they may end in unwind stop markers. */
/* 1 if a segment's user stacks may carry unwind stop markers: unwound
 * from tables, or frame-pointer stacks cut at the depth (STAT
 * unwind_stop_depth). */
static int unwound(const struct info *in)
{
	const char *u;
	size_t i, k;

	for (i = 0; i < in->nr_segs; i++) {
		u = info__meta(in, i, "unwind_used");
		if (u && (strcmp(u, "auto") == 0 || strcmp(u, "dwarf") == 0))
			return 1;
		for (k = 0; k < in->segs[i].nr_stats; k++)
			if (strcmp(in->segs[i].stats[k].name, "unwind_stop_depth") == 0 &&
			    in->segs[i].stats[k].value)
				return 1;
	}
	return 0;
}

/* What info copies of a pipe before giving up (see input_spool()). */
#define SPOOL_MAX (1ull << 30)

/*
 * --symbols and [unwind] read the capture a second time, and a pipe (stdin,
 * a FIFO, <(cat x.stk)) can be read only once: it is first copied into a
 * memfd, which then becomes stdin, read as "-".  Only what starts with the
 * .stk file magic is copied on (/dev/zero stops after its first read; the
 * reader then refuses it by the bytes copied), and at most SPOOL_MAX bytes.
 * @path: "-" or a name.  Sets *@read_path to what to read: @path itself
 * when it is a regular file (nothing copied), else "-".  Returns 0,
 * -EFBIG (over SPOOL_MAX), or an open()/read()/write() -errno.
 */
static int input_spool(const char *path, const char **read_path)
{
	static const uint8_t magic[4] = { 0x5A, 0x2A, 0x4D, 0x18 };
	char buf[1 << 16];
	uint64_t total = 0;
	struct stat st;
	ssize_t n, w;
	size_t off;
	int in, fd = -1, err = 0;

	*read_path = path;
	in = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (in < 0)
		return 0;	/* the reader's open says why, as for any file */
	if (fstat(in, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (S_ISREG(st.st_mode))
		goto out;
	fd = memfd_create("stkreport-input", MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (n == 0)
			break;
		if (total + n > SPOOL_MAX) {
			err = -EFBIG;
			goto out;
		}
		for (off = 0; off < (size_t)n; off += w) {
			w = write(fd, buf + off, n - off);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0) {
				err = -errno;
				goto out;
			}
		}
		/* Not a capture: what was read is enough to say so. */
		if (total < sizeof(magic) &&
		    memcmp(buf, magic + total, (size_t)n < sizeof(magic) - total ? (size_t)n
										    : sizeof(magic) - total))
			break;
		total += n;
	}
	if (dup2(fd, STDIN_FILENO) < 0)
		err = -errno;
	*read_path = "-";
out:
	if (fd >= 0)
		close(fd);
	if (in != STDIN_FILENO)
		close(in);
	return err;
}

/*
 * The reader of @path, a pipe spooled first (input_spool()): the [unwind]
 * section, like --symbols, reads it a second time, so whatever the options.
 * *@read_path is what to read again.  NULL when it cannot be read, said.
 */
static struct stk_reader *input_open(const char *path, const char **read_path)
{
	struct stk_reader *r;
	const char *msg;
	int err;

	err = input_spool(path, read_path);
	if (err == -EFBIG) {
		textline__printf(stderr, "stkreport: %s: more than %llu MiB from a pipe: save the capture to a file and give its name",
				 path, SPOOL_MAX >> 20);
		return NULL;
	}
	if (err) {
		textline__printf(stderr, "stkreport: %s: %s", path, strerror(-err));
		return NULL;
	}
	r = stk_reader__open(*read_path);
	if (r)
		return r;
	msg = stk_open_errmsg();
	/* Named for what the user gave, not the spool's "-". */
	if (*read_path != path && strncmp(msg, "-: ", 3) == 0)
		msg += 3;
	if (*read_path != path)
		textline__printf(stderr, "stkreport: %s: %s", path, msg);
	else
		textline__printf(stderr, "stkreport: %s", msg);
	return NULL;
}

/*
 * Every chunk of @r summed into @in and @tl, listed on @chunks unless it is
 * NULL.  A damaged chunk is said on stderr (the first MAX_ERROR_LINES) and
 * skipped; the first one's message is kept in *@first_error for the
 * verdict.  0 or -ENOMEM.
 */
static int read_chunks(struct stk_reader *r, const char *path, FILE *chunks, struct info *in,
		       struct timeline *tl, const struct time_slice *slice, char **first_error)
{
	struct stk_chunk ch;
	uint64_t errors = 0;
	int ret;

	while ((ret = stk_reader__next(r, &ch)) != 0) {
		if (ret < 0) {
			if (!*first_error)
				*first_error = strdup(stk_reader__errmsg(r));
			if (++errors <= MAX_ERROR_LINES)
				textline__printf(stderr, "stkreport: %s: %s", path, stk_reader__errmsg(r));
			continue;
		}
		if (chunks)
			print_chunk(chunks, &ch);
		if (info__add_chunk(in, &ch) < 0 ||
		    timeline__add_chunk(tl, &ch, stk_reader__segment(r, ch.segment)->mono_start_ns,
					slice) < 0)
			return -ENOMEM;
	}
	if (errors > MAX_ERROR_LINES)
		fprintf(stderr, "stkreport: %s: %" PRIu64 " more errors not shown\n", path,
			errors - MAX_ERROR_LINES);
	return 0;
}

int info_main(int argc, char **argv)
{
	struct info_opts opts = { 0 };
	const char *debug_dirs[64];
	struct symbolizer_opts so = { .sz = sizeof(so), .debug_dirs = debug_dirs, .debuginfod = 1 };
	struct stk_read_summary sum;
	struct stk_reader *r = NULL;
	struct info in = { 0 };
	char *first_error = NULL;
	const char *path;
	struct time_slice slice = TIME_SLICE_ALL;
	struct timeline tl = { 0 };
	struct outstream *os = NULL;
	const char *read_path;
	FILE *out = NULL;
	uint64_t kept = 0;
	uint32_t i;
	int ret, c, err;

	while ((c = getopt_long(argc, argv, ":csh", long_opts, NULL)) != -1) {
		ret = time_slice__option(&slice, c, optarg);
		if (ret < 0) {
			fprintf(stderr, "stkreport: info: --since/--until need seconds from the capture's start, e.g. 2.5: %s\n",
				optarg);
			return 2;
		}
		if (ret)
			continue;
		switch (c) {
		case 'c':
			opts.chunks = 1;
			break;
		case 's':
			opts.symbols = 1;
			break;
		case 'R':
			so.sysroot = optarg;
			break;
		case 'D':
			if (so.nr_debug_dirs == 64) {
				fprintf(stderr, "stkreport: info: too many --debug-dir\n");
				return 2;
			}
			debug_dirs[so.nr_debug_dirs++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return main_args__bad_option(c, argv, "stkreport info");
		}
	}
	if (time_slice__check(&slice)) {
		fprintf(stderr, "stkreport: info: --since must be before --until\n");
		return 2;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "stkreport: info: %s; usage: stkreport info [--chunks] [--symbols] FILE.stk\n",
			argc - optind ? "one FILE only" : "missing FILE");
		return 2;
	}
	path = argv[optind];

	r = input_open(path, &read_path);
	if (!r)
		return 1;
	os = outstream__open(NULL);
	if (!os) {
		fprintf(stderr, "stkreport: info: %s\n", strerror(errno));
		ret = 1;
		goto out;
	}
	out = outstream__file(os);
	textline__printf(out, "file: %s", path);
	if (opts.chunks)
		fprintf(out, "\n[chunks]\nsegment seq offset tag comp raw t0_ns t1_ns\n");
	if (read_chunks(r, path, opts.chunks ? out : NULL, &in, &tl, &slice, &first_error)) {
		fprintf(stderr, "stkreport: %s: out of memory\n", path);
		ret = 1;
		goto out;
	}

	stk_reader__summary(r, &sum);
	fprintf(out, "size: %" PRIu64 " bytes\n", sum.file_size);
	fprintf(out, "segments: %u\n", stk_reader__segment_count(r));
	for (i = 0; i < stk_reader__segment_count(r); i++) {
		print_segment(out, &in, r, i);
		if (print_timeline(out, &in, &tl, i, &slice, &kept)) {
			fprintf(stderr, "stkreport: %s: out of memory\n", path);
			ret = 1;
			goto out;
		}
	}
	if (stk_reader__segment_count(r) > 1) {
		fprintf(out, "\n[total]\n");
		print_totals(out, &in.total);
	}
	ret = print_verdict(out, &sum, r, first_error ? first_error : "");
	if (!time_slice__all(&slice) && !kept) {
		empty_slice(path, &in, &slice);
		ret = 1;
	}
	if (in.total.saturated) {
		textline__printf(stderr, "stkreport: %s: counts sum past 2^64 (a crafted capture?): totals capped at %llu",
				 path, (unsigned long long)UINT64_MAX);
		ret = 1;
	}
	if (unwound(&in)) {
		err = unwind_info__print(read_path, out);

		if (err && err != -EIO) {
			fprintf(stderr, "stkreport: %s: unwind: %s\n", path, strerror(-err));
			ret = 1;
		}
	}
	if (opts.symbols) {
		err = symbols_info__print(read_path, &so, out);

		/* -EIO: the output failed, said below. */
		if (err && err != -EIO) {
			fprintf(stderr, "stkreport: %s: symbols: %s\n", path, strerror(-err));
			ret = 1;
		}
	}
out:
	/* The first write's error says what happened (ENOSPC, EPIPE). */
	err = outstream__close(os);
	if (err) {
		fprintf(stderr, "stkreport: info: writing the output: %s\n", strerror(-err));
		ret = 1;
	}
	free(first_error);
	info__free(&in);
	timeline__free(&tl);
	stk_reader__close(r);
	return ret;
}
