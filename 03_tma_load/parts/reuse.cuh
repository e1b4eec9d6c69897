// A part of 03_tma_load/tma_load.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "03_tma_load/parts/problem.cuh"

// ---- Part 2: reuse ---------------------------------------------------------
// One CTA loads `tiles` boxes in sequence (CTA b: boxes b * tiles ...), all
// through ONE buffer and ONE barrier: the k-th load completes the barrier's
// k-th phase, so the k-th wait names parity k & 1. The __syncthreads() after
// the copy-out keeps the next load from overwriting a box still being read.
#define REUSE_BOX 64  // 64 x 64 uint32 = 16 KiB per box

static __device__ __forceinline__ int32_t reuse_col0(uint32_t t, uint32_t tiles_x) {
    return (int32_t)(t % tiles_x * REUSE_BOX);
}
static __device__ __forceinline__ int32_t reuse_row0(uint32_t t, uint32_t tiles_x) {
    return (int32_t)(t / tiles_x * REUSE_BOX);
}

__global__ void __launch_bounds__(THREADS)
    reuse_one_barrier(const __grid_constant__ CUtensorMap map, uint32_t tiles_x, int tiles, uint32_t* out) {
    uint32_t* box = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    const uint32_t words = REUSE_BOX * REUSE_BOX, bytes = words * 4;
    mbar_init_cta(&bar, 1, 1);
    for (int k = 0; k < tiles; ++k) {
        const uint32_t t = blockIdx.x * tiles + k;
        poison_smem(box, words);
        __syncthreads();  // poisoned (and the previous box fully read) before the load
        if (threadIdx.x == 0) {
            mbar_arrive_expect_tx(&bar, bytes);
            tma_load_2d(box, &map, reuse_col0(t, tiles_x), reuse_row0(t, tiles_x), &bar);
        }
        MBAR_WAIT(&bar, (uint32_t)(k & 1));
        copy_out(box, words, out + (size_t)t * words);
        __syncthreads();
    }
    if (threadIdx.x == 0) mbar_inval(&bar);
}

// Two buffers, two barriers: tile k+1 is loaded into the other buffer while
// tile k is copied out. Barrier b completes its u-th phase at its u-th use, so
// the wait for tile k (barrier k & 1, use k / 2) names parity (k / 2) & 1.
__global__ void __launch_bounds__(THREADS)
    reuse_two_barriers(const __grid_constant__ CUtensorMap map, uint32_t tiles_x, int tiles, uint32_t* out) {
    uint32_t* boxes = (uint32_t*)tma_smem_base();  // [2][REUSE_BOX * REUSE_BOX] uint32
    __shared__ __align__(8) uint64_t bar[2];
    const uint32_t words = REUSE_BOX * REUSE_BOX, bytes = words * 4, first = blockIdx.x * tiles;
    poison_smem(boxes, 2 * words);
    mbar_init_cta(bar, 2, 1);
    if (threadIdx.x == 0) {  // prologue: tile 0 into buffer 0
        mbar_arrive_expect_tx(&bar[0], bytes);
        tma_load_2d(boxes, &map, reuse_col0(first, tiles_x), reuse_row0(first, tiles_x), &bar[0]);
    }
    for (int k = 0; k < tiles; ++k) {
        if (threadIdx.x == 0 && k + 1 < tiles) {  // buffer (k+1)&1 was freed by the barrier at the end of k-1
            const uint32_t t = first + k + 1;
            mbar_arrive_expect_tx(&bar[(k + 1) & 1], bytes);
            tma_load_2d(boxes + ((k + 1) & 1) * words, &map, reuse_col0(t, tiles_x), reuse_row0(t, tiles_x),
                        &bar[(k + 1) & 1]);
        }
        MBAR_WAIT(&bar[k & 1], (uint32_t)((k / 2) & 1));
        copy_out(boxes + (k & 1) * words, words, out + (size_t)(first + k) * words);
        __syncthreads();  // everyone is done with buffer k&1 before tile k+2 is loaded into it
    }
}

static void part_reuse(const Matrix* m, cudaStream_t s) {
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m->dev, m->rows, m->cols,
                                              m->cols * 4, REUSE_BOX, REUSE_BOX, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the part-2 matrix (--rows, --cols)");
    const int ctas = 8, per_cta = 16;  // 8 CTAs x 16 consecutive boxes (zero fill past the matrix)
    const uint32_t tiles = ctas * per_cta, tiles_x = (uint32_t)((m->cols + REUSE_BOX - 1) / REUSE_BOX);
    const size_t words = REUSE_BOX * REUSE_BOX;
    uint32_t* want = expected_grid_boxes(m, tiles, tiles_x, REUSE_BOX, REUSE_BOX);
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&out, tiles * words * 4));
    poison_device(out, tiles * words * 4, s);
    reuse_one_barrier<<<ctas, THREADS, tma_smem_bytes(words * 4), s>>>(map, tiles_x, per_cta, out);
    CHECK_LAUNCH();
    check_device("reuse_one_barrier", out, want, tiles * words, s);
    poison_device(out, tiles * words * 4, s);
    reuse_two_barriers<<<ctas, THREADS, tma_smem_bytes(2 * words * 4), s>>>(map, tiles_x, per_cta, out);
    CHECK_LAUNCH();
    check_device("reuse_two_barriers", out, want, tiles * words, s);
    CUDA_CHECK(cudaFree(out));
    free(want);
}
