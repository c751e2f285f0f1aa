// SPDX-License-Identifier: BSD-2-Clause
/* `stkreport info`: user stacks whose unwinding stopped early, by reason. */
#include <errno.h>
#include <inttypes.h>

#include "info_report.h"
#include "unwind_info.h"

static double share(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

int unwind_info__print(const char *path, FILE *f)
{
	struct report_opts ro = { .sz = sizeof(ro), .user_only = 1, .no_symbols = 1,
				  .sym = { .sz = sizeof(ro.sym), .system_debug_dir = "" } };
	const struct report_uw_stops *u;
	struct capture *cap;
	struct report *r;
	const char *what;
	unsigned int k;
	int err;

	err = info_report__open(path, &ro, &cap, &r);
	if (err)
		return err;
	u = &r->uw_stops;
	what = r->kind == REPORT_PROFILE ? "samples" : "episodes";
	fprintf(f, "\n[unwind]\n");
	fprintf(f, "unwind stopped early: %" PRIu64 " %s (%.1f%%) of %" PRIu64 "\n",
		u->total_count, what, share(u->total_count, r->total_count), r->total_count);
	for (k = 1; k <= REPORT_UW_STOP_UNKNOWN; k++)
		if (u->count[k] || u->stacks[k])
			fprintf(f, "unwind stopped: %s %" PRIu64 " %s (%.1f%%), %" PRIu64 " stacks\n",
				unwind_stop__name(k), u->count[k], what,
				share(u->count[k], r->total_count), u->stacks[k]);
	if (fflush(f) || ferror(f))
		err = -EIO;
	report__free(r);
	capture__free(cap);
	return err;
}
