// A part of 06_transpose/transpose.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "06_transpose/parts/indices.cuh"
#include "06_transpose/parts/problem.cuh"

// ---- Parts 3 and 4: one box per block, one element per thread ---------------
// Thread 0 loads the 32 x 32 box at (c0, r0) of the input map; the block
// writes its transpose into a second box; every thread fences (its writes
// are generic-proxy, the store reads through the async proxy); thread 0
// stores the box through the output map, whose dimensions are the input's
// swapped. Edge boxes: the load fills what lies outside the matrix
// with zeros, and the store writes only what lies inside.
// Thread (i, j) = (threadIdx.x / 32, threadIdx.x % 32): a warp reads row i of
// the input box and writes it as column i of the output box. Unswizzled
// (part 3), the 32 words of a column are 128 bytes apart, all in one bank.
// Swizzled (part 4), their 16-byte chunks are spread over 8 positions: 8
// banks, 4 words each, a 4-way conflict.
template <bool SWIZZLED>
static __device__ __forceinline__ void transpose_box(const float* a, float* t, uint32_t i, uint32_t j) {
    if (SWIZZLED)
        t[swizzled_element(smem_u32(t), j, i)] = a[swizzled_element(smem_u32(a), i, j)];
    else
        t[j * TILE + i] = a[i * TILE + j];
}

// The store of every TMA transpose here: `t` holds the transpose of the input
// box at (c0, r0), column first as the load took it; out_map describes the
// output, whose dimensions are the input's swapped.
static __device__ __forceinline__ void store_transposed(const CUtensorMap* out_map, int32_t c0, int32_t r0,
                                                        float* t) {
    // LAB-BEGIN: store the transposed box t through out_map: the input box was at (c0, r0) and the output's dimensions are the input's swapped, so at which coordinates?
    tma_store_2d(out_map, r0, c0, t);
    // LAB-STUB: (void)out_map, (void)c0, (void)r0, (void)t;
    // LAB-END
}

template <bool SWIZZLED>
static __device__ __forceinline__ void box_per_block(const CUtensorMap* in_map, const CUtensorMap* out_map,
                                                     uint32_t tiles_x) {
    float* a = (float*)tma_smem_base<1024>();  // [TILE][TILE]: the input box as the TMA wrote it
    float* t = a + TILE * TILE;                // [TILE][TILE]: its transpose, the output box
    __shared__ __align__(8) uint64_t bar;
    const int32_t c0 = (int32_t)(blockIdx.x % tiles_x * TILE), r0 = (int32_t)(blockIdx.x / tiles_x * TILE);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, TILE * TILE * 4);  // the whole box, zero-filled part included
        tma_load_2d(a, in_map, c0, r0, &bar);
    }
    MBAR_WAIT(&bar, 0);
    transpose_box<SWIZZLED>(a, t, threadIdx.x / TILE, threadIdx.x % TILE);
    fence_proxy_async_shared();  // every writing thread, before the barrier
    __syncthreads();
    if (threadIdx.x == 0) {
        store_transposed(out_map, c0, r0, t);
        bulk_commit_group();
        bulk_wait_group_read<0>();  // the store has read t: the block may end
    }
}

__global__ void __launch_bounds__(TILE* TILE)
    tma_naive(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
              uint32_t tiles_x) {
    box_per_block<false>(&in_map, &out_map, tiles_x);
}

__global__ void __launch_bounds__(TILE* TILE)
    tma_swizzle(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
                uint32_t tiles_x) {
    box_per_block<true>(&in_map, &out_map, tiles_x);
}

static void launch_box_per_block(const Transpose* t, bool swizzled) {
    const uint32_t tiles_x = (t->cols + TILE - 1) / TILE, tiles = tiles_x * ((t->rows + TILE - 1) / TILE);
    const size_t smem = tma_smem_bytes(2 * TILE * TILE * 4, 1024);
    if (swizzled)
        tma_swizzle<<<tiles, TILE * TILE, smem, t->s>>>(t->in_swizzled, t->out_swizzled, tiles_x);
    else
        tma_naive<<<tiles, TILE * TILE, smem, t->s>>>(t->in_box, t->out_box, tiles_x);
}
