// mbarrier.cuh: the shared-memory barrier that asynchronous copies complete on.
// Taught in step 03 (03_tma_load/README.md explains every operand).
//
// PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"
// (sm_80+; expect_tx and try_wait sm_90, PTX ISA 7.8/8.0).
// SASS: SYNCS.EXCH.64 (init), SYNCS.ARRIVE.TRANS64* (arrive, expect_tx),
// SYNCS.PHASECHK.TRANS64.TRYWAIT (try_wait), SYNCS.CCTL.IV (inval).
//
// An mbarrier is a 64-bit object in shared memory that counts two things in
// its current PHASE: pending arrivals (set by init) and pending transaction
// bytes (added by expect_tx, removed by the copies' complete_tx). The phase
// completes when both reach zero; the barrier then starts the next phase with
// the same arrival count. Waiters name the phase by its PARITY: the first
// phase has parity 0, the next 1, then 0 again. try_wait.parity P returns
// true once the phase with parity P has completed: at once if P names the
// phase just before the current one, only later if P names the current one.
//
// Protocol, in the order a kernel follows it. Each step names, in brackets,
// the rule the protocol checker (make shadow-03, common/shadow/rules.h)
// checks as the kernel runs, and the planted mistake that breaks it, if
// there is one:
// (SHADOW_SITE, SHADOW(...): empty in a normal build. The checker sees every
// mbarrier operation through CUDA's Sanitizer API, but not an init's count,
// an expect_tx's bytes nor a wait's parity: with -DTUTORIAL_SHADOW, the
// build make shadow-NN checks, these wrappers hand it those; hooks.h.)
//   1. One thread initializes each barrier with its arrival count, once
//      (inval before reuse)                                              [B1 B5]
//   2. fence.mbarrier_init, then a barrier that publishes the init: a
//      __syncthreads(), or barrier.cluster when other CTAs use it        [B1]
//   3. Each phase gets its arrivals, all of them (arrive; arrive.expect_tx
//      with the bytes its copies bring)                                  [B4]
//      03_tma_load/bugs/3.diff
//   4. The copies of a phase bring exactly the bytes expect_tx announced [B3]
//      03_tma_load/bugs/2.diff
//   5. A wait names the phase it needs by parity: 0 for the first, then
//      flipping at each reuse; a producer's first wait on a free stage
//      names the phase before the first                                  [B2]
//      03_tma_load/bugs/1.diff; a wait on a phase nobody completes       [B4]
//      03_tma_load/bugs/4.diff
//   6. The CTA does not end while a copy toward one of its barriers is in
//      flight                                                            [S3]
#pragma once

#include "02_cp_async/cp_async.cuh"  // smem_u32

// `count` arrivals complete a phase (1 for a barrier that only the issuing
// thread arrives on). `bar` must be 8-byte aligned shared memory.
static __device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count SHADOW_SITE) {
    SHADOW(mbar_init(bar, count SHADOW_PASS));  // the count
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" : : "r"(smem_u32(bar)), "r"(count) : "memory");
}

// A release fence for earlier mbarrier.init, at cluster scope: the PTX memory
// model needs it to make the inits visible to the other CTAs of a cluster
// before they arrive on, or multicast into, these barriers (step 07). It is
// not a proxy fence. For sm_90a ptxas emits only a predicated NOP for it,
// with or without __cluster_dims__: this hardware needs no instruction there.
// Within a block the __syncthreads() after the init is what publishes the
// barrier, and the TMA copies that signal it are issued after that barrier.
// CUTLASS keeps the fence in every kernel, and so do we: it is what the PTX
// model asks for, whatever one target compiles it to.
static __device__ __forceinline__ void mbar_fence_init(SHADOW_SITE_ONLY) {
    asm volatile("fence.mbarrier_init.release.cluster;" : : : "memory");
    SHADOW(mbar_fence_init(SHADOW_PASS_ONLY));
}

// The usual set-up of a block's barriers: one thread initializes `n` of them
// (each completing a phase with `count` arrivals) and fences, then the whole
// block syncs, so no thread (and no copy a thread issues) uses a barrier
// before it exists. Step 03's tile_load spells these lines out.
static __device__ __forceinline__ void mbar_init_cta(uint64_t* bars, int n, uint32_t count SHADOW_SITE) {
    if (threadIdx.x == 0) {
        for (int i = 0; i < n; ++i) mbar_init(&bars[i], count SHADOW_PASS);
        mbar_fence_init(SHADOW_PASS_ONLY);
    }
    __syncthreads();
}

// Arrive once and add `bytes` to the phase's pending transaction count, in one
// step: the phase now also waits for that many bytes to land. `_` discards
// the returned phase state.
static __device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes SHADOW_SITE) {
    SHADOW(expect_tx(bar, bytes SHADOW_PASS));  // the bytes (the API sees the arrival)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :
                 : "r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}

// Arrive once, no bytes: a consumer saying "I am done with this stage".
static __device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" : : "r"(smem_u32(bar)) : "memory");
}

// One test: true once the phase with this parity has completed. try_wait may
// suspend the thread for a while (a time the hardware chooses) before
// answering false; test_wait, its non-blocking sibling, never does.
static __device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n"
        "  .reg .pred p;\n"
        "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "  selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
    return done != 0;
}

// ---- the bounded wait -------------------------------------------------------
// %globaltimer: a nanosecond wall clock, the same on every SM.
static __device__ __forceinline__ uint64_t globaltimer_ns(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Fills common/tutorial.cuh's g_wait_report, once per launch (the first
// thread to time out wins), for the host to print.
static __device__ __forceinline__ void wait_report(const char* what, const char* file, int line,
                                                   const char* detail_name, uint32_t detail,
                                                   uint64_t waited) {
    WaitReport* r = &g_wait_report;
    if (atomicCAS(&r->claimed, 0u, 1u) != 0u) return;
    const char* base = file;
    for (const char* p = file; *p; ++p)
        if (*p == '/') base = p + 1;
    const char* texts[3] = {what, detail_name, base};
    char* fields[3] = {r->what, r->detail_name, r->file};
    const int caps[3] = {(int)sizeof r->what, (int)sizeof r->detail_name, (int)sizeof r->file};
    for (int f = 0; f < 3; ++f) {
        int i = 0;
        for (; texts[f][i] && i < caps[f] - 1; ++i) fields[f][i] = texts[f][i];
        fields[f][i] = '\0';
    }
    r->thread = threadIdx.x;
    r->block[0] = blockIdx.x;
    r->block[1] = blockIdx.y;
    r->block[2] = blockIdx.z;
    r->line = (unsigned)line;
    r->detail = detail;
    r->waited_ns = waited;
    __threadfence();  // the fields before the flag the host and other waiters read
    atomicExch(&r->reported, 1u);
}

// Called in a spin loop after the first failed test, with the loop's start
// time: true when the wait must give up (it timed out, or another did).
static __device__ __forceinline__ bool wait_gave_up(uint64_t start, const char* what, const char* file,
                                                    int line, const char* detail_name, uint32_t detail) {
    const uint64_t waited = globaltimer_ns() - start;
    if (waited <= 1000000ull) return false;  // a copy merely in flight lands well within 1 ms
    if (*(volatile unsigned int*)&g_wait_report.reported) return true;
#ifdef TUTORIAL_SHADOW
    if (shadow_stopped()) return true;  // the protocol checker found a rule broken: end the kernel
#endif
    if (waited <= MBAR_TIMEOUT_NS) return false;
    wait_report(what, file, line, detail_name, detail, waited);
    return true;
}

// The bounded spin loop itself, for any test that may need many tries:
// `test()` is called until it returns true. In this tutorial the loop is
// bounded (common/tutorial.cuh, "Bounded waits"): after MBAR_TIMEOUT_NS it
// records what was waited for, where, and `detail` (a parity, a rank), and
// gives up. It returns false if it gave up. Step 07 waits with it on a
// barrier that other CTAs of a cluster arrive on.
template <typename Test>
static __device__ __forceinline__ bool bounded_wait(Test test, const char* what, const char* file, int line,
                                                    const char* detail_name, uint32_t detail) {
    if (test()) return true;
#if MBAR_TIMEOUT_NS
    const uint64_t start = globaltimer_ns();
    while (!test())
        if (wait_gave_up(start, what, file, line, detail_name, detail)) return false;
#else
    (void)what, (void)file, (void)line, (void)detail_name, (void)detail;
    while (!test()) {
    }
#endif
    return true;
}

// Wait for the phase with this parity: try_wait in a bounded loop, so a
// wrong parity or byte count ends in a report (which barrier, where, which
// parity), not a hung GPU. Use it through MBAR_WAIT(bar, parity), which names
// the barrier and the line. It returns false if it gave up. The ring kernels
// (sum_ring, copy_ring) then stop issuing, so no copy is left in flight when
// the block ends; the simpler kernels go on (their loops have a
// __syncthreads() that a lone break would deadlock) and may exit with copies
// in flight, after a hang that the check already reports as a failure.
static __device__ __forceinline__ bool mbar_wait(uint64_t* bar, uint32_t parity, const char* what,
                                                 const char* file, int line SHADOW_SITE) {
    return SHADOW_WAITED(bar, parity,
                         bounded_wait([&] { return mbar_try_wait(bar, parity); }, what, file, line, "parity",
                                      parity) SHADOW_PASS);
}
#define MBAR_WAIT(bar, parity) mbar_wait((bar), (parity), #bar, __FILE__, __LINE__)

// End a barrier's life before its shared memory is used for anything else.
static __device__ __forceinline__ void mbar_inval(uint64_t* bar) {
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" : : "r"(smem_u32(bar)) : "memory");
}
