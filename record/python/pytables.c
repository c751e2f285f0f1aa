// SPDX-License-Identifier: BSD-2-Clause
/*
 * pytables.c - the offsets of CPython's structures per minor version, as
 * the Python frame walk needs them (pytables.h).  Taken with pahole from
 * CPython 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0 (x86-64,
 * release builds; the layouts do not change within a minor version), and
 * checked on every process before use (python.c); 3.13 publishes its own
 * in _Py_DebugOffsets, which win over the table.
 */
#include <errno.h>
#include <string.h>

#include "pytables.h"

#define NO STKREC_PY_NO_OFF

static const struct pyoffsets tables[] = {
	{ /* 3.8 and 3.9: PyFrameObject, f_lasti in bytes */
		.bpf = { .version = PY_VERSION(3, 8), .model = STKREC_PY_FRAMEOBJ, .lasti_bytes = 1,
			 .rt_interp_head = 32, .is_tstate_head = 8, .ts_next = 8, .ts_thread_id = 176,
			 .ts_frame = 24, .cframe_frame = NO, .fr_code = 32, .fr_back = 24,
			 .fr_instr = 104, .fr_entry = NO, .fr_size = 112, .co_firstlineno = 40,
			 .co_name = 112, .co_filename = 104, .co_code = 0 },
		.co_qualname = 0, .co_linetable = 120, .str_ascii = 48, .str_compact = 72,
		.ts_interp = 16,
	},
	{ /* 3.10: f_lasti in code units, co_linetable */
		.bpf = { .version = PY_VERSION(3, 10), .model = STKREC_PY_FRAMEOBJ, .lasti_bytes = 0,
			 .rt_interp_head = 32, .is_tstate_head = 8, .ts_next = 8, .ts_thread_id = 176,
			 .ts_frame = 24, .cframe_frame = NO, .fr_code = 32, .fr_back = 24,
			 .fr_instr = 96, .fr_entry = NO, .fr_size = 104, .co_firstlineno = 40,
			 .co_name = 112, .co_filename = 104, .co_code = 0 },
		.co_qualname = 0, .co_linetable = 120, .str_ascii = 48, .str_compact = 72,
		.ts_interp = 16,
	},
	{ /* 3.11: _PyInterpreterFrame through cframe, is_entry */
		.bpf = { .version = PY_VERSION(3, 11), .model = STKREC_PY_IFRAME311,
			 .rt_interp_head = 40, .is_tstate_head = 16, .ts_next = 8, .ts_thread_id = 152,
			 .ts_frame = 56, .cframe_frame = 8, .fr_code = 32, .fr_back = 48,
			 .fr_instr = 56, .fr_entry = 68, .fr_size = 72, .co_firstlineno = 72,
			 .co_name = 120, .co_filename = 112, .co_code = 184 },
		.co_qualname = 128, .co_linetable = 136, .str_ascii = 48, .str_compact = 72,
		.ts_interp = 16,
	},
	{ /* 3.12: shim frames owned by the C stack */
		.bpf = { .version = PY_VERSION(3, 12), .model = STKREC_PY_IFRAME312,
			 .rt_interp_head = 40, .is_tstate_head = 72, .ts_next = 8, .ts_thread_id = 136,
			 .ts_frame = 56, .cframe_frame = 0, .fr_code = 0, .fr_back = 8,
			 .fr_instr = 56, .fr_entry = 70, .fr_size = 72, .co_firstlineno = 68,
			 .co_name = 120, .co_filename = 112, .co_code = 192 },
		.co_qualname = 128, .co_linetable = 136, .str_ascii = 40, .str_compact = 56,
		.ts_interp = 16,
	},
	{ /* 3.13: tstate->current_frame, f_executable, instr_ptr */
		.bpf = { .version = PY_VERSION(3, 13), .model = STKREC_PY_IFRAME312,
			 .rt_interp_head = 632, .is_tstate_head = 7344, .ts_next = 8,
			 .ts_thread_id = 152, .ts_frame = 72, .cframe_frame = NO, .fr_code = 0,
			 .fr_back = 8, .fr_instr = 56, .fr_entry = 70, .fr_size = 72,
			 .co_firstlineno = 68, .co_name = 120, .co_filename = 112, .co_code = 200 },
		.co_qualname = 128, .co_linetable = 136, .str_ascii = 40, .str_compact = 56,
		.ts_interp = 16,
	},
};

int pytables__get(uint32_t version, struct pyoffsets *o)
{
	uint32_t want = version == PY_VERSION(3, 9) ? PY_VERSION(3, 8) : version;
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (tables[i].bpf.version == want) {
			*o = tables[i];
			o->bpf.version = version;
			return 0;
		}
	}
	return -ENOTSUP;
}

static uint64_t u64_at(const uint8_t *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* @v into @out if it fits the 16 bits (and for fields read from a
 * buffer of 128 bytes, @limit). */
static int set16(uint16_t *out, uint64_t v, uint64_t limit)
{
	if (v > limit)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

/* The _Py_DebugOffsets of 3.13: cookie, version, free_threaded, then
 * groups of u64 offsets (CPython's Include/internal/pycore_runtime.h). */
#define DBG_SIZE	584
#define DBG_RT		24	/* runtime_state */
#define DBG_IS		48	/* interpreter_state */
#define DBG_TS		152	/* thread_state */
#define DBG_FR		224	/* interpreter_frame */
#define DBG_CO		272	/* code_object */
#define DBG_STR		536	/* unicode_object */

int pytables__from_debug(const uint8_t *buf, size_t size, uint32_t version, struct pyoffsets *o)
{
	struct pyoffsets n = *o;
	int err = 0;

	if (size < 24 || memcmp(buf, "xdebugpy", 8) != 0)
		return -ENOENT;
	/* PY_VERSION_HEX: 0x030d00f0 for 3.13.0 */
	if ((u64_at(buf, 8) >> 16) != version || version != PY_VERSION(3, 13) || size < DBG_SIZE)
		return -ENOTSUP;
	if (u64_at(buf, 16))
		return -ENOTSUP; /* free-threaded: other layouts */
	err = err ?: set16(&n.bpf.rt_interp_head, u64_at(buf, DBG_RT + 16), 0xffff);
	err = err ?: set16(&n.bpf.is_tstate_head, u64_at(buf, DBG_IS + 24), 0xffff);
	err = err ?: set16(&n.bpf.ts_next, u64_at(buf, DBG_TS + 16), 0xffff);
	err = err ?: set16(&n.ts_interp, u64_at(buf, DBG_TS + 24), 0xffff);
	err = err ?: set16(&n.bpf.ts_frame, u64_at(buf, DBG_TS + 32), 0xffff);
	err = err ?: set16(&n.bpf.ts_thread_id, u64_at(buf, DBG_TS + 40), 0xffff);
	err = err ?: set16(&n.bpf.fr_back, u64_at(buf, DBG_FR + 8), 120);
	err = err ?: set16(&n.bpf.fr_code, u64_at(buf, DBG_FR + 16), 120);
	err = err ?: set16(&n.bpf.fr_instr, u64_at(buf, DBG_FR + 24), 120);
	/* The walk reads a frame's first fr_entry + 1 bytes (at most 127)
	 * and a code object's first 144 (pointers at most 136 in). */
	err = err ?: set16(&n.bpf.fr_entry, u64_at(buf, DBG_FR + 40), 126);
	err = err ?: set16(&n.bpf.co_filename, u64_at(buf, DBG_CO + 8), 136);
	err = err ?: set16(&n.bpf.co_name, u64_at(buf, DBG_CO + 16), 136);
	err = err ?: set16(&n.co_qualname, u64_at(buf, DBG_CO + 24), 136);
	err = err ?: set16(&n.co_linetable, u64_at(buf, DBG_CO + 32), 136);
	err = err ?: set16(&n.bpf.co_firstlineno, u64_at(buf, DBG_CO + 40), 140);
	err = err ?: set16(&n.bpf.co_code, u64_at(buf, DBG_CO + 72), 0xffff);
	err = err ?: set16(&n.str_ascii, u64_at(buf, DBG_STR + 24), 0xffff);
	if (err)
		return err;
	n.bpf.cframe_frame = NO;
	/* Every field the walk reads within the bytes it reads (<= 127). */
	n.bpf.fr_size = 72;
	if (n.bpf.fr_entry + 1 > n.bpf.fr_size)
		n.bpf.fr_size = n.bpf.fr_entry + 1;
	if (n.bpf.fr_back + 8 > n.bpf.fr_size)
		n.bpf.fr_size = n.bpf.fr_back + 8;
	if (n.bpf.fr_code + 8 > n.bpf.fr_size)
		n.bpf.fr_size = n.bpf.fr_code + 8;
	if (n.bpf.fr_instr + 8 > n.bpf.fr_size)
		n.bpf.fr_size = n.bpf.fr_instr + 8;
	if (n.bpf.fr_size > 127)
		return -EINVAL;
	*o = n;
	return 0;
}
