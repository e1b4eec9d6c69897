// tma_load.cuh: the Tensor Memory Accelerator's loads, as thin PTX wrappers.
// Taught in step 03 (03_tma_load/README.md explains every operand).
//
// PTX ISA, "Data Movement and Conversion Instructions": cp.async.bulk.tensor,
// cp.async.bulk; "Memory Consistency Model" and membar/fence: fence.proxy.async.
// sm_90, PTX ISA 8.0. SASS: UTMALDG.2D, UBLKCP.S.G, and the proxy fence as
// MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S.
//
// Operands: shared addresses are 32-bit ("r", smem_u32); the tensor map is the
// 64-bit generic address of a __grid_constant__ CUtensorMap kernel parameter
// ("l"); coordinates are signed 32-bit ELEMENT indices, fastest dimension
// first ("r"). Loads use the shared::cluster destination form (CUDA >= 12.0;
// a CTA's own shared memory is part of its cluster's window).
//
// Protocol, in the order a kernel follows it. Each step names, in brackets,
// the rule the protocol checker (make shadow-03, common/shadow/rules.h)
// checks as the kernel runs, and the planted mistake that breaks it, if
// there is one:
// (CUDA's Sanitizer API does not see a tensor copy nor a proxy fence: their
// wrappers hand them to the checker in the build with -DTUTORIAL_SHADOW,
// hooks.h. The 1D bulk copy and the threads' stores it sees.)
//   1. Threads that wrote the destination with ordinary stores (a poison)
//      each run fence.proxy.async before the barrier that hands it over [S1]
//   2. One thread arms the barrier with expect_tx for the FULL box, the
//      out-of-bounds part included                                       [B3]
//      03_tma_load/bugs/2.diff
//   3. It issues the load into shared memory that nothing asynchronous
//      still reads                                                       [S2]
//   4. Every reader waits for the barrier's phase before it reads        [B2 A4]
//      03_tma_load/bugs/1.diff
//   5. The CTA does not end with a load in flight into it                [S3]
#pragma once

#include <cuda.h>  // CUtensorMap (a 128-byte opaque struct)

#include "02_cp_async/cp_async.cuh"  // smem_u32, gmem_u64

// ---- shared memory for TMA ----------------------------------------------------
// A box in shared memory must be 128-byte aligned, and __align__ on extern
// __shared__ does not promise that for the dynamic base. tma_smem_base<ALIGN>()
// rounds up by indexing the shared array itself, so the compiler still knows
// the pointer is shared memory and emits LDS/STS (rounding through uintptr_t
// makes every access a generic LD/ST: the lesson's pitfalls). Launches ask for
// tma_smem_bytes(n, ALIGN): n plus room to round.
template <uint32_t ALIGN = 128>
static __device__ __forceinline__ uint8_t* tma_smem_base(void) {
    extern __shared__ uint8_t dyn_smem[];
    const uint32_t pad = (ALIGN - (smem_u32(dyn_smem) & (ALIGN - 1))) & (ALIGN - 1);
    return dyn_smem + pad;
}

static inline size_t tma_smem_bytes(size_t bytes, size_t align = 128) {
    return bytes + align;
}

// ---- tensor load: global box -> shared, completing on an mbarrier -----------
// The box size, element type, swizzle and out-of-bounds fill come from the
// map. Out-of-bounds elements (negative or too-large coordinates) are filled,
// and the FULL box's bytes are counted toward the barrier's transaction count.
static __device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                   uint64_t* bar SHADOW_SITE) {
    SHADOW(tma_load(dst, map, bar, 0u SHADOW_PASS));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        :
        : "r"(smem_u32(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(bar))
        : "memory");
}

// ---- 1D bulk load: no tensor map; 16-byte aligned, size a multiple of 16 -----
static __device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :
                 : "r"(smem_u32(dst)), "l"(gmem_u64(src)), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}

// ---- the proxy fence ---------------------------------------------------------
// The TMA reads and writes shared memory through the ASYNC proxy; ordinary
// loads and stores are the GENERIC proxy. This orders the executing thread's
// earlier generic-proxy accesses of shared memory before its later
// async-proxy ones. Step 03 needs it after poisoning a box with ordinary
// stores, before the TMA writes it; step 04 before a TMA store reads what
// threads wrote. Every thread that wrote runs it, before the barrier that
// hands the buffer over.
static __device__ __forceinline__ void fence_proxy_async_shared(SHADOW_SITE_ONLY) {
    asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
    SHADOW(fence_proxy_async(SHADOW_PASS_ONLY));
}

// Poison a box in shared memory with ordinary stores (the whole block, each
// thread its share), so that a word the TMA never wrote shows, and fence: the
// poison must land before the TMA's async-proxy writes, not after them. The
// caller's barrier then hands the box to the thread that issues the copy.
static __device__ __forceinline__ void poison_smem(uint32_t* box, uint32_t words) {
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) box[i] = POISON_WORD;
    fence_proxy_async_shared();
}
