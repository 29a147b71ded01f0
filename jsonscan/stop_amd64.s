//go:build !purego

#include "textflag.h"

// func stopMask64AVX2(b *[64]byte) uint64
//
// Returns a mask with bit k set where b[k] is '"', '\\' or below 0x20.
TEXT ·stopMask64AVX2(SB), NOSPLIT, $0-16
	MOVQ b+0(FP), SI

	MOVL         $0x22, AX
	VMOVD        AX, X1
	VPBROADCASTB X1, Y1
	MOVL         $0x5c, AX
	VMOVD        AX, X2
	VPBROADCASTB X2, Y2
	MOVL         $0x1f, AX
	VMOVD        AX, X3
	VPBROADCASTB X3, Y3

	VMOVDQU  (SI), Y0
	VMOVDQU  32(SI), Y7
	VPCMPEQB Y0, Y1, Y4
	VPCMPEQB Y0, Y2, Y5
	VPMINUB  Y0, Y3, Y6
	VPCMPEQB Y0, Y6, Y6
	VPOR     Y4, Y5, Y4
	VPOR     Y4, Y6, Y4
	VPCMPEQB Y7, Y1, Y8
	VPCMPEQB Y7, Y2, Y9
	VPMINUB  Y7, Y3, Y10
	VPCMPEQB Y7, Y10, Y10
	VPOR     Y8, Y9, Y8
	VPOR     Y8, Y10, Y8
	VPMOVMSKB Y4, AX
	VPMOVMSKB Y8, CX
	VZEROUPPER
	SHLQ $32, CX
	ORQ  CX, AX
	MOVQ AX, ret+8(FP)
	RET
