// SPDX-License-Identifier: BSD-2-Clause
/*
 * check_record_buildid: reading GNU build-id notes from raw note buffers,
 * ELF images in memory and ELF files, with malformed input refused.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "check_main.h"
#include "buildid.h"

static const uint8_t id20[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				  7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* Append one note (name with NUL, padded to 4) to @buf at @off. */
static size_t put_note(uint8_t *buf, size_t off, uint32_t type, const char *name,
		       const void *desc, uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	Elf64_Nhdr nh = { .n_namesz = namesz, .n_descsz = descsz, .n_type = type };

	memcpy(buf + off, &nh, sizeof(nh));
	off += sizeof(nh);
	memset(buf + off, 0, (namesz + 3) & ~3u);
	memcpy(buf + off, name, namesz);
	off += (namesz + 3) & ~3u;
	memset(buf + off, 0, (descsz + 3) & ~3u);
	memcpy(buf + off, desc, descsz);
	off += (descsz + 3) & ~3u;
	return off;
}

/* A minimal ELF64 image: header, one PT_NOTE program header, the notes. */
static size_t make_elf64(uint8_t *buf, const uint8_t *notes, size_t notes_size)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	ph.p_type = PT_NOTE;
	ph.p_offset = sizeof(eh) + sizeof(ph);
	ph.p_filesz = notes_size;
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + ph.p_offset, notes, notes_size);
	return ph.p_offset + notes_size;
}

static size_t make_elf32(uint8_t *buf, const uint8_t *notes, size_t notes_size)
{
	Elf32_Ehdr eh = { 0 };
	Elf32_Phdr ph = { 0 };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_386;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	ph.p_type = PT_NOTE;
	ph.p_offset = sizeof(eh) + sizeof(ph);
	ph.p_filesz = (Elf32_Word)notes_size;
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	memcpy(buf + ph.p_offset, notes, notes_size);
	return ph.p_offset + notes_size;
}

START_TEST(gnu_build_id_found_after_other_notes)
{
	uint8_t notes[256], out[64];
	size_t n = 0;

	n = put_note(notes, n, 1, "GNU", "\0\0\0\0\3\0\0\0\2\0\0\0\0\0\0\0", 16); /* ABI tag */
	n = put_note(notes, n, 3, "Xen", id20, 8);	/* type 3, wrong owner */
	n = put_note(notes, n, 3, "GNU", id20, 20);
	ck_assert_int_eq(buildid__from_notes(notes, n, out, sizeof(out)), 20);
	ck_assert_mem_eq(out, id20, 20);
}
END_TEST

START_TEST(notes_without_build_id_give_zero)
{
	uint8_t notes[64], out[64];
	size_t n = put_note(notes, 0, 1, "GNU", "abcd", 4);

	ck_assert_int_eq(buildid__from_notes(notes, n, out, sizeof(out)), 0);
	ck_assert_int_eq(buildid__from_notes(notes, 0, out, sizeof(out)), 0);
}
END_TEST

START_TEST(note_running_past_the_buffer_is_ebadmsg)
{
	uint8_t notes[64], out[64];
	size_t n = put_note(notes, 0, 3, "GNU", id20, 20);

	ck_assert_int_eq(buildid__from_notes(notes, n - 4, out, sizeof(out)), -EBADMSG);
	((Elf64_Nhdr *)notes)->n_namesz = 1000;
	ck_assert_int_eq(buildid__from_notes(notes, n, out, sizeof(out)), -EBADMSG);
}
END_TEST

START_TEST(long_build_id_is_truncated_to_the_output)
{
	uint8_t notes[64], out[8];
	size_t n = put_note(notes, 0, 3, "GNU", id20, 20);

	ck_assert_int_eq(buildid__from_notes(notes, n, out, sizeof(out)), 8);
	ck_assert_mem_eq(out, id20, 8);
}
END_TEST

START_TEST(elf64_and_elf32_images_give_their_build_id)
{
	uint8_t notes[64], img[512], out[64];
	size_t n = put_note(notes, 0, 3, "GNU", id20, 20), sz;

	sz = make_elf64(img, notes, n);
	ck_assert_int_eq(buildid__from_elf_mem(img, sz, out, sizeof(out)), 20);
	ck_assert_mem_eq(out, id20, 20);
	memset(out, 0, sizeof(out));
	sz = make_elf32(img, notes, n);
	ck_assert_int_eq(buildid__from_elf_mem(img, sz, out, sizeof(out)), 20);
	ck_assert_mem_eq(out, id20, 20);
}
END_TEST

START_TEST(non_elf_is_enoexec_and_cut_headers_are_ebadmsg)
{
	uint8_t notes[64], img[512], out[64];
	size_t n = put_note(notes, 0, 3, "GNU", id20, 20), sz;

	memset(img, 'x', sizeof(img));
	ck_assert_int_eq(buildid__from_elf_mem(img, sizeof(img), out, sizeof(out)), -ENOEXEC);
	ck_assert_int_eq(buildid__from_elf_mem(img, 3, out, sizeof(out)), -ENOEXEC);
	sz = make_elf64(img, notes, n);
	/* The note segment lies past the end of the image. */
	ck_assert_int_eq(buildid__from_elf_mem(img, sz - 8, out, sizeof(out)), -EBADMSG);
	/* Program headers past the end. */
	ck_assert_int_eq(buildid__from_elf_mem(img, sizeof(Elf64_Ehdr) + 8, out, sizeof(out)),
			 -EBADMSG);
}
END_TEST

START_TEST(absurd_program_header_count_is_ebadmsg)
{
	uint8_t notes[64], img[512], out[64];
	size_t n = put_note(notes, 0, 3, "GNU", id20, 20), sz;

	sz = make_elf64(img, notes, n);
	((Elf64_Ehdr *)img)->e_phnum = 60000;
	ck_assert_int_eq(buildid__from_elf_mem(img, sz, out, sizeof(out)), -EBADMSG);
}
END_TEST

START_TEST(elf_file_is_read_through_its_fd)
{
	uint8_t notes[64], img[512], out[64];
	char path[] = "/tmp/check_buildid.XXXXXX";
	size_t n = put_note(notes, 0, 3, "GNU", id20, 20), sz;
	int fd;

	sz = make_elf64(img, notes, n);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, img, sz), (ssize_t)sz);
	ck_assert_int_eq(buildid__from_elf_fd(fd, out, sizeof(out)), 20);
	ck_assert_mem_eq(out, id20, 20);
	/* A file too short for the note it announces. */
	ck_assert_int_eq(ftruncate(fd, (off_t)sz - 4), 0);
	ck_assert_int_eq(buildid__from_elf_fd(fd, out, sizeof(out)), -EBADMSG);
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(raw_note_file_is_read)
{
	uint8_t notes[64], out[64];
	char path[] = "/tmp/check_buildid.XXXXXX";
	size_t n = put_note(notes, 0, 3, "GNU", id20, 20);
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, notes, n), (ssize_t)n);
	close(fd);
	ck_assert_int_eq(buildid__from_note_file(path, out, sizeof(out)), 20);
	ck_assert_mem_eq(out, id20, 20);
	unlink(path);
	ck_assert_int_eq(buildid__from_note_file(path, out, sizeof(out)), -ENOENT);
}
END_TEST

START_TEST(our_own_vdso_has_a_build_id)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	uint8_t out[64];

	if (!base)
		return; /* no vDSO on this system */
	/* The vDSO is at least one page; its notes are within it. */
	ck_assert_int_gt(buildid__from_elf_mem((const void *)base, 4096, out, sizeof(out)), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record_buildid");
	TCase *tc = tcase_create("buildid");

	tcase_add_test(tc, gnu_build_id_found_after_other_notes);
	tcase_add_test(tc, notes_without_build_id_give_zero);
	tcase_add_test(tc, note_running_past_the_buffer_is_ebadmsg);
	tcase_add_test(tc, long_build_id_is_truncated_to_the_output);
	tcase_add_test(tc, elf64_and_elf32_images_give_their_build_id);
	tcase_add_test(tc, non_elf_is_enoexec_and_cut_headers_are_ebadmsg);
	tcase_add_test(tc, absurd_program_header_count_is_ebadmsg);
	tcase_add_test(tc, elf_file_is_read_through_its_fd);
	tcase_add_test(tc, raw_note_file_is_read);
	tcase_add_test(tc, our_own_vdso_has_a_build_id);
	suite_add_tcase(s, tc);
	return check_run(s);
}
