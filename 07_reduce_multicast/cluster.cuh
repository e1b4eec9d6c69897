// cluster.cuh: thread block clusters: ranks, the cluster barrier, shared
// memory of other CTAs (distributed shared memory), and the TMA multicast
// that writes one load into every CTA of a cluster.
// Taught in step 07 (07_reduce_multicast/README.md explains every operand).
//
// PTX ISA: special registers %cluster_ctarank, %cluster_nctarank;
// barrier.cluster; mapa; mbarrier (the .cluster scope and the shared::cluster
// arrive); cp.async.bulk.tensor .multicast::cluster; cp.async.bulk
// .shared::cluster.shared::cta. All sm_90, PTX ISA 7.8/8.0.
// SASS: UCGABAR_ARV / UCGABAR_WAIT (cluster barrier), UTMALDG.2D.MULTICAST,
// UBLKCP.S.S (shared -> peer shared), SYNCS.ARRIVE.TRANS64.RED.A1T0 (remote arrive).
//
// A cluster is up to 8 CTAs (16 with a non-portable opt-in) that the hardware
// runs at the same time on the SMs of one GPC. Each CTA can read, write and
// signal the others' shared memory through the cluster's shared window: an
// address there names a CTA (its rank, 0 .. size-1) and an offset in it.
//
// Protocol, in the order a kernel follows it. Each step names, in brackets,
// the rule the protocol checker (make shadow-07, common/shadow/rules.h)
// checks as the kernel runs, and the planted mistake that breaks it, if
// there is one:
//   1. Every CTA initializes its barriers and runs fence.mbarrier_init;
//      then barrier.cluster arrive and wait, before any CTA arrives on or
//      copies into a peer's barrier                                      [B1]
//   2. Every receiving CTA arms its own barrier for the bytes it receives [B4]
//      07_reduce_multicast/bugs/4.diff
//   3. The multicast mask names every CTA that waits for the data        [B3]
//      09_gemm/bugs/4.diff
//   4. A consumer hands a stage back to the producer of every CTA that
//      wrote it (a remote arrive) only when it is done reading           [P1]
//   5. A last barrier.cluster, after every remote operation, before any
//      CTA of the cluster ends                                           [C1]
// (CUDA's Sanitizer API sees the cluster barriers, the remote arrives and
// stores and the copy to a peer; the multicast load, a tensor copy, its
// wrapper hands to the checker in the build with -DTUTORIAL_SHADOW, hooks.h.)
#pragma once

#include "03_tma_load/mbarrier.cuh"  // bounded_wait, smem_u32
#include "03_tma_load/tma_load.cuh"  // CUtensorMap

// This CTA's rank in its cluster, 0 .. cluster size - 1 (the ctaMask bit
// that names it), and the cluster's size. Without a cluster launch every CTA
// is a cluster of one: rank 0, size 1.
static __device__ __forceinline__ uint32_t cluster_ctarank(void) {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

static __device__ __forceinline__ uint32_t cluster_nctarank(void) {
    uint32_t n;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    return n;
}

// The cluster barrier, in two halves. Every thread of every CTA of the
// cluster arrives once per phase (.aligned: the whole warp executes it
// together). .release orders this thread's earlier memory operations (and,
// after fence.mbarrier_init, its barrier inits) before the arrival; the
// .acquire wait orders everything after it behind all the cluster's arrivals.
static __device__ __forceinline__ void cluster_arrive(void) {
    asm volatile("barrier.cluster.arrive.release.aligned;" : : : "memory");
}

static __device__ __forceinline__ void cluster_wait(void) {
    asm volatile("barrier.cluster.wait.acquire.aligned;" : : : "memory");
}

static __device__ __forceinline__ void cluster_sync(void) {
    cluster_arrive();
    cluster_wait();
}

// The shared::cluster address of the same variable in CTA `rank`: this CTA's
// shared address ("r", 32-bit) goes in, the peer's comes out.
static __device__ __forceinline__ uint32_t mapa_shared(const void* p, uint32_t rank) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_u32(p)), "r"(rank));
    return remote;
}

// Arrive once on the barrier at the same offset in CTA `rank` (which may be
// this CTA): "I have read the stage this barrier guards". The semantics are
// the default, .release at .cta scope, as in CUTLASS's ClusterBarrier: what
// must not be overtaken is this warp's reads of its OWN shared memory, and
// their values were used (summed, shuffled) before the arrive is issued.
// .release.cluster would also order every earlier global store of the
// thread: ptxas puts MEMBAR.ALL.GPU + ERRBAR + CGAERRBAR in front of the
// arrive, one wait for the stores per tile, and on the H200 the multicast
// broadcast ran 2.2 times slower with it (the lesson has the numbers).
static __device__ __forceinline__ void mbar_arrive_remote(uint64_t* bar, uint32_t rank) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" : : "r"(mapa_shared(bar, rank)) : "memory");
}

// try_wait with .acquire at cluster scope. Paired with mbar_arrive_remote's
// CTA-scope release it gives no FORMAL order in the PTX memory model (a
// release synchronizes only within its own scope); the pairing is CUTLASS's
// practical one, safe because the reads it protects have completed before
// the arrive (see mbar_arrive_remote). A formal guarantee would need
// .release.cluster on the arrive, at the cost measured there.
static __device__ __forceinline__ bool mbar_try_wait_cluster(uint64_t* bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n"
        "  .reg .pred p;\n"
        "  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "  selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
    return done != 0;
}

// The bounded wait (03_tma_load/mbarrier.cuh) on a barrier that other CTAs arrive on.
#define MBAR_WAIT_CLUSTER(bar, parity)                                                                 \
    SHADOW_WAITED((bar), (parity),                                                                     \
                  bounded_wait([&] { return mbar_try_wait_cluster((bar), (parity)); }, #bar, __FILE__, \
                               __LINE__, "parity", (parity)))

// ---- multicast: one load, written into every CTA of the mask --------------
// As tma_load_2d, plus %5, the 16-bit ctaMask ("h"): bit r set = CTA rank r
// receives the box. The data lands at the SAME shared offset (dst) in every
// CTA of the mask, and each receiving CTA's barrier at the same offset as
// `bar` gets the complete_tx for the bytes it received: every receiver must
// have armed its own barrier (expect_tx) for all bytes it will receive, and
// its init must be visible to the cluster before any peer issues.
static __device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int32_t c0,
                                                             int32_t c1, uint64_t* bar,
                                                             uint16_t cta_mask SHADOW_SITE) {
    SHADOW(tma_load(dst, map, bar, (uint32_t)cta_mask SHADOW_PASS));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;"
        :
        : "r"(smem_u32(dst)), "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(bar)), "h"(cta_mask)
        : "memory");
}

// ---- distributed shared memory: this CTA's shared memory -> a peer's -------
// [%0] destination in CTA `rank` and [%3] ITS barrier (both shared::cluster
// addresses from mapa), [%1] the source in this CTA ("r"), %2 bytes (a
// multiple of 16, 16-byte aligned). Completion is the complete_tx on the
// DESTINATION's barrier: the sender gets no bulk group and no signal, so it
// must learn from the receiver (a cluster barrier) when its source was read.
static __device__ __forceinline__ void bulk_copy_to_peer(void* dst, const void* src, uint32_t bytes,
                                                         uint64_t* bar, uint32_t rank) {
    asm volatile(
        "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        :
        : "r"(mapa_shared(dst, rank)), "r"(smem_u32(src)), "r"(bytes), "r"(mapa_shared(bar, rank))
        : "memory");
}
