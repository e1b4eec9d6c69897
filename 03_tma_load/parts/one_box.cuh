// A part of 03_tma_load/tma_load.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "03_tma_load/parts/problem.cuh"
#include "03_tma_load/parts/tiling.cuh"  // load_box

// ---- Parts 3 and 5: one box, anywhere, with any traversal stride -------------
// `bytes` is what the box delivers (tensor_box_bytes on the host): the full
// box, out-of-bounds part included, with ceil(box / stride) rows.
__global__ void __launch_bounds__(THREADS) one_box(const __grid_constant__ CUtensorMap map, int32_t col0,
                                                   int32_t row0, uint32_t bytes, uint32_t* out) {
    uint32_t* box = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t bar;
    poison_smem(box, bytes / 4);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) load_box(box, &map, col0, row0, &bar, bytes);
    MBAR_WAIT(&bar, 0);
    copy_out(box, bytes / 4, out);
}

// Loads one box of `m` described by `spec` at (col0, row0) and checks it.
static void load_one_box(const char* name, const Matrix* m, const TensorMapSpec* spec, int64_t col0,
                         int64_t row0, cudaStream_t s) {
    const CUtensorMap map = make_tensor_map(spec, name);
    const uint32_t bytes = tensor_box_bytes(spec), rows_loaded = bytes / 4 / spec->box[0];
    uint32_t* want = expected_boxes(m, 1, &row0, &col0, rows_loaded, spec->box[0], spec->elem_stride[1]);
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&out, bytes));
    poison_device(out, bytes, s);
    one_box<<<1, THREADS, tma_smem_bytes(bytes), s>>>(map, (int32_t)col0, (int32_t)row0, bytes, out);
    CHECK_LAUNCH();
    check_device(name, out, want, bytes / 4, s);
    CUDA_CHECK(cudaFree(out));
    free(want);
}

// what lies outside with zeros, and the full box's bytes arrive. Every word
// of the box is compared: the inside with the matrix, the outside with 0, so
// a wrong fill or a shifted box cannot hide (the matrix holds no zero there).
static void part_out_of_bounds(cudaStream_t s) {
    const Matrix m = small_matrix(100, 100, s);
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m.dev, 100, 100, 400, 32, 32,
                                              CU_TENSOR_MAP_SWIZZLE_NONE);
    load_one_box("oob_box_at_col_-8_row_90", &m, &spec, -8, 90, s);
    CUDA_CHECK(cudaFree(m.dev));
}

// Traversal strides: with elementStrides {1, 2} the TMA takes every second
// row of a 16-row box, so 8 rows land (and 8 rows' bytes are what expect_tx
// must say). Dimension 0's stride is ignored without interleave: {2, 2} loads
// exactly the same 8 rows of 32 whole columns.
static void part_strided(cudaStream_t s) {
    const Matrix m = small_matrix(64, 64, s);
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m.dev, 64, 64, 256, 16, 32,
                                        CU_TENSOR_MAP_SWIZZLE_NONE);
    spec.elem_stride[1] = 2;
    load_one_box("strided_rows_1x2", &m, &spec, 8, 4, s);
    spec.elem_stride[0] = 2;
    load_one_box("strided_dim0_ignored_2x2", &m, &spec, 8, 4, s);
    CUDA_CHECK(cudaFree(m.dev));
}
