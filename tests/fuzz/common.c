// SPDX-License-Identifier: BSD-2-Clause
/*
 * What every fuzz target links besides its own file (fuzz_common.h):
 * fuzz_fix_crcs(), here because it reads libstk's internal frame layout
 * (stk_int.h), which the reporter's headers cannot be included with; and
 * the leak suppressions of LeakSanitizer, for libFuzzer and the replay
 * alike.
 */
#include <stddef.h>
#include <stdint.h>

#include "stk.h"
#include "stk_int.h"

void fuzz_fix_crcs(uint8_t *p, size_t size);

void fuzz_fix_crcs(uint8_t *p, size_t size)
{
	size_t pos = 0;

	while (pos + STK_FRAME_PREFIX <= size) {
		uint32_t magic = get_le32(p + pos), n = get_le32(p + pos + 4);
		uint8_t *d = p + pos + STK_FRAME_PREFIX;

		if (magic < STK_MAGIC_FILE || magic > STK_MAGIC_TRAILER || n < 4 ||
		    n > size - pos - STK_FRAME_PREFIX) {
			pos++;
			continue;
		}
		pos += STK_FRAME_PREFIX + n;
		if (magic == STK_MAGIC_CHUNK && n >= STK_CHUNK_HDR_LEN) {
			uint32_t comp = get_le32(d + CH_COMP_LEN);

			if (comp <= size - pos) {
				put_le32(d + CH_PAYLOAD_CRC, stk_crc32c(0, p + pos, comp));
				pos += comp;
			}
		}
		put_le32(d + n - 4, stk_crc32c(0, d, n - 4));
	}
}

/*
 * Leaks inside elfutils 0.188 on damaged files, not in stk: every frame
 * between the allocation and stk's call is libdw's, and stk frees what
 * the calls hand back (scopes.c frees dwarf_getscopes()' array; dwfl_end()
 * the modules).  dwarf_getscopes() loses the array of its first pass when
 * the second one fails; dwfl_build_id_find_debuginfo() loses the Elf
 * handle and file name it opened when the module's debug file is given up;
 * dwfl_module_getsymtab() loses 8 KiB of section data libelf read for it
 * from a damaged symbol table (one corpus input, with the fixtures as a
 * checkout elsewhere built them: see REPRO in the Makefile).
 *
 * A suppression matches the frames of the allocation's stack, unwound by
 * frame pointers, which stop at the first elfutils frame.  The replay
 * (make check) unwinds malloc stacks fully, so it names the two functions;
 * libFuzzer runs (FUZZ_LIBFUZZER) keep the fast unwinder for speed and can
 * only name the libraries: replay their corpus to check what they found.
 */
const char *__lsan_default_suppressions(void);

const char *__lsan_default_suppressions(void)
{
#ifdef FUZZ_LIBFUZZER
	return "leak:libdw.so\n"
	       "leak:libelf.so\n";
#else
	return "leak:dwarf_getscopes\n"
	       "leak:dwfl_build_id_find_debuginfo\n"
	       "leak:dwfl_module_getsymtab\n";
#endif
}

#ifndef FUZZ_LIBFUZZER
const char *__asan_default_options(void);

/* Weak: a target that needs more (fuzz_zelf's allocation bound) defines
 * its own. */
__attribute__((weak)) const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}
#endif
