/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pycode.h - reads a live process's CPython objects with
 * process_vm_readv(): a code object's names, first line and line table
 * (what a report needs to name its frames offline), and the checks that
 * an interpreter's layout is the one its table says.
 */
#ifndef STK_PYCODE_H
#define STK_PYCODE_H

#include <stdint.h>
#include <sys/types.h>

#include "pytables.h"
#include "stkrec.h"

#define PYCODE_MAX_LINETABLE 65536

struct pycode {
	uint64_t addr;
	uint32_t fingerprint;
	uint32_t firstlineno;
	char *qualname;		/* owned, never empty */
	char *filename;		/* owned */
	uint8_t *linetable;	/* owned; NULL when empty */
	uint32_t linetable_size;
};

/*
 * pycode__read() - code object @addr of process @pid, whose type must be
 * @code_type and whose fingerprint @fp (bpf/stkrec.h).  Returns 0 with
 * @out filled, -ESRCH when the process is gone, -EFAULT when the object
 * cannot be read, -ESTALE when it is no longer the code object sampled
 * (type or fingerprint differ: freed, the address reused), -EINVAL when a
 * field is not what the layout says, -ENOMEM.
 */
int pycode__read(pid_t pid, const struct pyoffsets *o, uint64_t code_type, uint64_t addr,
		 uint32_t fp, struct pycode *out);

/*
 * pycode__from_record() - a code object as the BPF walk read it when it
 * first met it (bpf/stkrec.h, struct stkrec_py_code), decoded into @out.
 * Returns 0, -E2BIG when the kernel had only part of a name or of the line
 * table (@out holds what it had: a line table then left empty), or
 * -EINVAL (a string that was not a compact str), -ENOMEM.
 */
int pycode__from_record(const struct stkrec_py_code *r, struct pycode *out);

/* pycode__release() - free what @c owns. */
void pycode__release(struct pycode *c);

/*
 * pycode__check() - is the interpreter of @pid laid out as @o says: its
 * PyCode_Type at @code_type is named "code", its member table gives the
 * code object fields @o has (and 3.11+: its basic size is where the
 * bytecode starts), and the first thread state of _PyRuntime at
 * @runtime points back to its interpreter.  Returns 0 (yes), -EAGAIN (not
 * initialized yet: try later), -ESRCH (gone), -EPROTO (no: another
 * layout), or another -errno.
 */
int pycode__check(pid_t pid, const struct pyoffsets *o, uint64_t runtime, uint64_t code_type);

#endif /* STK_PYCODE_H */
