// 03_tma_load's own harness: position-coded matrices, the boxes expected from them, and the copy-out
// that lets the host check every loaded word.
#pragma once
#include "common/tutorial.cuh"

#define THREADS 256
#define MAX_BOX_BYTES (128 << 10)  // the largest box part 1 accepts (shared memory)

// Every tensor here holds its own coordinates: element (r, c) of a matrix
// with `cols` columns is r * cols + c, its row-major index. A box loaded from
// the wrong coordinate, transposed, shifted or short cannot match; an
// out-of-bounds element must read as 0 (oobFill NONE).
static __host__ __device__ __forceinline__ uint32_t expected_word(int64_t r, int64_t c, uint64_t rows,
                                                                  uint64_t cols) {
    return (r >= 0 && c >= 0 && (uint64_t)r < rows && (uint64_t)c < cols) ? (uint32_t)(r * cols + c) : 0u;
}

// A position-coded matrix on the device (and the host copy of it).
typedef struct {
    uint64_t rows, cols;
    uint32_t* dev;
} Matrix;

// Every loaded box is copied out to global memory (poisoned by the host), so
// the host checks every element, and a block that never ran leaves poison.
static __device__ __forceinline__ void copy_out(const uint32_t* box, uint32_t words, uint32_t* out) {
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) out[i] = box[i];
}

// The expected contents of `tiles` boxes of box_rows x box_cols at the given
// box origins, tile after tile (the layout copy_out produces).
static uint32_t* expected_boxes(const Matrix* m, uint32_t tiles, const int64_t* row0, const int64_t* col0,
                                uint32_t box_rows, uint32_t box_cols, uint32_t row_step) {
    const size_t words = (size_t)box_rows * box_cols;
    uint32_t* want = (uint32_t*)xmalloc(tiles * words * 4, "the expected boxes");
    for (uint32_t t = 0; t < tiles; ++t)
        for (size_t i = 0; i < words; ++i)
            want[t * words + i] = expected_word(row0[t] + (int64_t)(i / box_cols) * row_step,
                                                col0[t] + (int64_t)(i % box_cols), m->rows, m->cols);
    return want;
}

// The same for the first `tiles` boxes of a grid of boxes, box t at grid
// position (t / tiles_x, t % tiles_x): parts 1 and 2.
static uint32_t* expected_grid_boxes(const Matrix* m, uint32_t tiles, uint32_t tiles_x, uint32_t box_rows,
                                     uint32_t box_cols) {
    int64_t* row0 = (int64_t*)xmalloc(tiles * sizeof(int64_t), "box origins");
    int64_t* col0 = (int64_t*)xmalloc(tiles * sizeof(int64_t), "box origins");
    for (uint32_t t = 0; t < tiles; ++t) {
        row0[t] = (int64_t)(t / tiles_x) * box_rows;
        col0[t] = (int64_t)(t % tiles_x) * box_cols;
    }
    uint32_t* want = expected_boxes(m, tiles, row0, col0, box_rows, box_cols, 1);
    free(row0);
    free(col0);
    return want;
}

// A small position-coded matrix of its own, whatever the part-1 sizes are.
static Matrix small_matrix(uint64_t rows, uint64_t cols, cudaStream_t s) {
    Matrix m = {rows, cols, NULL};
    uint32_t* h = (uint32_t*)xmalloc(rows * cols * 4, "a small matrix");
    for (uint64_t i = 0; i < rows * cols; ++i) h[i] = (uint32_t)i;
    CUDA_CHECK(cudaMalloc((void**)&m.dev, rows * cols * 4));
    CUDA_CHECK(cudaMemcpyAsync(m.dev, h, rows * cols * 4, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    free(h);
    return m;
}

// A 100 x 100 tensor and a 32 x 32 box at column -8, row 90: the TMA fills
