// A part of 06_transpose/transpose.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "06_transpose/parts/box_per_block.cuh"  // transpose_box, store_transposed
#include "06_transpose/parts/indices.cuh"
#include "06_transpose/parts/problem.cuh"

// ---- Part 5: batched --------------------------------------------------------
// A quarter of the threads, four boxes side by side per block (a 32 x 128
// strip of the input), one barrier for the four loads and one bulk group for
// the four stores. Each thread moves 16 elements. Smaller blocks of more
// bytes: more of them fit on an SM, so more loads are in flight.
#define BATCH 4
#define BATCH_THREADS 256

__global__ void __launch_bounds__(BATCH_THREADS)
    tma_swizzle_batched(const __grid_constant__ CUtensorMap in_map,
                        const __grid_constant__ CUtensorMap out_map, uint32_t strips_x, uint32_t cols) {
    float* a = (float*)tma_smem_base<1024>();  // [BATCH][TILE][TILE] input boxes
    float* t = a + BATCH * TILE * TILE;        // [BATCH][TILE][TILE] output boxes
    __shared__ __align__(8) uint64_t bar;
    const int32_t c0 = (int32_t)(blockIdx.x % strips_x * TILE * BATCH),
                  r0 = (int32_t)(blockIdx.x / strips_x * TILE);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, BATCH * TILE * TILE * 4);  // boxes past the last column arrive as zeros
        for (int b = 0; b < BATCH; ++b) tma_load_2d(a + b * TILE * TILE, &in_map, c0 + b * TILE, r0, &bar);
    }
    MBAR_WAIT(&bar, 0);
    for (uint32_t k = threadIdx.x / TILE; k < BATCH * TILE; k += BATCH_THREADS / TILE) {
        const uint32_t b = k / TILE;
        transpose_box<true>(a + b * TILE * TILE, t + b * TILE * TILE, k % TILE, threadIdx.x % TILE);
    }
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int b = 0; b < BATCH; ++b)
            if ((uint32_t)c0 + b * TILE < cols)
                store_transposed(&out_map, c0 + b * TILE, r0, t + b * TILE * TILE);
        bulk_commit_group();
        bulk_wait_group_read<0>();
    }
}

static void launch_batched(const Transpose* t) {
    const uint32_t strips_x = (t->cols + TILE * BATCH - 1) / (TILE * BATCH),
                   strips = strips_x * ((t->rows + TILE - 1) / TILE);
    tma_swizzle_batched<<<strips, BATCH_THREADS, tma_smem_bytes(2 * BATCH * TILE * TILE * 4, 1024), t->s>>>(
        t->in_swizzled, t->out_swizzled, strips_x, t->cols);
}
