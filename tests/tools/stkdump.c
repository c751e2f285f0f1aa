// SPDX-License-Identifier: BSD-2-Clause
/*
 * stkdump - print every record of a .stk file as one tab-separated text
 * line, for tests to grep and awk.  Not a user tool: stkreport info is.
 *
 *   stkdump FILE
 *
 * Lines (fields separated by one tab; numbers decimal unless "0x"):
 *   CHUNK    seq tag t0_ns t1_ns records
 *   META     key value
 *   STCK     id nr_frames 0xframe,0xframe,...      (leaf first)
 *   CNTS     tgid tid comm user_ref kernel_ref 0xkernel_ip 0xkernel_ret_ip count
 *   OFFC     target_tgid target_tid target_comm target_uref target_kref
 *            waker_tgid waker_tid waker_comm waker_uref waker_kref count blocked_ns
 *   MAPS     tgid comm time_ns nr_mappings
 *   MAP      tgid 0xstart 0xend 0xoffset prot(rwx) dev inode build_id path
 *   KSYM     0xaddr size type name module
 *   KBID     name 0xbase size build_id
 *   PYCODE   tgid py_version(0xMMmm) 0xaddr fingerprint firstlineno
 *            linetable_size qualname filename      (ESYM kind 4)
 *   STAT     name value
 *   ERROR    message
 *   SEGMENT  index closed wall_start_ns mono_start_ns writer_version  (at the end)
 *   SUMMARY  closed truncated chunks errors file_size
 *
 * build_id is lowercase hex, "-" when empty.  Exit status: 0 if the file
 * read without errors, 1 otherwise (the lines before the error are still
 * printed), 2 usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "stk.h"

static void print_hex(const uint8_t *p, uint32_t n)
{
	uint32_t i;

	if (!n)
		putchar('-');
	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static void print_chunk(const struct stk_chunk *c)
{
	size_t i, j, n = 0;

	switch (c->type) {
	case STK_CHUNK_META: n = c->u.meta.n; break;
	case STK_CHUNK_STCK: n = c->u.stck.n; break;
	case STK_CHUNK_CNTS: n = c->u.cnts.n; break;
	case STK_CHUNK_OFFC: n = c->u.offc.n; break;
	case STK_CHUNK_MAPS: n = c->u.maps.n; break;
	case STK_CHUNK_KSYM: n = c->u.ksym.n; break;
	case STK_CHUNK_KBID: n = c->u.kbid.n; break;
	case STK_CHUNK_STAT: n = c->u.stat.n; break;
	case STK_CHUNK_INDX: n = c->u.indx.n; break;
	case STK_CHUNK_ESYM: n = c->u.esym.nr_syms + c->u.esym.nr_codes; break;
	default: break;
	}
	printf("CHUNK\t%u\t%s\t%" PRIu64 "\t%" PRIu64 "\t%zu\n", c->seq, c->tag, c->t0_ns, c->t1_ns, n);

	switch (c->type) {
	case STK_CHUNK_META:
		for (i = 0; i < n; i++)
			printf("META\t%s\t%s\n", c->u.meta.kv[i].key, c->u.meta.kv[i].value);
		break;
	case STK_CHUNK_STCK:
		for (i = 0; i < n; i++) {
			const struct stk_stack *s = &c->u.stck.stacks[i];

			printf("STCK\t%" PRIu64 "\t%u\t", s->id, s->nr_frames);
			for (j = 0; j < s->nr_frames; j++)
				printf("%s0x%" PRIx64, j ? "," : "", s->frames[j]);
			putchar('\n');
		}
		break;
	case STK_CHUNK_CNTS:
		for (i = 0; i < n; i++) {
			const struct stk_count *r = &c->u.cnts.rows[i];

			printf("CNTS\t%u\t%u\t%s\t%" PRId64 "\t%" PRId64 "\t0x%" PRIx64 "\t0x%" PRIx64
			       "\t%" PRIu64 "\n",
			       r->tgid, r->tid, r->comm, r->user_stack, r->kernel_stack, r->kernel_ip,
			       r->kernel_ret_ip, r->count);
		}
		break;
	case STK_CHUNK_OFFC:
		for (i = 0; i < n; i++) {
			const struct stk_offcpu *r = &c->u.offc.rows[i];

			printf("OFFC\t%u\t%u\t%s\t%" PRId64 "\t%" PRId64 "\t%u\t%u\t%s\t%" PRId64 "\t%" PRId64
			       "\t%" PRIu64 "\t%" PRIu64 "\n",
			       r->target.tgid, r->target.tid, r->target.comm, r->target.user_stack,
			       r->target.kernel_stack, r->waker.tgid, r->waker.tid, r->waker.comm,
			       r->waker.user_stack, r->waker.kernel_stack, r->count, r->blocked_ns);
		}
		break;
	case STK_CHUNK_MAPS:
		for (i = 0; i < n; i++) {
			const struct stk_proc_maps *p = &c->u.maps.procs[i];

			printf("MAPS\t%u\t%s\t%" PRIu64 "\t%u\n", p->tgid, p->comm, p->time_ns,
			       p->nr_mappings);
			for (j = 0; j < p->nr_mappings; j++) {
				const struct stk_mapping *m = &p->mappings[j];

				printf("MAP\t%u\t0x%" PRIx64 "\t0x%" PRIx64 "\t0x%" PRIx64 "\t%c%c%c\t%" PRIu64
				       "\t%" PRIu64 "\t",
				       p->tgid, m->start, m->end, m->offset,
				       m->prot & PROT_READ ? 'r' : '-', m->prot & PROT_WRITE ? 'w' : '-',
				       m->prot & PROT_EXEC ? 'x' : '-', m->dev, m->inode);
				print_hex(m->build_id, m->build_id_size);
				printf("\t%s\n", m->path);
			}
		}
		break;
	case STK_CHUNK_KSYM:
		for (i = 0; i < n; i++) {
			const struct stk_ksym *k = &c->u.ksym.syms[i];

			printf("KSYM\t0x%" PRIx64 "\t%" PRIu64 "\t%c\t%s\t%s\n", k->addr, k->size,
			       k->type, k->name, k->module);
		}
		break;
	case STK_CHUNK_KBID:
		for (i = 0; i < n; i++) {
			const struct stk_kobj *o = &c->u.kbid.objs[i];

			printf("KBID\t%s\t0x%" PRIx64 "\t%" PRIu64 "\t", o->name, o->base, o->size);
			print_hex(o->build_id, o->build_id_size);
			putchar('\n');
		}
		break;
	case STK_CHUNK_ESYM:
		for (i = 0; i < c->u.esym.nr_codes; i++) {
			const struct stk_esym_pycode *k = &c->u.esym.codes[i];

			printf("PYCODE\t%u\t0x%04x\t0x%" PRIx64 "\t%u\t%u\t%u\t%s\t%s\n",
			       c->u.esym.tgid, c->u.esym.py_version, k->addr, k->fingerprint,
			       k->firstlineno, k->linetable_size, k->qualname, k->filename);
		}
		break;
	case STK_CHUNK_STAT:
		for (i = 0; i < n; i++)
			printf("STAT\t%s\t%" PRIu64 "\n", c->u.stat.stats[i].name,
			       c->u.stat.stats[i].value);
		break;
	default:
		break;
	}
}

int main(int argc, char **argv)
{
	struct stk_read_summary sum;
	struct stk_chunk c;
	struct stk_reader *r;
	uint32_t i;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: stkdump FILE\n");
		return 2;
	}
	r = stk_reader__open(argv[1]);
	if (!r) {
		printf("ERROR\t%s\n", stk_open_errmsg());
		return 1;
	}
	while ((ret = stk_reader__next(r, &c)) != 0) {
		if (ret < 0) {
			printf("ERROR\t%s\n", stk_reader__errmsg(r));
			continue;
		}
		print_chunk(&c);
	}
	/* At the end, when each segment's trailer has been read or not. */
	for (i = 0; i < stk_reader__segment_count(r); i++) {
		const struct stk_segment_info *s = stk_reader__segment(r, i);

		printf("SEGMENT\t%u\t%d\t%" PRIu64 "\t%" PRIu64 "\t%s\n", i, s->closed,
		       s->wall_start_ns, s->mono_start_ns, s->writer_version);
	}
	stk_reader__summary(r, &sum);
	printf("SUMMARY\t%d\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", sum.closed, sum.truncated,
	       sum.chunks, sum.errors, sum.file_size);
	stk_reader__close(r);
	return sum.errors ? 1 : 0;
}
