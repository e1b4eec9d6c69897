// wgmma.cuh: Hopper's warpgroup matrix multiply, as thin PTX wrappers.
// Taught in step 09 (09_gemm/README.md explains every operand).
//
// PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions": wgmma.mma_async, wgmma.fence, wgmma.commit_group,
// wgmma.wait_group, and "Matrix Descriptor Format" (sm_90a, PTX ISA 8.0).
// SASS: HGMMA.64x256x16.F32.BF16 (the MMA), WARPGROUP.ARRIVE (the fence),
// WARPGROUP.DEPBAR.LE gsb0, N (the wait).
//
// A WARPGROUP is 4 consecutive warps (128 threads, the first warp's index a
// multiple of 4). wgmma.mma_async multiplies a 64 x 16 tile of A by a
// 16 x N tile of B and adds the 64 x N product into registers spread over
// the warpgroup's 128 threads. A and B are read straight from shared memory
// (named by 64-bit descriptors, below), and the instruction is ASYNCHRONOUS:
// it returns before the tensor cores are done, like a TMA copy. Its
// completion is tracked in groups, like the bulk stores of step 04:
// commit_group closes a group of MMAs, wait_group N waits until at most N
// groups are pending. Until then the accumulator registers must not be read
// and the shared memory the MMAs read must not be overwritten.
//
// Every instruction here is .sync.aligned: all 128 threads of the warpgroup
// execute it, converged, with the same operands.
//
// Protocol, in the order a kernel follows it. Each step names, in brackets,
// the rule the protocol checker (make shadow-09, common/shadow/rules.h)
// checks as the kernel runs, and the planted mistake that breaks it, if
// there is one:
//   1. The stage is in shared memory (its full barrier waited), written by
//      the TMA with the swizzle the descriptor names                     [W3]
//      09_gemm/bugs/1.diff
//   2. wgmma.fence before the first MMA since the accumulators were last
//      the threads' (the kernel's start, a wgmma.wait_group)             [W1]
//      09_gemm/bugs/2.diff
//   3. The MMAs, then wgmma.commit_group (an action: the groups are what
//      steps 4 and 6 wait for)
//   4. wgmma.wait_group N before a stage an older group read is handed
//      back (N = 1: one batch keeps running)                             [P1]
//      09_gemm/bugs/3.diff
//   5. Nothing rewrites a stage while a group still reads it             [S2]
//   6. wgmma.wait_group 0 before the accumulators are read               [W2]
// (CUDA's Sanitizer API sees the fence, each MMA with the shared memory it
// reads, the group it closes and the waits; not a descriptor's swizzle nor
// a read of the accumulators: the MMA's and wgmma_fence_operands' hooks
// hand those to the checker in the build with -DTUTORIAL_SHADOW, hooks.h.)
#pragma once

#include "02_cp_async/cp_async.cuh"  // smem_u32

// ---- the shared-memory matrix descriptor -----------------------------------
// The MMA reads A and B from shared memory in units of CORE MATRICES: 8 rows
// of 16 bytes (8 bf16). The descriptor tells it where the first core matrix
// starts and how to step to the others:
//   bits  0-13  start address >> 4: a shared address (< 256 KiB) in 16-byte units
//   bits 16-29  leading-dimension byte offset (LBO) >> 4: from one core matrix
//               to the next along K
//   bits 32-45  stride-dimension byte offset (SBO) >> 4: from one group of 8
//               rows to the next along M (for A) or N (for B)
//   bits 49-51  base offset: where the swizzle pattern starts, for a tile not
//               aligned to the pattern's period; 0 here (1024-aligned stages)
//   bits 62-63  layout: 0 no swizzle, 1 128B swizzle, 2 64B, 3 32B
// This step's tiles are K-major (64 bf16 = 128 bytes of K per row, each row
// contiguous in K, as the TMA writes a box of a row-major matrix) and
// 128B-swizzled. Then:
//   - the layout MUST be the swizzle the tensor map gave the TMA: the MMA
//     un-swizzles each 16-byte chunk as chunk ^ (row % 8) itself, reading
//     the data where the TMA put it (05_swizzle: the XOR of address bits
//     4-6 with bits 7-9). Another mode reads the right bytes from the wrong
//     places: no error, wrong sums (a planted bug shows it);
//   - SBO = 1024 bytes: 8 rows of 128 bytes, one whole swizzle pattern;
//   - LBO is not used: one MMA reads 16 elements of K (32 bytes), which lie
//     inside a row's 128-byte swizzle span; by convention (CUTLASS) it is 1;
//   - the K step inside the 128-byte row is a plain address step: the k-th
//     16-element slice starts 32 * k bytes further, i.e. start field + 2 * k.
//     The hardware applies the swizzle to the address it forms, as the TMA
//     did, so the descriptor names the unswizzled (logical) start;
//   - base offset 0 is right because every stage starts 1024-byte aligned
//     (the swizzle's period): logical and absolute patterns agree.
static __device__ __forceinline__ uint64_t smem_desc_sw128(const void* tile) {
    const uint64_t start = (smem_u32(tile) & 0x3FFFFu) >> 4;
    const uint64_t lbo = 1, sbo = 1024 >> 4, layout_128b = 1;
    return start | lbo << 16 | sbo << 32 | layout_128b << 62;
}

// ---- ordering and completion ------------------------------------------------
// Before the first MMA that reads or writes accumulator registers that the
// threads have touched since (zeroing, the epilogue's reads of the previous
// tile): the async unit must see the registers as the threads left them.
// CUTLASS issues it once per batch of MMAs, as this step does.
static __device__ __forceinline__ void wgmma_fence(SHADOW_SITE_ONLY) {
    SHADOW(wgmma_fence_ptx(SHADOW_PASS_ONLY));
    asm volatile("wgmma.fence.sync.aligned;" : : : "memory");
}

// Close the current group: every wgmma.mma_async issued since the last commit.
static __device__ __forceinline__ void wgmma_commit_group(SHADOW_SITE_ONLY) {
    SHADOW(wgmma_commit_ptx(SHADOW_PASS_ONLY));
    asm volatile("wgmma.commit_group.sync.aligned;" : : : "memory");
}

// At most N of this warpgroup's newest groups still pending: the older ones
// are complete, their accumulators written and their shared memory read.
// N = 1 keeps one batch of MMAs running while the stage of the batch before
// is handed back to the producer.
template <int N>
static __device__ __forceinline__ void wgmma_wait_group(SHADOW_SITE_ONLY) {
    static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
    asm volatile("wgmma.wait_group.sync.aligned %0;" : : "n"(N) : "memory");
    SHADOW(wgmma_wait_ptx(N SHADOW_PASS));
}

// The compiler sees the MMA's outputs as ready when the asm "returns", not
// when wait_group says so: without this, it may move a read of the
// accumulators (the epilogue) above the wait. An empty asm that "writes"
// every register, placed after the wait, pins them there (CUTLASS's
// warpgroup_fence_operand). It emits no instruction.
template <int N>
static __device__ __forceinline__ void wgmma_fence_operands(float (&d)[N] SHADOW_SITE) {
    SHADOW(wgmma_operands(SHADOW_PASS_ONLY));
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// ---- the MMA: D[64 x 256] (+)= A[64 x 16] * B[16 x 256], fp32 accumulators ---
// desc_a: 64 rows (M) x 16 elements (K) of A, K-major; desc_b: 256 rows (N) x
// 16 elements (K) of B, K-major: B is stored as N x K, so "B[k][n]" is row n,
// element k. accumulate 0: D = A * B (the scale-d predicate off: the old D is
// ignored, so a tile needs no zeroing); 1: D += A * B. The two immediates 1, 1
// are the scales of A and B (1 or -1); 0, 0 the transposes: both operands
// K-major, which is what the TN layout of this step gives without any.
//
// The accumulator fragment (PTX ISA, "Matrix Fragments for wgmma.mma_async
// .m64nNk16", register layout of D): thread t of the warpgroup, warp
// w = t / 32, lane l = t % 32, holds for i = 0 .. 31 (one 8-column block each)
//   d[4i + 0], d[4i + 1]: row 16 w + l / 4,     columns 8 i + 2 (l % 4) + 0, 1
//   d[4i + 2], d[4i + 3]: row 16 w + l / 4 + 8, the same two columns.
// Each warp owns 16 rows; 4 lanes share a row, 2 adjacent columns each.
static __device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], uint64_t desc_a,
                                                             uint64_t desc_b,
                                                             uint32_t accumulate SHADOW_SITE) {
    SHADOW(wgmma(desc_a, desc_b, 64u, 256u SHADOW_PASS));
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
          "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
          "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
          "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
          "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
          "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
          "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]),
          "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
          "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]),
          "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),
          "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]),
          "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]),
          "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]),
          "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]),
          "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate)
        : "memory");
}
