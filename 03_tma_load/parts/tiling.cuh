// A part of 03_tma_load/tma_load.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "03_tma_load/parts/problem.cuh"

// ---- Part 1: one box per CTA -----------------------------------------------
// CTA b loads box (b / tiles_x, b % tiles_x) of the matrix and copies it out.
// load_box (parts 1, 3 and 5) arms the barrier for exactly the bytes the box
// delivers (one byte more and the phase never completes) and issues the load.
// The wait names parity 0, the barrier's first phase; parity 1 would name the
// phase BEFORE the first one, which counts as complete: it returns at once.
static __device__ __forceinline__ void load_box(uint32_t* dst, const CUtensorMap* map, int32_t col0,
                                                int32_t row0, uint64_t* bar, uint32_t bytes) {
    // LAB-BEGIN: arm the barrier for the box's bytes, then load the box at (col0, row0) into dst with one TMA load (which coordinate comes first?)
    mbar_arrive_expect_tx(bar, bytes);
    tma_load_2d(dst, map, col0, row0, bar);  // coordinates: column first, then row
    // LAB-STUB: (void)dst, (void)map, (void)col0, (void)row0, (void)bar, (void)bytes;
    // LAB-END
}

__global__ void __launch_bounds__(THREADS)
    tile_load(const __grid_constant__ CUtensorMap map, uint32_t box_rows, uint32_t box_cols, uint32_t tiles_x,
              uint32_t* out) {
    uint32_t* box = (uint32_t*)tma_smem_base();  // [box_rows][box_cols] uint32, 128-byte aligned
    __shared__ __align__(8) uint64_t bar;
    const uint32_t words = box_rows * box_cols,
                   bytes = words * 4;  // the FULL box, out-of-bounds part included
    const int32_t col0 = (int32_t)(blockIdx.x % tiles_x * box_cols),
                  row0 = (int32_t)(blockIdx.x / tiles_x * box_rows);
    poison_smem(box, words);
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);  // one arrival per phase: thread 0's arrive.expect_tx
        mbar_fence_init();   // orders the init for the cluster (see mbarrier.cuh)
    }
    __syncthreads();  // barrier initialized and box poisoned, for everyone
    if (threadIdx.x == 0) load_box(box, &map, col0, row0, &bar, bytes);
    MBAR_WAIT(&bar, 0);
    copy_out(box, words, out + (size_t)blockIdx.x * words);
}

static void part_tiling(const Matrix* m, uint32_t box_rows, uint32_t box_cols, cudaStream_t s) {
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m->dev, m->rows, m->cols,
                                              m->cols * 4, box_rows, box_cols, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map =
        make_tensor_map(&spec, "the part-1 matrix (--rows, --cols, --box-rows, --box-cols)");
    const uint32_t tiles_x = (uint32_t)((m->cols + box_cols - 1) / box_cols);
    const uint32_t tiles = tiles_x * (uint32_t)((m->rows + box_rows - 1) / box_rows);
    const size_t words = (size_t)box_rows * box_cols;
    uint32_t* want = expected_grid_boxes(m, tiles, tiles_x, box_rows, box_cols);
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&out, tiles * words * 4));
    poison_device(out, tiles * words * 4, s);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)tile_load, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)tma_smem_bytes(MAX_BOX_BYTES)));
    tile_load<<<tiles, THREADS, tma_smem_bytes(words * 4), s>>>(map, box_rows, box_cols, tiles_x, out);
    CHECK_LAUNCH();
    check_device("tiling", out, want, tiles * words, s);
    CUDA_CHECK(cudaFree(out));
    free(want);
}
