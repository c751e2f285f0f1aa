// SPDX-License-Identifier: BSD-2-Clause
/* `stkreport info --symbols`: where each module's symbols came from. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "info_report.h"
#include "symbols_info.h"
#include "textsafe.h"

static int by_samples(const void *a, const void *b)
{
	const struct sym_module *x = *(const struct sym_module *const *)a;
	const struct sym_module *y = *(const struct sym_module *const *)b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->path, y->path);
}

int symbols_info__print(const char *path, const struct symbolizer_opts *so, FILE *f)
{
	struct report_opts ro = { .sz = sizeof(ro), .sym = *so };
	struct sym_module **mods = NULL;
	struct capture *cap;
	struct report *r;
	size_t i, n = 0;
	int err;

	err = info_report__open(path, &ro, &cap, &r);
	if (err)
		return err;
	n = symbolizer__nr_modules(r->sym);
	mods = calloc(n ? n : 1, sizeof(*mods));
	if (!mods) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		mods[i] = symbolizer__module_at(r->sym, i);
	qsort(mods, n, sizeof(*mods), by_samples);
	fprintf(f, "\n[symbols]\n");
	fprintf(f, "samples: %" PRIu64 "\n", r->total_count);
	fprintf(f, "fully symbolized: %" PRIu64 "\n", r->symbolized_count);
	for (i = 0; i < n; i++) {
		const struct sym_module *m = mods[i];
		char hex[2 * STK_MAX_BUILD_ID + 1] = "none";

		if (!m->samples)
			continue;
		if (m->build_id_size)
			hex_encode(hex, m->build_id, m->build_id_size);
		textline__printf(f, "module: %s", m->path[0] ? m->path : "[anon]");
		fprintf(f, "  build-id: %s\n", hex);
		fprintf(f, "  samples: %" PRIu64 "\n", m->samples);
		fprintf(f, "  samples with unknown frames: %" PRIu64 "\n", m->unknown_samples);
		if (m->elf_path)
			textline__printf(f, "  elf: %s (%s)", m->elf_path, elf_source__name(m->source));
		/* Where the names came from, or why there are none. */
		if (m->status == SYM_MOD_OK)
			fprintf(f, "  source: %s\n", elf_source__name(m->source));
		else
			fprintf(f, "  source: none (%s)\n", sym_module_status__reason(m->status));
		if (m->debug_path)
			textline__printf(f, "  debuginfo: %s", m->debug_path);
		if (m->mismatch_path)
			textline__printf(f, "  refused: %s (another build-id)", m->mismatch_path);
		fprintf(f, "  symbols: %s\n", sym_module_status__reason(m->status));
	}
	if (r->kernel_samples) {
		fprintf(f, "module: [kernel]\n");
		for (i = 0; i < cap->nr_kobjs; i++) {
			char hex[2 * STK_MAX_BUILD_ID + 1];

			if (strcmp(cap->kobjs[i].name, "[kernel.kallsyms]") || !cap->kobjs[i].build_id_size)
				continue;
			hex_encode(hex, cap->kobjs[i].build_id, cap->kobjs[i].build_id_size);
			fprintf(f, "  build-id: %s\n", hex);
		}
		fprintf(f, "  samples: %" PRIu64 "\n", r->kernel_samples);
		fprintf(f, "  samples with unknown frames: %" PRIu64 "\n", r->kernel_unknown_samples);
		textline__printf(f, "  symbols: %s (%zu kernel symbols)",
			r->kernel_syms_source ? r->kernel_syms_source : "none in the capture",
			ksyms__count(r->ksyms));
	}
	if (fflush(f) || ferror(f))
		err = -EIO;
out:
	free(mods);
	report__free(r);
	capture__free(cap);
	return err;
}
