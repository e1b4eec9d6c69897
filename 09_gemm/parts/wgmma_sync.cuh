// 09_gemm/parts/wgmma_sync.cuh: part 1, the synchronous loop: TMA and wgmma
// taking turns on one buffer, nothing overlapped.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tma_load.cuh"
#include "09_gemm/parts/consume.cuh"
#include "09_gemm/parts/epilogue.cuh"
#include "09_gemm/parts/problem.cuh"

// ---- Part 1: wgmma_sync -------------------------------------------------------
// One block per 128 x 256 tile of C, two warpgroups of 64 rows each, one
// buffer: thread 0 loads the k-block's A box (64 x 128) and B box (64 x 256)
// with the TMA, every thread waits on the barrier, each warpgroup issues its
// 4 MMAs and waits for them, and the block syncs before the next load may
// overwrite what the MMAs read. Loads and MMAs take turns: nothing overlaps.
// The MMAs read the boxes where the TMA put them: the tensor maps and the
// descriptors (09_gemm/wgmma.cuh, field by field) both say 128B swizzle, and
// every box starts 1024-byte aligned (A at 0, B 16 KiB further).
#define SYNC_M 128
#define SYNC_THREADS (SYNC_M / WG_M * 128)
#define SYNC_STAGE_BYTES ((SYNC_M + BN) * ROW_BYTES)

__global__ void __launch_bounds__(SYNC_THREADS)
    wgmma_sync(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, float* c,
               uint32_t m, uint32_t n, uint32_t ldc, uint32_t kblocks, uint32_t tiles_n) {
    uint8_t* a_tile = tma_smem_base<1024>();        // [SYNC_M][64] bf16, 128B-swizzled, 1024-byte aligned
    uint8_t* b_tile = a_tile + SYNC_M * ROW_BYTES;  // [BN][64] bf16, likewise (16 KiB further)
    __shared__ __align__(8) uint64_t bar;
    const uint32_t tm = blockIdx.x / tiles_n, tn = blockIdx.x % tiles_n, wg = threadIdx.x / 128;
    mbar_init_cta(&bar, 1, 1);
    float d[128];
    for (uint32_t kb = 0; kb < kblocks; ++kb) {
        if (threadIdx.x == 0) {
            // The whole boxes arrive, out-of-bounds parts as zeros: the K
            // tail and the rows past M or N add nothing to any sum.
            mbar_arrive_expect_tx(&bar, SYNC_STAGE_BYTES);
            tma_load_2d(a_tile, &a_map, (int32_t)(kb * BK), (int32_t)(tm * SYNC_M), &bar);
            tma_load_2d(b_tile, &b_map, (int32_t)(kb * BK), (int32_t)(tn * BN), &bar);
        }
        MBAR_WAIT(&bar, kb & 1);
        mma_stage(d, a_tile + wg * WG_M * ROW_BYTES, b_tile, kb > 0);
        wgmma_wait_group<0>();
        __syncthreads();  // both warpgroups' MMAs have read the buffer: the next load may overwrite it
    }
    wgmma_fence_operands(d);
    store_tile(d, c, m, n, ldc, tm * SYNC_M + wg * WG_M, tn * BN);
}

static void launch_wgmma_sync(const Gemm* g) {
    const uint32_t tiles_n = (g->n + BN - 1) / BN, tiles = tiles_n * ((g->m + SYNC_M - 1) / SYNC_M);
    const size_t smem = tma_smem_bytes(SYNC_STAGE_BYTES, 1024);
    wgmma_sync<<<tiles, SYNC_THREADS, smem, g->s>>>(g->a_box[0], g->b_box[0], g->c, g->m, g->n, g->ldc,
                                                    (g->k + BK - 1) / BK, tiles_n);
}
