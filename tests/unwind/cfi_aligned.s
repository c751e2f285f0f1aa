# Hostile CFI for check_record_unwind_table (linked without .eh_frame_hdr):
# a CIE "zR" whose FDE pointer encoding is DW_EH_PE_aligned (0x54), which
# libdw reads with padding first: read without it, the FDE's bytes look
# like a DW_CFA_def_cfa_expression; read with it, they are
# DW_CFA_offset_extended r20000000.
	.text
	.globl _start
	.balign 16
_start:
	.fill 16, 1, 0x90
B:
	.fill 15, 1, 0x90
	ret
	.section .eh_frame,"a",@progbits
	.balign 8
.Lcie1:
	.long .Lcie1_end - .Lcie1 - 4
	.long 0
	.byte 1
	.asciz ""
	.byte 1, 0x78, 16
	.byte 0x0c, 7, 8, 0x90, 1
	.balign 8, 0
.Lcie1_end:
.Lfde_a:
	.long .Lfde_a_end - .Lfde_a - 4
.Lfde_a_ciep:
	.long .Lfde_a_ciep - .Lcie1
	.quad _start
	.quad 16
	.balign 8, 0
.Lfde_a_end:
.Lcie2:
	.long .Lcie2_end - .Lcie2 - 4
	.long 0
	.byte 1
	.asciz "zR"
	.byte 1, 0x78, 16
	.byte 1, 0x54
	.byte 0x0c, 7, 8, 0x90, 1
	.balign 8, 0
	.fill 4, 1, 0
.Lcie2_end:
.Lfde_b:
	.long .Lfde_b_end - .Lfde_b - 4
.Lfde_b_ciep:
	.long .Lfde_b_ciep - .Lcie2
	.byte 0xee, 0xee, 0xee, 0xee
	.quad B
	.quad 16
	.byte 0xf, 0x14, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x5, 0x80, 0xda, 0xc4, 0x9, 0x0
.Lfde_b_end:
	.long 0
