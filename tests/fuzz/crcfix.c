// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_fix_crcs() for the fuzz targets (fuzz_common.h): a separate file
 * because it reads libstk's internal frame layout (stk_int.h), which the
 * reporter's headers cannot be included with.
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
