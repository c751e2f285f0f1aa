# Hostile CFI for check_record_unwind_table (mk/unwind.mk): an FDE whose
# program saves register 20000000 (DW_CFA_offset_extended), which libdw
# would size every frame's register array by.  The test also feeds it
# with .eh_frame's section type changed and with no section headers.
	.text
	.globl _start
_start:
	.cfi_startproc
	.cfi_escape 0x05, 0x80, 0xda, 0xc4, 0x9, 0x00
	nop
	nop
	ret
	.cfi_endproc
