// 09_gemm/parts/loader.cuh: the ring, and its producer side. The producer
// walks its CTA's units and their k-blocks (a Schedule, schedule.cuh), waits
// for each stage to come back, arms its full barrier and issues the TMA loads
// of A and B into it (multicast across a cluster), through the maps a
// MapSource gives it for each unit (maps.cuh).
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tma_load.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include "09_gemm/parts/schedule.cuh"

// The RING: Stages buffers, each one k-block of A (BM x 64) and of B
// (256 x 64), with two mbarriers per stage (step 03's ring): full[s], which
// the producer arms with the stage's bytes and the TMA completes, and
// empty[s], on which every consumer warpgroup that read the stage arrives
// once its MMAs are done with it.
typedef struct {
    uint8_t* stages;  // [Stages][A: BM x 64 | B: 256 x 64] bf16, 128B-swizzled, 1024-byte aligned
    uint64_t *full, *empty;
} StageRing;

// The barriers' first phase, before any load: thread 0 initialises them, and
// the inits are visible to the cluster before any CTA multicasts into, or
// arrives on, a peer's barriers.
template <class Cfg>
static __device__ __forceinline__ void ring_init(const StageRing& ring) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::Stages; ++s) {
            mbar_init(&ring.full[s], 1);                                 // the producer's arrive.expect_tx
            mbar_init(&ring.empty[s], Cfg::Readers * Cfg::ClusterSize);  // each reader warpgroup of each CTA
        }
        mbar_fence_init();
    }
    if (Cfg::ClusterSize > 1)
        cluster_sync();
    else
        __syncthreads();
}

// The producer's side of the ring: walks this CTA's units and their
// k-blocks, one stage per call to issue(). Position `pos` counts every stage
// ever loaded: stage pos % Stages, in its (pos / Stages)-th round. One
// thread calls it, or, where the MapSource's switch needs the whole warp
// (Maps::WarpWide), every lane of one warp, lane 0 waiting and loading.
template <class Cfg, class Schedule, class Maps>
struct Loader {
    Maps maps;  // the producer's own copy: the state of its switches
    StageRing ring;
    const Schedule* sched;
    uint32_t rank;     // this CTA's in its cluster: which slices of A and B it loads
    uint32_t unit;     // the unit now
    uint32_t kb, pos;  // the k-block now; the ring position
    Work w;            // unit `unit`

    // The thread that waits and loads: this one, or lane 0 of the warp.
    static __device__ __forceinline__ bool loads() { return !Maps::WarpWide || threadIdx.x % 32 == 0; }

    // Begin with unit `first`, the schedule's first.
    __device__ __forceinline__ void start(uint32_t first) {
        unit = first, pos = 0;
        if (unit < sched->units) enter();
    }

    // Unit `unit` begins: its tile, its first k-block.
    __device__ __forceinline__ void enter() { w = sched->work(unit), kb = w.kb_begin; }

    // Load the next k-block into the next stage; false when there is none
    // (or a bounded wait gave up: then nothing more is issued). A unit's
    // first k-block first gets its maps (a switch whose wait gave up ends the
    // loads).
    __device__ __forceinline__ bool issue() {
        if (unit >= sched->units) return false;
        if constexpr (Maps::Switches)
            if (kb == w.kb_begin && !maps.load_switch(w, pos, ring.full)) return (unit = sched->units), false;
        const uint32_t s = pos % Cfg::Stages;
        if (pos >= Cfg::Stages) {  // round r > 0: wait until round r - 1's readers are done
            const uint32_t parity = (pos / Cfg::Stages - 1) & 1;
            bool free = true;
            if (loads())
                free = Cfg::ClusterSize > 1 ? MBAR_WAIT_CLUSTER(&ring.empty[s], parity)
                                            : MBAR_WAIT(&ring.empty[s], parity);
            if (Maps::WarpWide) free = __shfl_sync(0xFFFFFFFFu, free, 0);
            if (!free) return (unit = sched->units), false;
        }
        if (loads()) load(s);
        ++pos;
        if (++kb == w.kb_end && (unit += sched->stride) < sched->units) enter();
        return true;
    }

    // Stage s is free: arm its full barrier for the stage's bytes, issue the
    // loads of A and B into it.
    __device__ __forceinline__ void load(uint32_t s) {
        uint8_t* stage = ring.stages + s * Cfg::StageBytes;
        uint64_t* full = &ring.full[s];
        const uint32_t rank_m = rank / Cfg::ClusterN, rank_n = rank % Cfg::ClusterN;
        const int32_t k0 = (int32_t)(kb * BK);
        // Every byte of the stage lands in THIS CTA, whoever issued it: arm for all.
        mbar_arrive_expect_tx(full, Cfg::StageBytes);
        // A: the ClusterN CTAs of this cluster row share the rows; this one
        // loads slice rank_n and, with ClusterN > 1, multicasts it to all.
        uint8_t* a_dst = stage + rank_n * Cfg::SliceRowsA * ROW_BYTES;
        const int32_t a_row = (int32_t)(maps.a_row(w) + rank_n * Cfg::SliceRowsA);
        if (Cfg::ClusterN > 1)
            tma_load_2d_multicast(a_dst, maps.a(), k0, a_row, full,
                                  (uint16_t)(((1u << Cfg::ClusterN) - 1) << (rank_m * Cfg::ClusterN)));
        else
            tma_load_2d(a_dst, maps.a(), k0, a_row, full);
        // B: the ClusterM CTAs of this cluster column share it; slice rank_m.
        uint8_t* b_dst = stage + Cfg::StageBytesA + rank_m * Cfg::SliceRowsB * ROW_BYTES;
        const int32_t b_row = (int32_t)(maps.b_row(w) + rank_m * Cfg::SliceRowsB);
        if (Cfg::ClusterM > 1) {
            uint16_t mask = 0;
            for (uint32_t i = 0; i < Cfg::ClusterM; ++i)
                mask |= (uint16_t)(1u << (i * Cfg::ClusterN + rank_n));
            tma_load_2d_multicast(b_dst, maps.b(), k0, b_row, full, mask);
        } else {
            tma_load_2d(b_dst, maps.b(), k0, b_row, full);
        }
    }
};
