# Hostile CFI for check_record_unwind_table: an FDE whose CIE pointer names a
# CIE hidden in another entry's augmentation data, off .eh_frame's chain,
# whose initial program saves a huge register number.
	.text
	.globl _start
	.balign 16
_start:
	.fill 15, 1, 0x90
	ret
B:
	.fill 15, 1, 0x90
	ret
	.section .eh_frame,"a",@progbits
	.balign 8
.Lcie:
	.long .Lcie_end - .Lcie - 4
	.long 0
	.byte 1
	.asciz "zR"
	.byte 1, 0x78, 16
	.byte 1, 0x1b
	.byte 0x0c, 7, 8, 0x90, 1
	.balign 8, 0
.Lcie_end:
.Lfde:
	.long .Lfde_end - .Lfde - 4
.Lfde_ciep:
	.long .Lfde_ciep - .Lcie
	.long _start - .
	.long 16
	.uleb128 .Laug_end - .Laug
.Laug:
.Lhcie:
	.long .Lhcie_end - .Lhcie - 4
	.long 0
	.byte 1
	.asciz "zR"
	.byte 1, 0x78, 16
	.byte 1, 0x1b
	.byte 0x0c, 7, 8, 0x90, 1
	.byte 0x05, 0x80, 0xda, 0xc4, 0x9, 0x00
	.balign 4, 0
.Lhcie_end:
.Laug_end:
	.byte 0x0e, 8
	.balign 4, 0
.Lfde_end:
.Lfde2:
	.long .Lfde2_end - .Lfde2 - 4
.Lfde2_ciep:
	.long .Lfde2_ciep - .Lhcie
	.long B - .
	.long 16
	.byte 0
	.balign 4, 0
.Lfde2_end:
	.long 0
