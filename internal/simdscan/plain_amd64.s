#include "textflag.h"

// func plainAVX2(b []byte) int
// 64 bytes per step (two 32-byte vectors), then one 32-byte step; stops
// at the first special byte or before the last partial block.
TEXT ·plainAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	MOVL $0x22, DX
	VMOVQ DX, X1
	VPBROADCASTB X1, Y1
	MOVL $0x5c, DX
	VMOVQ DX, X2
	VPBROADCASTB X2, Y2

loop64:
	LEAQ 64(AX), DX
	CMPQ DX, CX
	JA   tail32
	VMOVDQU (SI)(AX*1), Y3
	VMOVDQU 32(SI)(AX*1), Y4
	VPCMPEQB Y3, Y1, Y5
	VPCMPEQB Y3, Y2, Y6
	VPOR     Y5, Y6, Y5
	VPOR     Y3, Y5, Y5 // a match is 0xff, a high byte has its top bit
	VPCMPEQB Y4, Y1, Y7
	VPCMPEQB Y4, Y2, Y8
	VPOR     Y7, Y8, Y7
	VPOR     Y4, Y7, Y7
	VPOR     Y5, Y7, Y8
	VPMOVMSKB Y8, DX
	TESTL    DX, DX
	JNZ      found64
	ADDQ     $64, AX
	JMP      loop64

found64:
	VPMOVMSKB Y5, DX
	TESTL     DX, DX
	JNZ       found
	ADDQ      $32, AX
	VPMOVMSKB Y7, DX
	JMP       found

tail32:
	LEAQ 32(AX), DX
	CMPQ DX, CX
	JA   done
	VMOVDQU (SI)(AX*1), Y3
	VPCMPEQB Y3, Y1, Y5
	VPCMPEQB Y3, Y2, Y6
	VPOR     Y5, Y6, Y5
	VPOR     Y3, Y5, Y5
	VPMOVMSKB Y5, DX
	TESTL    DX, DX
	JNZ      found
	ADDQ     $32, AX

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

found:
	TZCNTL DX, DX
	ADDQ   DX, AX
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func plainAVX512(b []byte) int
// 64 bytes per step; a byte's high bit goes straight to a mask register.
TEXT ·plainAVX512(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	MOVL $0x22, DX
	VPBROADCASTB DX, Z1
	MOVL $0x5c, DX
	VPBROADCASTB DX, Z2

loop:
	LEAQ 64(AX), DX
	CMPQ DX, CX
	JA   done512
	VMOVDQU64 (SI)(AX*1), Z3
	VPCMPEQB  Z3, Z1, K1
	VPCMPEQB  Z3, Z2, K2
	VPMOVB2M  Z3, K3
	KORQ      K1, K2, K1
	KORQ      K1, K3, K1
	KMOVQ     K1, DX
	TESTQ     DX, DX
	JNZ       found512
	ADDQ      $64, AX
	JMP       loop

found512:
	TZCNTQ DX, DX
	ADDQ   DX, AX

done512:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
