/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof.h - build a pprof profile (perftools.profiles.Profile, defined by
 * github.com/google/pprof/proto/profile.proto) and write it gzip'd, as
 * `go tool pprof` and other pprof readers expect.
 *
 * The builder knows nothing about captures or symbols: the pprof output
 * writer feeds it mappings, functions, locations and samples, and gets
 * back the ids the profile uses.  Ids are assigned in the order things are
 * first added, starting at 1 (0 means "none" in profile.proto), so the
 * same calls always give the same bytes.
 *
 * Strings are interned into the profile's string table, whose entry 0 is
 * "" as the format requires.  A NULL string argument means "".  Strings
 * are copied: the caller's memory is never kept.
 *
 * The builder never prints.  Errors are negative errno values:
 *   -EINVAL  a caller bug: NULL required argument, a value count that
 *            differs from the number of sample types, an id that was
 *            never returned by this builder, a label without a key
 *   -ENOMEM  out of memory
 *   -EOVERFLOW  more entries than an id or index can number (2^32-1)
 *   other    errno from write(2) or the FILE (pprof__write*() only)
 */
#ifndef STK_REPORT_PPROF_H
#define STK_REPORT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pprof;

/* A (type, unit) pair such as ("cpu", "nanoseconds") or ("samples", "count"). */
struct pprof_value_type {
	const char *type;
	const char *unit;
};

/* Most sample types a profile may have (profile.proto sets no limit;
 * stkreport uses two, or one per event of a trace capture). */
#define PPROF_MAX_SAMPLE_TYPES 256

struct pprof_opts {
	/* What each sample value measures, in the order of the values given
	 * to pprof__add_sample(); 1..PPROF_MAX_SAMPLE_TYPES entries.  pprof
	 * shows the last one unless default_sample_type says otherwise. */
	const struct pprof_value_type *sample_types;
	size_t nr_sample_types;
	/* The kind of events sampled, and the interval between samples in
	 * period_type.unit (e.g. cpu/nanoseconds, 1e9 / frequency).  A NULL
	 * period_type.type leaves the period type out. */
	struct pprof_value_type period_type;
	int64_t period;
	/* Wall-clock start of the profile (ns since the epoch) and its length. */
	int64_t time_nanos;
	int64_t duration_nanos;
	/* Type of the sample type pprof shows by default; NULL: leave unset. */
	const char *default_sample_type;
};

/*
 * pprof__new() - start an empty profile.
 * @opts: sample types, period and times; copied, not kept.
 * @return the builder, or NULL with errno EINVAL (no or too many sample
 * types, a sample type with a NULL type) or ENOMEM.  Free with
 * pprof__free().
 */
struct pprof *pprof__new(const struct pprof_opts *opts);

/*
 * pprof__free() - free a builder and everything it holds.  Accepts NULL.
 */
void pprof__free(struct pprof *p);

/*
 * pprof__string() - intern @s into the string table.
 * Needed only for things this API does not cover; every other function
 * interns its strings itself.
 * @s: NULL means "" (index 0).
 * @index: set to the string's index in string_table.
 * @return 0, -ENOMEM or -EOVERFLOW.
 */
int pprof__string(struct pprof *p, const char *s, int64_t *index);

/* A mapped binary: one per (process, file) in stkreport. */
struct pprof_mapping {
	uint64_t start;	 /* first address of the mapping */
	uint64_t limit;	 /* first address after it */
	uint64_t offset; /* file offset mapped at start */
	const char *filename;
	const char *build_id; /* as pprof prints it: lowercase hex */
	/* Set each flag only if it is true for every location in this
	 * mapping: pprof uses them to decide whether to symbolize again. */
	bool has_functions;
	bool has_filenames;
	bool has_line_numbers;
	bool has_inline_frames;
};

/*
 * pprof__mapping() - add a mapping, or find the one added with @key.
 * pprof takes the first mapping (id 1) to be the main binary, so add
 * that one first when there is one.
 * Mappings are told apart by the caller's @key (e.g. a process and file
 * pair packed into 64 bits), not by content: two processes mapping the
 * same file at the same address still get one mapping each.
 * @key: any value; the first call with a key adds the mapping.
 * @m: the mapping; ignored when @key was seen before.  May be NULL to
 *     only look @key up.
 * @id: set to the mapping id (1, 2, ...).
 * @return 0; -ENOENT if @m is NULL and @key is unknown; -EINVAL, -ENOMEM,
 * -EOVERFLOW.
 */
int pprof__mapping(struct pprof *p, uint64_t key, const struct pprof_mapping *m, uint64_t *id);

/* A function, as pprof shows it. */
struct pprof_function {
	const char *name;	 /* demangled, for people */
	const char *system_name; /* as in the binary's symbol table */
	const char *filename;	 /* source file, NULL if unknown */
	int64_t start_line;	 /* 0 if unknown */
};

/*
 * pprof__function() - add a function, or find an identical one.
 * Functions are told apart by content: the same four fields give the
 * same id.
 * @id: set to the function id (1, 2, ...).
 * @return 0, -EINVAL, -ENOMEM or -EOVERFLOW.
 */
int pprof__function(struct pprof *p, const struct pprof_function *f, uint64_t *id);

/* One source line of a location: a function and a line in it (0: unknown). */
struct pprof_line {
	uint64_t function_id;
	int64_t line;
};

/*
 * pprof__location() - add a location, or find an identical one.
 * Locations are told apart by content: mapping, address and lines, as
 * pprof itself does when it merges profiles.  A (mapping, address) pair
 * that is always symbolized the same way thus gets one location; a
 * pseudo-frame (mapping 0, address 0) is told apart by its function.
 * @mapping_id: an id from pprof__mapping(), or 0 for none (e.g. the "--"
 *     separator frame).
 * @address: the instruction address in the process.  A caller frame may
 *     give its return address as is (profile.proto lets it point into or
 *     just after the call instruction); symbolize it as address - 1.
 * @lines: @nr_lines lines, leaf first: the innermost inlined function
 *     first, the function the address is in last.  May be empty (an
 *     unsymbolized address).
 * @id: set to the location id (1, 2, ...).
 * @return 0; -EINVAL if an id was not returned by this builder or a line
 * has function id 0; -ENOMEM, -EOVERFLOW.
 */
int pprof__location(struct pprof *p, uint64_t mapping_id, uint64_t address,
		    const struct pprof_line *lines, size_t nr_lines, uint64_t *id);

/*
 * A label on a sample: either a string (@str not NULL) or a number (@str
 * NULL; @num, with an optional unit such as "bytes").
 * Beware: zero fields are left out of the encoding, as proto3 does, and
 * pprof's reader then drops a string label whose value is "" and a
 * number label whose value is 0 and that has no unit (e.g. pid 0).
 */
struct pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *num_unit;
};

/*
 * pprof__add_sample() - add a sample.  Samples are kept as given, never
 * merged: aggregation is the caller's job.
 * @location_ids: @nr_locations ids from pprof__location(), leaf first.
 * @values: one value per sample type, in the order of opts->sample_types.
 * @nr_values: must equal opts->nr_sample_types.
 * @labels: @nr_labels labels; may be NULL when @nr_labels is 0.
 * @return 0; -EINVAL (unknown location id, wrong value count, a label
 * without a key); -ENOMEM, -EOVERFLOW.  On error nothing is added.
 */
int pprof__add_sample(struct pprof *p, const uint64_t *location_ids, size_t nr_locations,
		      const int64_t *values, size_t nr_values,
		      const struct pprof_label *labels, size_t nr_labels);

/*
 * pprof__add_comment() - add a free-form comment (pprof -comments shows
 * them), e.g. the tool and capture it came from.
 * @return 0, -EINVAL (NULL @text), -ENOMEM or -EOVERFLOW.
 */
int pprof__add_comment(struct pprof *p, const char *text);

/*
 * pprof__write() - write the profile, gzip'd, to @fd at its current
 * position.  The builder is not changed: it may be written again, or
 * added to and written again.
 * @fd: not closed.
 * @return 0; -errno from write(2) (e.g. -ENOSPC, -EPIPE); -ENOMEM.  After
 * an error @fd holds a partial file.
 */
int pprof__write(const struct pprof *p, int fd);

/*
 * pprof__write_file() - like pprof__write(), to a stdio stream (not
 * flushed or closed: the caller checks fflush()/fclose() as usual).
 * @return 0; -errno of the failed fwrite() (-EIO if it did not set
 * errno); -ENOMEM.
 */
int pprof__write_file(const struct pprof *p, FILE *f);

#endif
