// 09_gemm/parts/consume.cuh: the consumer side of the ring: one stage's MMAs
// (mma_stage), a stage handed back (release_stage), ping-pong's turns, and
// the k-loop of a consumer warpgroup over the units of a Schedule, each
// ending in the epilogue into the C a MapSource gives (maps.cuh).
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "06_transpose/named_barrier.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include "09_gemm/wgmma.cuh"
#include "09_gemm/parts/epilogue.cuh"
#include "09_gemm/parts/loader.cuh"

// One stage's MMAs for one warpgroup: its 64 rows of A (a_rows) times the
// 256 rows of B, over the stage's 64 elements of K, as 4 MMAs of K = 16,
// each reading 32 bytes further into every 128-byte row. `accumulate` 0
// starts the tile: the first MMA overwrites the accumulators.
static __device__ __forceinline__ void mma_stage(float (&d)[128], const uint8_t* a_rows,
                                                 const uint8_t* b_rows, bool accumulate) {
    // LAB-BEGIN: the k-block's MMAs as one group: a descriptor for A's and for B's rows (09_gemm/wgmma.cuh), the fence before the first MMA, BK / K_STEP MMAs along K (where does each one's K start, in the descriptor's units?), accumulating except in the very first, then the commit
    const uint64_t da = smem_desc_sw128(a_rows), db = smem_desc_sw128(b_rows);
    wgmma_fence();
#pragma unroll
    for (uint32_t s = 0; s < BK / K_STEP; ++s)  // + 2 in the start field: 32 bytes, 16 bf16 of K
        wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, accumulate || s > 0);
    wgmma_commit_group();
    // LAB-STUB: (void)d, (void)a_rows, (void)b_rows, (void)accumulate;
    // LAB-END
}

// A consumer warpgroup hands stage s back: one arrival per warpgroup on each
// CTA of the cluster (thread r arrives on CTA r's barrier). wait_group in
// one thread covers the whole warpgroup's MMAs: an MMA is one operation of
// the warpgroup, started only once all 4 warps issued it.
template <class Cfg>
static __device__ __forceinline__ void release_stage(uint64_t* empty, uint32_t tid) {
    if (Cfg::ClusterSize == 1) {
        if (tid == 0) mbar_arrive(empty);
    } else if (tid < Cfg::ClusterSize) {
        mbar_arrive_remote(empty, tid);
    }
}

// Ping-pong's order (CUTLASS calls it an ordered barrier): the two consumer
// warpgroups take turns at the k-loop, unit by unit. The turn is not only
// for speed: without it, a warpgroup could wait on a stage's full barrier
// two or more phases before the producer gets there; the parity it waits for
// is then that of a phase already complete (the other unit's), the wait
// returns at once, and it multiplies the other unit's tiles. Barrier 3 is "warpgroup 0's turn", 4 "warpgroup
// 1's": each is 128 waiting threads plus 128 arriving ones.
static __device__ __forceinline__ void pingpong_wait_turn(uint32_t wg) {
    if (wg == 0)
        named_barrier_sync<3, 256>();
    else
        named_barrier_sync<4, 256>();
}
static __device__ __forceinline__ void pingpong_pass_turn(uint32_t wg) {
    if (wg == 0)
        named_barrier_arrive<4, 256>();
    else
        named_barrier_arrive<3, 256>();
}

// A unit whose rows all lie past its C's, for a Schedule that skips them
// (step 10: a warpgroup's 64 rows past its expert's last): no MMA, only each
// stage handed back once it landed, so that the ring turns as for any unit.
template <class Cfg, class L>
static __device__ __forceinline__ void pass_unit(L& loader, const StageRing& ring, uint32_t& pos,
                                                 uint32_t kblocks, uint32_t tid, bool issuer) {
    for (uint32_t j = 0; j < kblocks; ++j, ++pos) {
        MBAR_WAIT(&ring.full[pos % Cfg::Stages], (pos / Cfg::Stages) & 1);
        release_stage<Cfg>(&ring.empty[pos % Cfg::Stages], tid);
        if (issuer) loader.issue();
        __syncwarp();
    }
}

// A consumer warpgroup: every unit of this CTA (in PINGPONG every other
// one), k-block by k-block through the ring, then the epilogue into the C
// the MapSource gives for the unit.
template <class Cfg, class Schedule, class Maps>
static __device__ __forceinline__ void consume(const Schedule& sched, Maps& maps,
                                               Loader<Cfg, Schedule, Maps>& loader, const StageRing& ring,
                                               float* epi_boxes) {
    const uint32_t wg = threadIdx.x / 128 - (Cfg::ProducerWarpgroup ? 1 : 0), tid = threadIdx.x % 128;
    const bool issuer = !Cfg::ProducerWarpgroup && threadIdx.x == 0;  // no producer: this thread loads
    float* boxes = epi_boxes + wg * 2 * (EPI_BOX_BYTES / 4);
    const uint32_t a_offset = Cfg::Consumers == COOPERATIVE ? wg * WG_M * ROW_BYTES : 0;
    if (issuer)
        for (int s = 0; s < Cfg::Stages; ++s) loader.issue();  // fill the ring
    __syncwarp();
    float d[128];
    uint32_t pos = 0, i = 0, chunks = 0;  // chunks: epilogue boxes filled so far (staged epilogues)
    for (uint32_t unit = sched.first; unit < sched.units; unit += sched.stride, ++i) {
        const Work w = sched.work(unit);
        const uint32_t kblocks = w.kb_end - w.kb_begin;
        if (Cfg::Consumers == PINGPONG && i % 2 != wg) {  // the other warpgroup's unit
            pos += kblocks;
            continue;
        }
        if (Cfg::Consumers == PINGPONG && i > 0) pingpong_wait_turn(wg);  // the other one's k-loop is done
        if constexpr (Schedule::SkipEmptyRows)
            if (w.row0 + (Cfg::Consumers == COOPERATIVE ? wg * WG_M : 0) >= w.rows) {
                pass_unit<Cfg>(loader, ring, pos, kblocks, tid, issuer);
                if (Cfg::Consumers == PINGPONG && unit + sched.stride < sched.units) pingpong_pass_turn(wg);
                continue;
            }
        for (uint32_t j = 0; j < kblocks; ++j, ++pos) {
            const uint32_t s = pos % Cfg::Stages;
            uint8_t* stage = ring.stages + s * Cfg::StageBytes;
            MBAR_WAIT(&ring.full[s], (pos / Cfg::Stages) & 1);
            mma_stage(d, stage + a_offset, stage + Cfg::StageBytesA, j > 0);
            if (j > 0) {
                wgmma_wait_group<1>();  // the batch before this one is done: its stage is free
                release_stage<Cfg>(&ring.empty[(pos - 1) % Cfg::Stages], tid);
                if (issuer) loader.issue();
                __syncwarp();
            }
        }
        // Ping-pong: the tensor cores go to the other warpgroup, whose next
        // unit's k-loop overlaps this one's epilogue.
        if (Cfg::Consumers == PINGPONG && unit + sched.stride < sched.units) pingpong_pass_turn(wg);
        wgmma_wait_group<0>();
        wgmma_fence_operands(d);
        release_stage<Cfg>(&ring.empty[(pos - 1) % Cfg::Stages], tid);
        if (issuer) loader.issue();
        __syncwarp();
        const auto& out = maps.output(w, wg, tid);
        const uint32_t row0 = w.row0 + (Cfg::Consumers == COOPERATIVE ? wg * WG_M : 0);
        if constexpr (Schedule::StreamK)
            if (w.kind != WORK_TILE) {  // a piece of a tile cut along K (stream_k.cuh)
                sched.piece_epilogue(d, out, w, row0, tid, wg);
                continue;
            }
        epilogue<Cfg>(d, out, maps.c(), boxes, row0, w.col0, tid, wg, chunks);
    }
    if (Cfg::Epilogue == EPI_TMA_STORE || Cfg::Epilogue == EPI_TMA_REDUCE)
        if (tid == 0) bulk_wait_group<0>();  // every store done before the block ends
}
