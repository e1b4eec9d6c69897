// tma.cuh: the Tensor Memory Accelerator's copies, as thin PTX wrappers.
// Taught in steps 03 (loads, bulk loads) and 04 (stores, bulk groups, the
// async-proxy fence); the lessons explain every operand.
//
// PTX ISA, "Data Movement and Conversion Instructions": cp.async.bulk.tensor,
// cp.async.bulk, cp.async.bulk.commit_group, cp.async.bulk.wait_group;
// "Parallel Synchronization and Communication Instructions: membar/fence"
// (fence.proxy.async). sm_90, PTX ISA 8.0.
// SASS: UTMALDG.{1..5}D, UTMASTG.2D, UBLKCP.S.G / UBLKCP.G.S, UTMACMDFLUSH,
// DEPBAR.LE (bulk waits), MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S (the proxy fence).
//
// Operands: shared addresses are 32-bit ("r", smem_u32); the tensor map is the
// 64-bit generic address of a __grid_constant__ CUtensorMap kernel parameter
// ("l"); coordinates are signed 32-bit ELEMENT indices, fastest dimension
// first ("r"). Loads use the shared::cluster destination form (CUDA >= 12.0;
// a CTA's own shared memory is part of its cluster's window).
#pragma once

#include <cuda.h>  // CUtensorMap (a 128-byte opaque struct)

#include "tutorial.cuh"  // smem_u32, gmem_u64

// ---- shared memory for TMA ----------------------------------------------------
// A TMA box in shared memory must be 128-byte aligned (a swizzled one, aligned
// to its pattern's period: step 05), and __align__ on extern __shared__ does
// not promise that for the dynamic base. tma_smem_base<ALIGN>() rounds up by
// adding the padding to the shared array itself: the compiler still knows the
// pointer is shared memory and emits LDS/STS. (Rounding through uintptr_t
// loses that and every access becomes a generic LD/ST: the first version of
// steps 03-05 did exactly that, and `make sass-05` showed it.) Launches ask
// for tma_smem_bytes(n, ALIGN): n plus room to round.
template <uint32_t ALIGN = 128>
static __device__ __forceinline__ uint8_t* tma_smem_base(void) {
    extern __shared__ uint8_t dyn_smem[];
    const uint32_t pad = (ALIGN - (smem_u32(dyn_smem) & (ALIGN - 1))) & (ALIGN - 1);
    return dyn_smem + pad;
}

static inline size_t tma_smem_bytes(size_t bytes, size_t align = 128) { return bytes + align; }

// ---- tensor loads: global box -> shared, completing on an mbarrier ----------
// The box size, element type, swizzle and out-of-bounds fill come from the
// map. Out-of-bounds elements (negative or too-large coordinates) are filled,
// and the FULL box's bytes are counted toward the barrier's transaction count.
#define TMA_LOAD_PREFIX "cp.async.bulk.tensor."
#define TMA_LOAD_SUFFIX ".shared::cluster.global.mbarrier::complete_tx::bytes"

static __device__ __forceinline__ void tma_load_1d(void* dst, const CUtensorMap* map, int32_t c0, uint64_t* bar) {
    asm volatile(TMA_LOAD_PREFIX "1d" TMA_LOAD_SUFFIX " [%0], [%1, {%2}], [%3];\n" ::"r"(smem_u32(dst)),
                 "l"(map), "r"(c0), "r"(smem_u32(bar))
                 : "memory");
}

static __device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                   uint64_t* bar) {
    asm volatile(TMA_LOAD_PREFIX "2d" TMA_LOAD_SUFFIX " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(dst)),
                 "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(bar))
                 : "memory");
}

static __device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                   int32_t c2, uint64_t* bar) {
    asm volatile(TMA_LOAD_PREFIX "3d" TMA_LOAD_SUFFIX " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_u32(dst)),
                 "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar))
                 : "memory");
}

static __device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                   int32_t c2, int32_t c3, uint64_t* bar) {
    asm volatile(TMA_LOAD_PREFIX "4d" TMA_LOAD_SUFFIX " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(
                     smem_u32(dst)),
                 "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_u32(bar))
                 : "memory");
}

static __device__ __forceinline__ void tma_load_5d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                   int32_t c2, int32_t c3, int32_t c4, uint64_t* bar) {
    asm volatile(TMA_LOAD_PREFIX "5d" TMA_LOAD_SUFFIX " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n" ::"r"(
                     smem_u32(dst)),
                 "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(smem_u32(bar))
                 : "memory");
}

// ---- tensor store: shared -> global box, tracked by a bulk group ----------
// Only the in-bounds part of the box is written. Coordinates must be >= 0.
static __device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, int32_t c0, int32_t c1,
                                                    const void* src) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map),
                 "r"(c0), "r"(c1), "r"(smem_u32(src))
                 : "memory");
}

// ---- 1D bulk copies: no tensor map; 16-byte aligned, size a multiple of 16 -
static __device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
            smem_u32(dst)),
        "l"(gmem_u64(src)), "r"(bytes), "r"(smem_u32(bar))
        : "memory");
}

static __device__ __forceinline__ void bulk_store(void* dst, const void* src, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(gmem_u64(dst)),
                 "r"(smem_u32(src)), "r"(bytes)
                 : "memory");
}

// ---- bulk groups (stores): separate from cp.async groups -------------------
// Close this thread's current group of bulk stores.
static __device__ __forceinline__ void bulk_commit_group(void) {
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// At most N of this thread's newest bulk groups pending; older ones are
// complete: their writes are done and visible in global memory.
template <int N>
static __device__ __forceinline__ void bulk_wait_group(void) {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

// Weaker and sooner: older groups have finished READING their shared source,
// so the buffer may be overwritten; their global writes may not be visible yet.
template <int N>
static __device__ __forceinline__ void bulk_wait_group_read(void) {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

// Orders this thread's earlier ordinary (generic-proxy) shared-memory
// accesses before later async-proxy accesses (TMA, bulk copies) of shared
// memory. Every thread that wrote a buffer runs it, before the barrier that
// hands the buffer to the thread issuing the store.
static __device__ __forceinline__ void fence_proxy_async_shared(void) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
