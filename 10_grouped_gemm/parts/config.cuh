// 10_grouped_gemm/parts/config.cuh: 09's kernel as step 10 runs it, and the
// four ways it gets an expert's tensor maps (SOURCE, maps.cuh).
#pragma once
#include "09_gemm/parts/config.cuh"

// What changes from one expert to the next is where its operands are: the
// tensor maps. Four ways to get a map for expert g (SOURCE):
//   ONE_MAP      no per-expert map: one map over all of A (every expert's rows)
//                and one over all of B (G N rows); a tile past its expert's
//                last row reads the next expert's rows, and the epilogue
//                stores from registers, masked at M_g (no TMA store: it could
//                not clip at an expert's edge).
//   HOST_MAPS    3 maps per expert (A_g: M_g rows, B_g, C_g: M_g rows), built on
//                the host (cuTensorMapEncodeTiled) and copied to global memory;
//                each thread that uses one acquires it (.sys: the host wrote it).
//   DEVICE_MAPS  the same array, built by a kernel (build_maps) from three
//                templates: address and rows edited in place, released; the
//                users acquire at .gpu scope.
//   EDIT         no array: each CTA edits its own A, B and C maps in shared
//                memory when its next tile belongs to another expert, publishes
//                them to a global slot of its own (cp_fenceproxy) and acquires.
enum { ONE_MAP, HOST_MAPS, DEVICE_MAPS, EDIT };

// 09's tile and knobs (09_gemm/parts/config.cuh): 128 x 256 outputs per CTA
// (two consumer warpgroups of 64 rows, cooperative), K in stages of 64 bf16
// (one 128-byte swizzle row), 4 stages, a producer warpgroup that gives its
// registers to the consumers; C leaves through shared memory and the TMA
// store in boxes of 64 rows x 32 fp32 (ONE_MAP: from registers).
// No cluster: 09's ablation measured the multicast within noise of the same
// kernel without it.
#define STAGES 4
template <int SOURCE>
using Grouped = Config<COOPERATIVE, STAGES, true, true, 1, 1, SOURCE == ONE_MAP ? EPI_DIRECT : EPI_TMA_STORE>;
static constexpr uint32_t BM = Grouped<EDIT>::BM;  // rows of a tile (BN and BK: 09's)

#define FRAME 32  // guard rows and columns around C
#define MAX_EXPERTS 256
#define MAX_K (1u << 20)  // exact fp32 sums: |sum| <= 16 K <= 2^24
#define PAD_BF16 0x7FC0u  // a row's padding: a bf16 NaN, which no element is
