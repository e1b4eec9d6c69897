// A part of 06_transpose/transpose.cu, whose main() runs the parts in order.
#pragma once
#include "06_transpose/parts/problem.cuh"

// ---- Part 1: naive --------------------------------------------------------
// A warp reads 32 consecutive floats of a row (one 128-byte request) and
// writes them down a column: 32 rows apart, 32 separate 32-byte sectors of
// which it fills 4 bytes each: a sector is whole only once neighbouring warps
// have written the rest of it.
__global__ void __launch_bounds__(TILE * 8)
    naive(const float* in, float* out, uint32_t rows, uint32_t cols, uint32_t ld_in, uint32_t ld_out) {
    const uint32_t c = blockIdx.x * TILE + threadIdx.x, r0 = blockIdx.y * TILE;
    if (c >= cols) return;
    for (uint32_t r = r0 + threadIdx.y; r < r0 + TILE && r < rows; r += 8)
        out[(size_t)c * ld_out + r] = in[(size_t)r * ld_in + c];
}

static void launch_naive(const Transpose* t) {
    const dim3 grid((t->cols + TILE - 1) / TILE, (t->rows + TILE - 1) / TILE);
    naive<<<grid, dim3(TILE, 8), 0, t->s>>>(t->in, t->interior, t->rows, t->cols, t->ld_in, t->ld_out);
}

// ---- Part 2: the classic padded tile -------------------------------------
// Both global sides coalesced: the block reads a 32 x 32 tile row by row,
// and writes the transposed tile row by row, reading shared memory down a
// column. Padding each row to 33 words puts a column's 32 words in 32
// different banks; without it they would all be in one (a 32-way conflict).
__global__ void __launch_bounds__(TILE * 8)
    smem_padded(const float* in, float* out, uint32_t rows, uint32_t cols, uint32_t ld_in, uint32_t ld_out) {
    __shared__ float tile[TILE][TILE + 1];
    const uint32_t r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    for (uint32_t i = threadIdx.y; i < TILE; i += 8)
        if (r0 + i < rows && c0 + threadIdx.x < cols)
            tile[i][threadIdx.x] = in[(size_t)(r0 + i) * ld_in + c0 + threadIdx.x];
    __syncthreads();
    for (uint32_t j = threadIdx.y; j < TILE; j += 8)
        if (c0 + j < cols && r0 + threadIdx.x < rows)
            out[(size_t)(c0 + j) * ld_out + r0 + threadIdx.x] = tile[threadIdx.x][j];
}

static void launch_smem_padded(const Transpose* t) {
    const dim3 grid((t->cols + TILE - 1) / TILE, (t->rows + TILE - 1) / TILE);
    smem_padded<<<grid, dim3(TILE, 8), 0, t->s>>>(t->in, t->interior, t->rows, t->cols, t->ld_in, t->ld_out);
}
