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
// phase has parity 0, the next 1, then 0 again. try_wait.parity tests the
// current phase and the one just before it: a wait on the parity of the phase
// that just completed returns at once; on the current phase's, it waits.
#pragma once

#include "tutorial.cuh"  // smem_u32

// How long a wait may take before it is reported as a hang and given up
// (nanoseconds of %globaltimer; see mbar_wait). A lesson's bug must never hang
// a learner's GPU. Build with -DMBAR_WAIT_TIMEOUT_NS=0
// (make -B build-NN MBAR_TIMEOUT_NS=0) for an unbounded wait, as production
// code would use.
#ifndef MBAR_WAIT_TIMEOUT_NS
#define MBAR_WAIT_TIMEOUT_NS 10000000000ull
#endif

// `count` arrivals complete a phase (one for a barrier that only the issuing
// thread arrives on). `bar` must be 8-byte aligned shared memory.
static __device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

// Makes the initialized barrier visible to the async proxy (the TMA unit that
// will complete_tx on it) and to the cluster. Run by the initializing thread,
// followed by a __syncthreads() before any thread uses the barrier.
static __device__ __forceinline__ void mbar_fence_init(void) {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// The usual set-up of a block's barriers: one thread initializes `n` of them
// (each completing a phase with `count` arrivals) and fences, then the whole
// block syncs, so no thread (and no TMA) uses a barrier before it exists.
// Step 03's tile_load spells these lines out; the other kernels call this.
static __device__ __forceinline__ void mbar_init_cta(uint64_t* bars, int n, uint32_t count) {
    if (threadIdx.x == 0) {
        for (int i = 0; i < n; ++i) mbar_init(&bars[i], count);
        mbar_fence_init();
    }
    __syncthreads();
}

// Arrive once and add `bytes` to the phase's pending transaction count, in one
// step: the phase now waits for this arrival's bytes to land.
static __device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}

// Arrive once (no bytes). `_` discards the returned phase state.
static __device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// One test: true once the phase with this parity has completed. try_wait may
// also suspend the thread for a while before answering false.
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

static __device__ __forceinline__ uint64_t globaltimer_ns(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    return t;
}

// The report of a timed-out wait. The first design printed it and trapped;
// on the H200 neither device printf output nor writes to mapped host memory
// survived the trap (the context is torn down). So a timed-out wait records
// the report in device memory and GIVES UP instead: it returns, other waits
// of the launch give up after 1 ms more, the kernel ends (with wrong data, but
// ends), and the host prints the report (mbar_check_timeouts) and fails.
// The bound is wall-clock time (%globaltimer): under a debugger or a slow
// sanitizer, correct code could exceed it; raise MBAR_TIMEOUT_NS there.
typedef struct {
    unsigned int claimed;   // the first thread to time out writes the report
    unsigned int reported;  // 0 until the report is complete, then 1
    unsigned int parity, bytes, smem_addr, thread;
    unsigned int block[3];
    char what[64];
} MbarTimeout;

// Not `static`: each program is one translation unit, and the host reads it
// with cudaMemcpyFromSymbol.
__device__ MbarTimeout g_mbar_timeout;

static __device__ __noinline__ void mbar_report_timeout(const uint64_t* bar, uint32_t parity, const char* what,
                                                        uint32_t expect_bytes) {
    MbarTimeout* r = &g_mbar_timeout;
    if (atomicCAS(&r->claimed, 0u, 1u) != 0u) return;  // an earlier thread reports
    r->parity = parity;
    r->bytes = expect_bytes;
    r->smem_addr = smem_u32(bar);
    r->thread = threadIdx.x;
    r->block[0] = blockIdx.x;
    r->block[1] = blockIdx.y;
    r->block[2] = blockIdx.z;
    int i = 0;
    for (; what[i] && i < (int)sizeof r->what - 1; ++i) r->what[i] = what[i];
    r->what[i] = '\0';
    __threadfence();
    atomicExch(&r->reported, 1u);
}

// Wait for the phase with this parity. `what` names the barrier and
// `expect_bytes` is what this phase was armed with: both only feed the report.
static __device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity, const char* what,
                                                 uint32_t expect_bytes) {
    if (mbar_try_wait(bar, parity)) return;
#if MBAR_WAIT_TIMEOUT_NS
    const uint64_t start = globaltimer_ns();
    while (!mbar_try_wait(bar, parity)) {
        const uint64_t waited = globaltimer_ns() - start;
        // Once a wait of this launch has timed out, others give up too, but
        // only after 1 ms: a wait whose copy is merely in flight still
        // completes, so no block exits with a copy landing in its memory.
        if (waited > 1000000ull && *(volatile unsigned int*)&g_mbar_timeout.reported) return;
        if (waited > MBAR_WAIT_TIMEOUT_NS) {
            mbar_report_timeout(bar, parity, what, expect_bytes);
            return;
        }
    }
#else
    (void)what;
    (void)expect_bytes;
    while (!mbar_try_wait(bar, parity)) {
    }
#endif
}

// Host side: after the kernels that wait have finished (it synchronizes),
// print the report of a timed-out wait, if any, and count it as a failed
// check; clears it for the next launch. Returns 1 if a wait timed out.
static inline int mbar_check_timeouts(void) {
    MbarTimeout r;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpyFromSymbol(&r, g_mbar_timeout, sizeof r));
    if (!r.reported) return 0;
    fprintf(stderr,
            "mbarrier wait timed out after %.0f s: block (%u,%u,%u) thread %u waited on %s (shared 0x%x) for the "
            "phase of parity %u, armed with %u transaction bytes; the kernel gave up its waits and ended.\n"
            "  Likely causes: the parity does not name the phase the copy completes (the k-th use of a barrier "
            "completes phase k: parity k & 1); expect_tx bytes differ from the bytes the copies deliver (a full "
            "box always arrives, its out-of-bounds part included); the copy was never issued, or the arrival "
            "count was never reached.\n",
            MBAR_WAIT_TIMEOUT_NS * 1e-9, r.block[0], r.block[1], r.block[2], r.thread, r.what,
            r.smem_addr, r.parity, r.bytes);
    print_check_line("mbarrier_wait_timed_out", 1, 1);
    memset(&r, 0, sizeof r);
    CUDA_CHECK(cudaMemcpyToSymbol(g_mbar_timeout, &r, sizeof r));
    return 1;
}

// End a barrier's life before its shared memory is reused for anything else.
static __device__ __forceinline__ void mbar_inval(uint64_t* bar) {
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
