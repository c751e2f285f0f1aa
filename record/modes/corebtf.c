// SPDX-License-Identifier: BSD-2-Clause
/*
 * corebtf.c - a minimal kernel BTF for a BPF object's CO-RE relocations,
 * made from the kernel's and cached per boot (see corebtf.h).
 *
 * The relocations are read from the object's .BTF.ext (its layout is the
 * kernel's Documentation/bpf/btf.rst, a record being the UAPI struct
 * bpf_core_relo); the types are copied with libbpf's public btf__add_*().
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cachedir.h"
#include "corebtf.h"
#include "stk.h"

/* .BTF.ext's header, as far as the CO-RE relocations (Linux 5.x). */
struct btf_ext_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t func_info_off, func_info_len;
	uint32_t line_info_off, line_info_len;
	uint32_t core_relo_off, core_relo_len;
};

/* struct bpf_core_relo (linux/bpf.h), and its kinds. */
struct core_relo {
	uint32_t insn_off;
	uint32_t type_id;
	uint32_t access_str_off;
	uint32_t kind;
};

enum {
	RELO_FIELD_LAST = 5,		/* FIELD_BYTE_OFFSET .. FIELD_RSHIFT_U64 */
	RELO_TYPE_ID_TARGET = 7,
	RELO_TYPE_MATCHES = 12,
	RELO_KIND_MAX = 12,
};

/* A set of names (not owned), open addressing. */
struct nameset {
	const char **s;
	size_t *len;
	size_t cap, nr;
};

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

static int nameset_add(struct nameset *ns, const char *s, size_t len);

static int nameset_grow(struct nameset *ns)
{
	struct nameset old = *ns;
	size_t i;

	ns->cap = old.cap ? old.cap * 2 : 256;
	ns->nr = 0;
	ns->s = calloc(ns->cap, sizeof(*ns->s));
	ns->len = calloc(ns->cap, sizeof(*ns->len));
	if (!ns->s || !ns->len) {
		free(ns->s);
		free(ns->len);
		*ns = old;
		return -ENOMEM;
	}
	for (i = 0; i < old.cap; i++)
		if (old.s[i])
			nameset_add(ns, old.s[i], old.len[i]);
	free(old.s);
	free(old.len);
	return 0;
}

static size_t nameset_slot(const struct nameset *ns, const char *s, size_t len)
{
	size_t i = (size_t)fnv1a(s, len, 0xcbf29ce484222325ULL) & (ns->cap - 1);

	while (ns->s[i] && (ns->len[i] != len || memcmp(ns->s[i], s, len)))
		i = (i + 1) & (ns->cap - 1);
	return i;
}

static int nameset_add(struct nameset *ns, const char *s, size_t len)
{
	size_t i;

	if ((ns->nr + 1) * 2 > ns->cap && nameset_grow(ns))
		return -ENOMEM;
	i = nameset_slot(ns, s, len);
	if (!ns->s[i]) {
		ns->s[i] = s;
		ns->len[i] = len;
		ns->nr++;
	}
	return 0;
}

static int nameset_has(const struct nameset *ns, const char *s, size_t len)
{
	return ns->cap && ns->s[nameset_slot(ns, s, len)] != NULL;
}

static void nameset_free(struct nameset *ns)
{
	free(ns->s);
	free(ns->len);
}

/* The length of @name without a "___flavor" suffix, as libbpf matches
 * CO-RE candidates (struct task_struct___pre514 is a task_struct). */
static size_t essential_len(const char *name)
{
	size_t n = strlen(name), i;

	for (i = n >= 5 ? n - 5 + 1 : 0; i-- > 0;)
		if (name[i] != '_' && name[i + 1] == '_' && name[i + 2] == '_' &&
		    name[i + 3] == '_' && name[i + 4] != '_')
			return i + 1;
	return n;
}

static const struct btf_type *skip_mods(const struct btf *btf, uint32_t *id)
{
	const struct btf_type *t = btf__type_by_id(btf, *id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		*id = t->type;
		t = btf__type_by_id(btf, *id);
	}
	return t;
}

/* The roots and member names one relocation needs of the target. */
static int relo_names(const struct btf *local, const struct core_relo *r, struct nameset *roots,
		      struct nameset *members)
{
	const struct btf_type *t = btf__type_by_id(local, r->type_id);
	const char *name, *acc;
	uint32_t id = r->type_id;
	int first = 1, err;

	if (r->kind == RELO_TYPE_ID_TARGET || r->kind == RELO_TYPE_MATCHES || r->kind > RELO_KIND_MAX)
		return -EOPNOTSUPP;
	if (!t)
		return -EBADMSG;
	name = btf__name_by_offset(local, t->name_off);
	if (!name || !*name)
		return 0;	/* libbpf refuses it whatever the target */
	err = nameset_add(roots, name, essential_len(name));
	if (err || r->kind > RELO_FIELD_LAST)
		return err;
	acc = btf__name_by_offset(local, r->access_str_off);
	t = skip_mods(local, &id);
	while (acc && *acc && t) {
		char *end;
		unsigned long idx = strtoul(acc, &end, 10);

		if (end == acc)
			return -EBADMSG;
		acc = *end == ':' ? end + 1 : end;
		if (first) {		/* the root's array index */
			first = 0;
			continue;
		}
		if (btf_is_composite(t)) {
			const struct btf_member *m = btf_members(t) + idx;
			const char *mn;

			if (idx >= btf_vlen(t))
				return -EBADMSG;
			mn = btf__name_by_offset(local, m->name_off);
			if (mn && *mn && (err = nameset_add(members, mn, strlen(mn))))
				return err;
			id = m->type;
		} else if (btf_is_array(t)) {
			id = btf_array(t)->type;
		} else {
			break;
		}
		t = skip_mods(local, &id);
	}
	return 0;
}

/* The object's .BTF (into @local) and .BTF.ext's relocations' names. */
static int object_names(const void *obj, size_t size, struct btf **local, struct nameset *roots,
			struct nameset *members)
{
	Elf_Data *btf_d = NULL, *ext_d = NULL;
	Elf_Scn *scn = NULL;
	const struct btf_ext_hdr *h;
	const uint8_t *p, *end;
	uint32_t rec_size;
	size_t shstrndx;
	void *copy;
	Elf *elf;
	int err = -EBADMSG;

	*local = NULL;
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, obj, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".BTF"))
			btf_d = elf_getdata(scn, NULL);
		else if (name && !strcmp(name, ".BTF.ext"))
			ext_d = elf_getdata(scn, NULL);
	}
	if (!btf_d || !btf_d->d_buf)
		goto out;
	*local = btf__new(btf_d->d_buf, (uint32_t)btf_d->d_size);
	if (!*local) {
		err = -errno;
		goto out;
	}
	err = 0;
	if (!ext_d || !ext_d->d_buf)	/* no relocations */
		goto out;
	err = -EBADMSG;
	h = ext_d->d_buf;
	if (ext_d->d_size < 8 || h->magic != 0xeB9F || h->hdr_len > ext_d->d_size)
		goto out;
	if (h->hdr_len < sizeof(*h)) {	/* a header without CO-RE */
		err = 0;
		goto out;
	}
	p = (const uint8_t *)ext_d->d_buf + h->hdr_len + h->core_relo_off;
	end = p + h->core_relo_len;
	if (!h->core_relo_len) {
		err = 0;
		goto out;
	}
	if (end > (const uint8_t *)ext_d->d_buf + ext_d->d_size || end - p < 4)
		goto out;
	memcpy(&rec_size, p, 4);
	p += 4;
	if (rec_size < sizeof(struct core_relo))
		goto out;
	while (p + 8 <= end) {
		uint32_t num, i;

		memcpy(&num, p + 4, 4);
		p += 8;
		if ((uint64_t)num * rec_size > (uint64_t)(end - p))
			goto out;
		for (i = 0; i < num; i++, p += rec_size) {
			struct core_relo r;

			memcpy(&r, p, sizeof(r));
			err = relo_names(*local, &r, roots, members);
			if (err)
				goto out;
		}
	}
	err = 0;
out:
	if (err) {
		btf__free(*local);
		*local = NULL;
	}
	elf_end(elf);
	free(copy);
	return err;
}

/* Mark @id and the types it needs; a struct's or union's members only
 * when anonymous or named in @members. */
static int mark(const struct btf *vm, uint32_t id, uint8_t *kept, uint32_t *stack, uint32_t cnt,
		const struct nameset *members)
{
	size_t sp = 0;

	if (!id || kept[id])
		return 0;
	kept[id] = 1;
	stack[sp++] = id;
	while (sp) {
		const struct btf_type *t = btf__type_by_id(vm, stack[--sp]);
		uint32_t refs[2], nr = 0, i;

#define PUSH(x)									\
	do {									\
		uint32_t x_ = (x);						\
		if (x_ >= cnt)							\
			return -EBADMSG;					\
		if (x_ && !kept[x_]) {						\
			kept[x_] = 1;						\
			stack[sp++] = x_;					\
		}								\
	} while (0)
		switch (btf_kind(t)) {
		case BTF_KIND_PTR:
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			refs[nr++] = t->type;
			break;
		case BTF_KIND_ARRAY:
			refs[nr++] = btf_array(t)->type;
			refs[nr++] = btf_array(t)->index_type;
			break;
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
			for (i = 0; i < btf_vlen(t); i++) {
				const struct btf_member *m = btf_members(t) + i;
				const char *n = btf__name_by_offset(vm, m->name_off);

				if (!n || !*n || nameset_has(members, n, strlen(n)))
					PUSH(m->type);
			}
			break;
		case BTF_KIND_FUNC_PROTO:
			refs[nr++] = t->type;
			for (i = 0; i < btf_vlen(t); i++)
				PUSH(btf_params(t)[i].type);
			break;
		case BTF_KIND_INT:
		case BTF_KIND_FLOAT:
		case BTF_KIND_FWD:
		case BTF_KIND_ENUM:
		case BTF_KIND_ENUM64:
			break;
		default:	/* FUNC, VAR, DATASEC, DECL_TAG: never reached */
			return -EBADMSG;
		}
		for (i = 0; i < nr; i++)
			PUSH(refs[i]);
#undef PUSH
	}
	return 0;
}

/* Add @t of @vm to @dst, its references through @map. */
static int copy_type(struct btf *dst, const struct btf *vm, const struct btf_type *t,
		     const uint32_t *map, uint32_t placeholder)
{
	const char *name = btf__name_by_offset(vm, t->name_off);
	int err = 0, id;
	uint32_t i;

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
	case BTF_KIND_FWD:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		id = btf__add_type(dst, vm, t);	/* no references to map */
		break;
	case BTF_KIND_PTR:
		id = btf__add_ptr(dst, (int)map[t->type]);
		break;
	case BTF_KIND_TYPEDEF:
		id = btf__add_typedef(dst, name, (int)map[t->type]);
		break;
	case BTF_KIND_CONST:
		id = btf__add_const(dst, (int)map[t->type]);
		break;
	case BTF_KIND_VOLATILE:
		id = btf__add_volatile(dst, (int)map[t->type]);
		break;
	case BTF_KIND_RESTRICT:
		id = btf__add_restrict(dst, (int)map[t->type]);
		break;
	case BTF_KIND_TYPE_TAG:
		id = btf__add_type_tag(dst, name, (int)map[t->type]);
		break;
	case BTF_KIND_ARRAY:
		id = btf__add_array(dst, (int)map[btf_array(t)->index_type],
				    (int)map[btf_array(t)->type], btf_array(t)->nelems);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		id = btf_is_struct(t) ? btf__add_struct(dst, name, t->size)
				      : btf__add_union(dst, name, t->size);
		for (i = 0; id > 0 && !err && i < btf_vlen(t); i++) {
			const struct btf_member *m = btf_members(t) + i;
			uint32_t mt = map[m->type];

			err = btf__add_field(dst, btf__name_by_offset(vm, m->name_off),
					     (int)(mt || !m->type ? mt : placeholder),
					     btf_member_bit_offset(t, i),
					     btf_member_bitfield_size(t, i));
		}
		break;
	case BTF_KIND_FUNC_PROTO:
		id = btf__add_func_proto(dst, (int)map[t->type]);
		for (i = 0; id > 0 && !err && i < btf_vlen(t); i++)
			err = btf__add_func_param(dst, btf__name_by_offset(vm, btf_params(t)[i].name_off),
						  (int)map[btf_params(t)[i].type]);
		break;
	default:
		return -EBADMSG;
	}
	if (id < 0)
		return id;
	return err;
}

int corebtf__minimize(const struct btf *vm, const void *obj, size_t obj_size, struct btf **out)
{
	struct nameset roots = { 0 }, members = { 0 };
	struct btf *local = NULL, *dst = NULL;
	uint32_t cnt = btf__type_cnt(vm), id, nr = 0, *map = NULL, *stack = NULL;
	uint8_t *kept = NULL;
	int err;

	*out = NULL;
	err = object_names(obj, obj_size, &local, &roots, &members);
	if (err)
		goto out;
	kept = calloc(cnt, 1);
	map = calloc(cnt, sizeof(*map));
	stack = malloc(cnt * sizeof(*stack));
	if (!kept || !map || !stack) {
		err = -ENOMEM;
		goto out;
	}
	/* Every candidate libbpf could find for a root: same essential
	 * name, any kind (a superset of its same-kind search). */
	for (id = 1; id < cnt && roots.nr; id++) {
		const struct btf_type *t = btf__type_by_id(vm, id);
		const char *n = btf__name_by_offset(vm, t->name_off);

		if (!n || !*n || btf_is_func(t) || btf_is_var(t) || btf_is_datasec(t) ||
		    btf_is_decl_tag(t) || !nameset_has(&roots, n, essential_len(n)))
			continue;
		err = mark(vm, id, kept, stack, cnt, &members);
		if (err)
			goto out;
	}
	for (id = 1; id < cnt; id++)
		if (kept[id])
			map[id] = ++nr;
	dst = btf__new_empty();
	if (!dst) {
		err = -errno;
		goto out;
	}
	for (id = 1; id < cnt && !err; id++)
		if (kept[id])
			err = copy_type(dst, vm, btf__type_by_id(vm, id), map, nr + 1);
	if (!err) {
		int p = btf__add_int(dst, "int", 4, BTF_INT_SIGNED);

		err = p < 0 ? p : (uint32_t)p != nr + 1 ? -EBADMSG : 0;
	}
out:
	if (err)
		btf__free(dst);
	else
		*out = dst;
	btf__free(local);
	nameset_free(&roots);
	nameset_free(&members);
	free(kept);
	free(map);
	free(stack);
	return err;
}

/* The cache file, NAME-OBJHASH.stkbtf: this header, then the raw BTF.  Not
 * ".btf": the trim deletes files by suffix, and a directory given to
 * --btf-cache may hold others' BTF files (btfhub's are NAME.btf).  Bump
 * COREBTF_VERSION when corebtf__minimize() makes something else for the
 * same object bytes, or a file made by the old code is used. */
#define COREBTF_MAGIC "STKCBTF1"
#define COREBTF_VERSION 1
#define COREBTF_SUFFIX ".stkbtf"
/* Minimal BTFs of stkrec builds no longer run go, the oldest first. */
#define COREBTF_MAX_BYTES (4u << 20)

struct corebtf_header {
	char magic[8];
	uint32_t version;
	uint32_t crc;			/* CRC32C of the BTF */
	uint64_t obj_hash;		/* FNV-1a of the object's bytes */
	uint64_t size;			/* of the BTF */
	char boot_id[40];		/* /proc/sys/kernel/random/boot_id */
	char release[72];		/* uname -r */
};

/* This boot's key, into @h (zero-padded). */
static int header_key(struct corebtf_header *h, const void *obj, size_t obj_size)
{
	struct utsname u;
	ssize_t n;
	int fd;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, COREBTF_MAGIC, sizeof(h->magic));
	h->version = COREBTF_VERSION;
	h->obj_hash = fnv1a(obj, obj_size, 0xcbf29ce484222325ULL);
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, h->boot_id, sizeof(h->boot_id) - 1);
	close(fd);
	if (n < 32)
		return n < 0 ? -errno : -ENODATA;
	h->boot_id[strcspn(h->boot_id, "\n")] = '\0';
	if (uname(&u) < 0)
		return -errno;
	snprintf(h->release, sizeof(h->release), "%s", u.release);
	return 0;
}

static int memfd_of(const void *data, size_t size)
{
	int fd = memfd_create("stkrec-core-btf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	const char *p = data;
	int err;

	if (fd < 0)
		return -errno;
	while (size) {
		ssize_t n = write(fd, p, size);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			close(fd);
			return err;
		}
		p += n;
		size -= (size_t)n;
	}
	/* What was checked is what libbpf reads. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	return fd;
}

/* The cached BTF at @path if it is whole and made for @key: a memfd of
 * it, or -errno (-ENOENT missing, -EBADMSG damaged or another's, -EPERM
 * not a regular file of ours that only we may write: not read). */
static int cache_read(const char *path, const struct corebtf_header *key)
{
	struct corebtf_header h;
	struct stat st;
	struct btf *btf;
	void *buf = NULL;
	int fd, err;

	fd = cachedir__open(path, &st);
	if (fd < 0)
		return fd;
	err = -EBADMSG;
	if (read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) || memcmp(h.magic, key->magic, 8) ||
	    h.version != key->version || h.obj_hash != key->obj_hash ||
	    memcmp(h.boot_id, key->boot_id, sizeof(h.boot_id)) ||
	    memcmp(h.release, key->release, sizeof(h.release)) || !h.size ||
	    h.size > (64u << 20) || (uint64_t)st.st_size != sizeof(h) + h.size)
		goto out;
	buf = malloc(h.size);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	if (read(fd, buf, h.size) != (ssize_t)h.size || stk_crc32c(0, buf, h.size) != h.crc)
		goto out;
	btf = btf__new(buf, (uint32_t)h.size);	/* libbpf's checks, too */
	if (!btf)
		goto out;
	btf__free(btf);
	err = memfd_of(buf, h.size);
out:
	free(buf);
	close(fd);
	return err;
}

/* Store @btf at @path for @key (best effort). */
static void cache_write(const char *dir, const char *path, struct corebtf_header *key,
			const void *btf, uint32_t size)
{
	struct iovec iov[2] = { { key, sizeof(*key) }, { (void *)btf, size } };

	key->size = size;
	key->crc = stk_crc32c(0, btf, size);
	if (!cachedir__store(path, iov, 2))
		cachedir__trim(dir, COREBTF_SUFFIX, COREBTF_MAX_BYTES);
}

int corebtf__open(const char *dir, const char *name, const void *obj, size_t obj_size, int *made)
{
	struct corebtf_header key;
	struct btf *vm = NULL, *min = NULL;
	char path[PATH_MAX];
	const void *raw;
	uint32_t size;
	int fd, err, cache;

	if (made)
		*made = 0;
	err = header_key(&key, obj, obj_size);
	if (err)
		return err;
	cache = dir && cachedir__make(dir) == 0 &&
		snprintf(path, sizeof(path), "%s/%s-%016llx" COREBTF_SUFFIX, dir, name,
			 (unsigned long long)key.obj_hash) < (int)sizeof(path);
	/* A directory that cannot be ours (not root, /var read-only): made
	 * at each start, the minimal BTF would cost more than libbpf's own
	 * parse (16 ms against 8 here), so the caller takes libbpf's. */
	if (dir && !cache)
		return -EACCES;
	if (cache) {
		/* Anything else (damaged, foreign, a symlink, a file others
		 * may write) is made again and renamed over: the directory is
		 * ours alone (cachedir__ok()), so the rename is. */
		fd = cache_read(path, &key);
		if (fd >= 0)
			return fd;
	}
	vm = btf__load_vmlinux_btf();
	if (!vm)
		return -errno;
	err = corebtf__minimize(vm, obj, obj_size, &min);
	if (err)
		goto out;
	raw = btf__raw_data(min, &size);
	if (!raw) {
		err = -ENOMEM;
		goto out;
	}
	if (cache)
		cache_write(dir, path, &key, raw, size);
	err = memfd_of(raw, size);
	if (err >= 0 && made)
		*made = 1;
out:
	btf__free(min);
	btf__free(vm);
	return err;
}
