# Hostile CFI for check_record_unwind_table: a register-255 rule, then 64
# DW_CFA_remember_state (libdw copies the frame for each; the 1M of the
# review's repro took 2 GB and 6.8 s).
	.text
	.globl _start
_start:
	.cfi_startproc
	.cfi_escape 0x05, 0xff, 0x01, 0x00
	.rept 64
	.cfi_escape 0x0a
	.endr
	nop
	nop
	ret
	.cfi_endproc
