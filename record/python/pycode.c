// SPDX-License-Identifier: BSD-2-Clause
/*
 * pycode.c - reads CPython objects out of a live process (pycode.h):
 * code objects and their str and bytes fields, and the layout check made
 * before any name of a process is written.  Every read is bounded; every
 * pointer followed is the process's, so nothing it holds is trusted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "pycode.h"
#include "stkrec.h"

#define STR_MAX 4096	/* bytes of a name (the file format's string limit) */

static int rd(pid_t pid, uint64_t addr, void *buf, size_t size)
{
	struct iovec local = { buf, size }, remote = { (void *)(uintptr_t)addr, size };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)size)
		return 0;
	return n < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

static uint64_t u64_at(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* UTF-8 of code point @c into @p (room for 4): bytes written. */
static size_t utf8_put(char *p, uint32_t c)
{
	if (c < 0x80) {
		p[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		p[0] = (char)(0xc0 | c >> 6);
		p[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd; /* a lone surrogate: not UTF-8 */
		p[0] = (char)(0xe0 | c >> 12);
		p[1] = (char)(0x80 | (c >> 6 & 0x3f));
		p[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c > 0x10ffff)
		c = 0xfffd;
	if (c < 0x10000)
		return utf8_put(p, c);
	p[0] = (char)(0xf0 | c >> 18);
	p[1] = (char)(0x80 | (c >> 12 & 0x3f));
	p[2] = (char)(0x80 | (c >> 6 & 0x3f));
	p[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* @n characters of @kind bytes each at @raw as UTF-8, NUL bytes replaced
 * by '?', cut at STR_MAX bytes between whole characters: into *@out
 * (owned). */
static int utf8_from(const uint8_t *raw, uint32_t kind, size_t n, char **out)
{
	size_t i, used = 0;
	char *s = malloc(STR_MAX + 1);

	*out = NULL;
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint32_t c;
		char buf[4];
		size_t k;

		if (kind == 1)
			c = raw[i];
		else if (kind == 2)
			c = (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
		else
			c = (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
			    (uint32_t)raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24;
		k = utf8_put(buf, c ? c : '?');
		if (used + k > STR_MAX)
			break;
		memcpy(s + used, buf, k);
		used += k;
	}
	s[used] = '\0';
	*out = s;
	return 0;
}

/*
 * The str object at @addr as UTF-8 (utf8_from()).  Only compact strings
 * (what the compiler makes for names) are read.
 */
static int read_str(pid_t pid, const struct pyoffsets *o, uint64_t addr, char **out)
{
	uint8_t head[128], *raw = NULL;
	uint32_t state, kind;
	int64_t len;
	size_t data, n;
	int err;

	*out = NULL;
	if (o->str_compact > sizeof(head))
		return -EINVAL;
	err = rd(pid, addr, head, o->str_compact);
	if (err)
		return err;
	memcpy(&len, head + 16, sizeof(len));
	memcpy(&state, head + 32, sizeof(state));
	kind = state >> 2 & 7;
	if (!(state >> 5 & 1) || len < 0 || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	if (state >> 6 & 1) { /* ASCII */
		data = o->str_ascii;
		kind = 1;
	} else {
		data = o->str_compact;
	}
	n = (size_t)len < STR_MAX ? (size_t)len : STR_MAX;
	raw = malloc(n * kind + 1);
	if (!raw)
		return -ENOMEM;
	err = n ? rd(pid, addr + data, raw, n * kind) : 0;
	err = err ?: utf8_from(raw, kind, n, out);
	free(raw);
	return err;
}

/* The bytes object at @addr, up to PYCODE_MAX_LINETABLE bytes (a longer
 * one is left out: lines then come from the first line only). */
static int read_bytes(pid_t pid, uint64_t addr, uint8_t **out, uint32_t *size)
{
	uint8_t head[32];
	int64_t len;
	int err;

	*out = NULL;
	*size = 0;
	err = rd(pid, addr, head, sizeof(head));
	if (err)
		return err;
	memcpy(&len, head + 16, sizeof(len));
	if (len < 0)
		return -EINVAL;
	if (len == 0 || len > PYCODE_MAX_LINETABLE)
		return 0;
	*out = malloc((size_t)len);
	if (!*out)
		return -ENOMEM;
	err = rd(pid, addr + 32, *out, (size_t)len);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*size = (uint32_t)len;
	return 0;
}

int pycode__read(pid_t pid, const struct pyoffsets *o, uint64_t code_type, uint64_t addr,
		 uint32_t fp, struct pycode *out)
{
	uint8_t co[160];
	uint64_t name, filename, qualname, linetable;
	uint32_t first;
	int err;

	memset(out, 0, sizeof(*out));
	if ((size_t)o->co_linetable + 8 > sizeof(co) || (size_t)o->co_qualname + 8 > sizeof(co) ||
	    (size_t)o->bpf.co_firstlineno + 4 > sizeof(co))
		return -EINVAL;
	err = rd(pid, addr, co, sizeof(co));
	if (err)
		return err;
	if (u64_at(co, 8) != code_type)
		return -ESTALE;
	memcpy(&first, co + o->bpf.co_firstlineno, sizeof(first));
	name = u64_at(co, o->bpf.co_name);
	filename = u64_at(co, o->bpf.co_filename);
	if (stkrec_py_fingerprint(first, name, filename) != fp)
		return -ESTALE;
	qualname = o->co_qualname ? u64_at(co, o->co_qualname) : name;
	linetable = u64_at(co, o->co_linetable);
	out->addr = addr;
	out->fingerprint = fp;
	out->firstlineno = first;
	err = read_str(pid, o, qualname, &out->qualname);
	err = err ?: read_str(pid, o, filename, &out->filename);
	err = err ?: read_bytes(pid, linetable, &out->linetable, &out->linetable_size);
	if (!err && !out->qualname[0]) {
		free(out->qualname);
		out->qualname = strdup("?");
		if (!out->qualname)
			err = -ENOMEM;
	}
	if (err)
		pycode__release(out);
	return err;
}

int pycode__from_record(const struct stkrec_py_code *r, struct pycode *out)
{
	uint32_t nk = r->name_kind, fk = r->file_kind;
	size_t nn = 0, fn = 0;
	int err, whole = 1;

	memset(out, 0, sizeof(*out));
	if ((nk != 1 && nk != 2 && nk != 4) || (fk != 1 && fk != 2 && fk != 4))
		return -EINVAL;
	/* What the kernel copied: STKREC_PY_NAME_MAX - 1 bytes at most. */
	nn = r->name_len < (STKREC_PY_NAME_MAX - 1) / nk ? r->name_len : (STKREC_PY_NAME_MAX - 1) / nk;
	fn = r->file_len < (STKREC_PY_NAME_MAX - 1) / fk ? r->file_len : (STKREC_PY_NAME_MAX - 1) / fk;
	whole = nn == r->name_len && fn == r->file_len && r->lt_size < STKREC_PY_LT_MAX &&
		r->lt_size <= PYCODE_MAX_LINETABLE;
	out->addr = r->addr;
	out->fingerprint = r->fingerprint & STKREC_PY_FP_MASK;
	out->firstlineno = r->firstlineno;
	err = utf8_from(r->name, nk, nn, &out->qualname);
	err = err ?: utf8_from(r->file, fk, fn, &out->filename);
	if (!err && r->lt_size && r->lt_size < STKREC_PY_LT_MAX) {
		out->linetable = malloc(r->lt_size);
		if (!out->linetable)
			err = -ENOMEM;
		else
			memcpy(out->linetable, r->lt, r->lt_size);
		out->linetable_size = r->lt_size;
	}
	if (!err && !out->qualname[0]) {
		free(out->qualname);
		out->qualname = strdup("?");
		if (!out->qualname)
			err = -ENOMEM;
	}
	if (err) {
		pycode__release(out);
		return err;
	}
	return whole ? 0 : -E2BIG;
}

void pycode__release(struct pycode *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

/* PyTypeObject (any 3.x): tp_name, tp_basicsize, tp_members. */
#define TP_NAME 24
#define TP_BASICSIZE 32
#define TP_MEMBERS 240
/* PyMemberDef: name, type (int), offset (Py_ssize_t), flags, doc. */
#define MEMBER_SIZE 40
#define MEMBER_OFFSET 16
#define MAX_MEMBERS 48

/* Does the member named @name, if the table has it, sit at @want? */
static int member_ok(const char *name, int64_t off, const struct pyoffsets *o)
{
	if (strcmp(name, "co_firstlineno") == 0)
		return off == o->bpf.co_firstlineno;
	if (strcmp(name, "co_filename") == 0)
		return off == o->bpf.co_filename;
	if (strcmp(name, "co_name") == 0)
		return off == o->bpf.co_name;
	if (strcmp(name, "co_qualname") == 0)
		return off == o->co_qualname;
	if (strcmp(name, o->bpf.version <= PY_VERSION(3, 9) ? "co_lnotab" : "co_linetable") == 0)
		return off == o->co_linetable;
	return 1;
}

int pycode__check(pid_t pid, const struct pyoffsets *o, uint64_t runtime, uint64_t code_type)
{
	uint8_t type[TP_MEMBERS + 8], members[MAX_MEMBERS * MEMBER_SIZE];
	uint64_t interp, ts, back, members_at;
	char name[24];
	int err, i, found = 0;

	err = rd(pid, code_type, type, sizeof(type));
	if (err)
		return err;
	/* Relocations not applied yet (the file just mapped): later. */
	if (rd(pid, u64_at(type, TP_NAME), name, 5))
		return -EAGAIN;
	if (memcmp(name, "code", 5) != 0)
		return -EPROTO;
	if (o->bpf.version >= PY_VERSION(3, 11) && u64_at(type, TP_BASICSIZE) != o->bpf.co_code)
		return -EPROTO;
	members_at = u64_at(type, TP_MEMBERS);
	err = rd(pid, members_at, members, sizeof(members));
	for (i = 0; !err && i < MAX_MEMBERS; i++) {
		const uint8_t *m = members + i * MEMBER_SIZE;
		int64_t off;

		if (!u64_at(m, 0))
			break;
		memset(name, 0, sizeof(name));
		if (rd(pid, u64_at(m, 0), name, sizeof(name) - 1)) {
			/* A name near the end of a mapping: shorter reads. */
			memset(name, 0, sizeof(name));
			if (rd(pid, u64_at(m, 0), name, 8))
				return -EPROTO;
		}
		memcpy(&off, m + MEMBER_OFFSET, sizeof(off));
		if (strncmp(name, "co_", 3) == 0)
			found++;
		if (!member_ok(name, off, o))
			return -EPROTO;
	}
	if (err || found < 4)
		return -EPROTO;
	/* The thread states, once the runtime is up. */
	if (rd(pid, runtime + o->bpf.rt_interp_head, &interp, sizeof(interp)))
		return -EFAULT;
	if (!interp)
		return -EAGAIN;
	if (rd(pid, interp + o->bpf.is_tstate_head, &ts, sizeof(ts)))
		return -EPROTO;
	if (!ts)
		return -EAGAIN;
	if (rd(pid, ts + o->ts_interp, &back, sizeof(back)) || back != interp)
		return -EPROTO;
	return 0;
}
