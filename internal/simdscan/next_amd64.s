#include "textflag.h"

// func nextAVX2(b []byte) (int, uint64)
// The first 64-byte block of b holding a special byte: its offset and
// its mask; len(b) rounded down to a block and 0 when none does.
TEXT ·nextAVX2(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	MOVL $0x22, DX
	VMOVQ DX, X1
	VPBROADCASTB X1, Y1
	MOVL $0x5c, DX
	VMOVQ DX, X2
	VPBROADCASTB X2, Y2

nextloop2:
	LEAQ 64(AX), DX
	CMPQ DX, CX
	JA   nextnone2
	VMOVDQU (SI)(AX*1), Y3
	VMOVDQU 32(SI)(AX*1), Y4
	VPCMPEQB Y3, Y1, Y5
	VPCMPEQB Y3, Y2, Y6
	VPOR     Y5, Y6, Y5
	VPOR     Y3, Y5, Y5
	VPCMPEQB Y4, Y1, Y7
	VPCMPEQB Y4, Y2, Y8
	VPOR     Y7, Y8, Y7
	VPOR     Y4, Y7, Y7
	VPMOVMSKB Y5, BX
	VPMOVMSKB Y7, DX
	SHLQ      $32, DX
	ORQ       DX, BX
	JNZ       nextfound2
	ADDQ      $64, AX
	JMP       nextloop2

nextnone2:
	XORQ BX, BX

nextfound2:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	MOVQ BX, ret1+32(FP)
	RET

// func nextAVX512(b []byte) (int, uint64)
TEXT ·nextAVX512(SB), NOSPLIT, $0-40
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX
	MOVL $0x22, DX
	VPBROADCASTB DX, Z1
	MOVL $0x5c, DX
	VPBROADCASTB DX, Z2

nextloop5:
	LEAQ 64(AX), DX
	CMPQ DX, CX
	JA   nextnone5
	VMOVDQU64 (SI)(AX*1), Z3
	VPCMPEQB  Z3, Z1, K1
	VPCMPEQB  Z3, Z2, K2
	VPMOVB2M  Z3, K3
	KORQ      K1, K2, K1
	KORQ      K1, K3, K1
	KMOVQ     K1, BX
	TESTQ     BX, BX
	JNZ       nextfound5
	ADDQ      $64, AX
	JMP       nextloop5

nextnone5:
	XORQ BX, BX

nextfound5:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	MOVQ BX, ret1+32(FP)
	RET

