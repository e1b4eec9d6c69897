// tma_store.cuh: the Tensor Memory Accelerator's stores and bulk groups.
// Taught in step 04 (04_tma_store/README.md explains every operand).
//
// PTX ISA, "Data Movement and Conversion Instructions": cp.async.bulk.tensor
// (shared -> global), cp.async.bulk, cp.async.bulk.commit_group,
// cp.async.bulk.wait_group. sm_90, PTX ISA 8.0.
// SASS: UTMASTG.2D, UBLKCP.G.S, UTMACMDFLUSH (commit), DEPBAR.LE SB0, N (both
// waits), followed by CCTL.IVALL for the full wait only.
//
// Completion of a store is not signalled on an mbarrier but tracked in BULK
// GROUPS, which belong to the thread that issued and committed the stores:
// only that thread can wait on them. They are a set of their own, apart from
// step 02's cp.async groups.
//
// Protocol, in the order a kernel follows it. Each step names, in brackets,
// the rule the protocol checker (make shadow-04, common/shadow/rules.h)
// checks as the kernel runs, and the planted mistake that breaks it, if
// there is one:
//   1. Threads write the box with ordinary stores (an action: the checker
//      sees each store, and which of them step 2 must fence)
//   2. Every writing thread runs fence.proxy.async.shared::cta           [S1]
//      04_tma_store/bugs/1.diff, 06_transpose/bugs/2.diff
//   3. Then a barrier hands the box to one thread (the fence before the
//      barrier: make test reads the order in the machine code)
//   4. That thread stores it (tma_store_2d, bulk_store) and commits the
//      bulk group (an action: the group is what steps 5 and 6 wait for)
//   5. wait_group.read N before the box is rewritten (N: the newer stores
//      that may still read)                                              [S2]
//   6. wait_group.read 0 (or wait_group 0) before the CTA ends           [S3]
//   7. wait_group 0 before anything reads what the store wrote (this
//      thread, or another after a barrier): not checked at run time, the
//      checker follows shared memory, not global; the programs read the
//      output after the kernel ends, when every bulk group is complete
// (CUDA's Sanitizer API sees the 1D bulk store and the stores of step 1,
// not the tensor store, the commit, the proxy fence nor which wait is
// .read: their wrappers hand those to the checker in the build with
// -DTUTORIAL_SHADOW, hooks.h.)
#pragma once

#include "03_tma_load/tma_load.cuh"  // smem_u32, gmem_u64, CUtensorMap, fence_proxy_async_shared

// ---- tensor store: shared -> global box, tracked by a bulk group ----------
// Only the in-bounds part of the box is written, in whole 16-byte chunks: if
// a row of the tensor does not end on a 16-byte boundary, the rest of its
// last chunk (row padding) is written too (step 06 shows it). Coordinates
// must be >= 0.
static __device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, int32_t c0, int32_t c1,
                                                    const void* src SHADOW_SITE) {
    SHADOW(tma_store(map, src, "a TMA store reads" SHADOW_PASS));
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 :
                 : "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(src))
                 : "memory");
}

// ---- 1D bulk store: no tensor map; 16-byte aligned, size a multiple of 16 ----
static __device__ __forceinline__ void bulk_store(void* dst, const void* src, uint32_t bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 :
                 : "l"(gmem_u64(dst)), "r"(smem_u32(src)), "r"(bytes)
                 : "memory");
}

// Close this thread's current group of bulk stores.
static __device__ __forceinline__ void bulk_commit_group(SHADOW_SITE_ONLY) {
    SHADOW(bulk_commit(SHADOW_PASS_ONLY));
    asm volatile("cp.async.bulk.commit_group;" : : : "memory");
}

// At most N of this thread's newest bulk groups pending; older ones are
// complete: their writes are done and visible to THIS thread (other threads
// need a barrier or a release/acquire after it).
template <int N>
static __device__ __forceinline__ void bulk_wait_group(SHADOW_SITE_ONLY) {
    asm volatile("cp.async.bulk.wait_group %0;" : : "n"(N) : "memory");
    SHADOW(bulk_wait(N SHADOW_PASS));
}

// Weaker and sooner: older groups have finished READING their sources (the
// shared buffer and the tensor map), so the buffer may be overwritten; their
// global writes may not be visible yet.
template <int N>
static __device__ __forceinline__ void bulk_wait_group_read(SHADOW_SITE_ONLY) {
    asm volatile("cp.async.bulk.wait_group.read %0;" : : "n"(N) : "memory");
    SHADOW(bulk_wait(N SHADOW_PASS));
}
