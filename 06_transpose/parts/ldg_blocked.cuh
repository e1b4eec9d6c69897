// A part of 06_transpose/transpose.cu, whose main() runs the parts in order.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/pipeline.cuh"
#include "06_transpose/parts/indices.cuh"
#include "06_transpose/parts/pipelined.cuh"  // the tile and its order
#include "06_transpose/parts/problem.cuh"

// ---- Part 6b: the same tile without the TMA ----------------------------------
// The plain baseline tuned like tma_pipelined: the same PIPE_ROWS x PIPE_COLS
// tile, the same 128 threads moving it as 4 x 4 blocks, the same dynamic
// schedule and tile order (tile_position, --band), a persistent grid. What
// changes is who moves the bytes: every thread issues 16-byte LDG.128 loads
// (a warp reads two whole 256-byte tile rows), STS.128 into a shared tile,
// LDS.128 of four rows, a 4 x 4 transpose in registers, and 16-byte STG.128
// stores (a warp writes 512 contiguous bytes of an output row).
// Bytes in flight: a register double buffer. A thread issues the next tile's
// loads into one set of registers before it writes the current tile (held in
// the other set) into shared memory, so while a block waits for a tile, the
// next one is already on its way: 1 to 2 tiles (32 to 64 KiB) per block, and
// LDG_BLOCKS_PER_SM blocks per SM (default 2: 2 to 4 tiles, against
// tma_pipelined's PIPE_STAGES input stages). Not swept yet; experiments:
// make NVCCFLAGS="-DLDG_BLOCKS_PER_SM=3" build-06.
// Shared memory: input rows of PIPE_COLS floats (a multiple of 128 B), chunk
// c of row r stored at c ^ (r / 4 % 8). The STS of a quarter warp are 8
// chunks of one row, the LDS of a quarter warp chunk b of rows 4a + k for 8
// consecutive a: both 8 different positions of 8, no bank conflict (the
// bank model checks it).
// Edges: a chunk whose first column is inside the matrix is loaded whole (the
// 16-byte stride rule makes the row's stride reach past it; the words past
// the last column are the row's padding and never reach the output); rows
// past the matrix are not loaded. Output chunks wholly inside a row are one
// STG.128; the one chunk per output row that ends past the matrix (rows not
// a multiple of 4) is written word by word; nothing else is written.
#define LDG_THREADS PIPE_CONSUMERS
#define LDG_ROW_CHUNKS (PIPE_COLS / 4)                                 // 16-byte chunks per tile row
#define LDG_LOADS (PIPE_TILE_FLOATS / 4 / LDG_THREADS)                 // per thread per tile: 16
#define LDG_BLOCKS_ALL (PIPE_TILE_FLOATS / 16)                         // 4 x 4 blocks per tile
#define LDG_BLOCKS ((LDG_BLOCKS_ALL + LDG_THREADS - 1) / LDG_THREADS)  // per thread per tile: 4
#ifndef LDG_BLOCKS_PER_SM
#define LDG_BLOCKS_PER_SM 2
#endif
static_assert(LDG_THREADS % LDG_ROW_CHUNKS == 0 && PIPE_TILE_FLOATS / 4 % LDG_THREADS == 0,
              "a pass of ldg_blocked's loads covers whole tile rows");
static_assert(PIPE_TILE_FLOATS * 4 + 8 <= 48 * 1024, "ldg_blocked's shared tile is static: at most 48 KiB");

// The float4 index of chunk `chunk` of tile row `row` in ldg_blocked's shared tile.
static __host__ __device__ __forceinline__ uint32_t ldg_chunk(uint32_t row, uint32_t chunk) {
    return row * LDG_ROW_CHUNKS + (chunk ^ (row / 4 % 8));
}

typedef struct {
    const float* in;
    float* out;
    uint32_t rows, cols, ld_in, ld_out, band, tiles_r, tiles_c, ntiles;
} LdgGeometry;

// Thread tid's 16-byte loads of tile `tile` (none for ntiles; zeros past the
// matrix, which never reach the output): load j is row
// j * (LDG_THREADS / LDG_ROW_CHUNKS) + tid / LDG_ROW_CHUNKS, chunk tid % LDG_ROW_CHUNKS.
static __device__ __forceinline__ void ldg_load_tile(const LdgGeometry* g, uint32_t tile,
                                                     float4 (&v)[LDG_LOADS]) {
    if (tile == g->ntiles) return;
    uint32_t tr, tc;
    tile_position(tile, g->tiles_r, g->tiles_c, g->band, &tr, &tc);
    const uint32_t tid = threadIdx.x, c = tc * PIPE_COLS + tid % LDG_ROW_CHUNKS * 4;
#pragma unroll
    for (uint32_t j = 0; j < LDG_LOADS; ++j) {
        const uint32_t r = tr * PIPE_ROWS + j * (LDG_THREADS / LDG_ROW_CHUNKS) + tid / LDG_ROW_CHUNKS;
        float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r < g->rows && c < g->cols) x = *(const float4*)(g->in + (size_t)r * g->ld_in + c);
        v[j] = x;
    }
}

static __device__ __forceinline__ float element(const float4& x, uint32_t m) {
    return m == 0 ? x.x : m == 1 ? x.y : m == 2 ? x.z : x.w;
}

// Thread tid's 4 x 4 blocks of the tile at (tr, tc), from the shared tile to
// the output: block n is w = tid + n * LDG_THREADS, a = w % (PIPE_ROWS / 4),
// b = w / (PIPE_ROWS / 4). A warp has 32 consecutive a and one b, so each of
// its STG.128 writes 512 contiguous bytes of one output row. FULL: the tile
// lies inside the matrix, no guard; otherwise only what lies inside is
// written, the chunk a row ends in word by word.
template <bool FULL>
static __device__ __forceinline__ void ldg_store_tile(const LdgGeometry* g, const float4* tile_smem,
                                                      uint32_t tr, uint32_t tc) {
    const uint32_t tid = threadIdx.x;
    float4 x[LDG_BLOCKS][4];  // x[n][i]: input row 4a + i, columns 4b..4b+3
#pragma unroll
    for (uint32_t n = 0; n < LDG_BLOCKS; ++n) {
        const uint32_t w = tid + n * LDG_THREADS, a = w % (PIPE_ROWS / 4), b = w / (PIPE_ROWS / 4);
        if (LDG_BLOCKS_ALL % LDG_THREADS == 0 || w < LDG_BLOCKS_ALL)
#pragma unroll
            for (uint32_t i = 0; i < 4; ++i) x[n][i] = tile_smem[ldg_chunk(4 * a + i, b)];
    }
#pragma unroll
    for (uint32_t n = 0; n < LDG_BLOCKS; ++n) {
        const uint32_t w = tid + n * LDG_THREADS, a = w % (PIPE_ROWS / 4), b = w / (PIPE_ROWS / 4);
        if (LDG_BLOCKS_ALL % LDG_THREADS != 0 && w >= LDG_BLOCKS_ALL) break;
        const uint32_t r = tr * PIPE_ROWS + 4 * a, c = tc * PIPE_COLS + 4 * b;  // output column, first row
        float* p = g->out + (size_t)c * g->ld_out + r;
#pragma unroll
        for (uint32_t m = 0; m < 4; ++m) {  // output row c + m: input column 4b + m of rows 4a..4a+3
            float* q = p + (size_t)m * g->ld_out;
            const float4 y = make_float4(element(x[n][0], m), element(x[n][1], m), element(x[n][2], m),
                                         element(x[n][3], m));
            if (FULL || (c + m < g->cols && r + 4 <= g->rows)) {
                *(float4*)q = y;
            } else if (c + m < g->cols && r < g->rows) {  // the row's last chunk: 1 to 3 words inside
                q[0] = y.x;
                if (r + 1 < g->rows) q[1] = y.y;
                if (r + 2 < g->rows) q[2] = y.z;
            }
        }
    }
}

// One tile: `cur` holds tile *tile (loads issued one step earlier), `nxt`
// receives the loads of *next. slot[k % 2] carries the tile after *next from
// thread 0 (the one that keeps the schedule) to the block. False: no more tiles.
static __device__ __forceinline__ bool ldg_step(const LdgGeometry* g, float4 (&cur)[LDG_LOADS],
                                                float4 (&nxt)[LDG_LOADS], float4* tile_smem, uint32_t* slot,
                                                Schedule* sched, uint32_t k, uint32_t* tile, uint32_t* next) {
    if (*tile == g->ntiles) return false;
    const uint32_t tid = threadIdx.x;
    ldg_load_tile(g, *next, nxt);  // the next tile's loads go out before this one is written
    __syncthreads();               // the previous tile's LDS are done: the shared tile is free
#pragma unroll
    for (uint32_t j = 0; j < LDG_LOADS; ++j)
        tile_smem[ldg_chunk(j * (LDG_THREADS / LDG_ROW_CHUNKS) + tid / LDG_ROW_CHUNKS,
                            tid % LDG_ROW_CHUNKS)] = cur[j];
    if (tid == 0) slot[k % 2] = next_box(sched, k + 2);  // slot k % 2 was last read before the barrier above
    __syncthreads();
    const uint32_t after = slot[k % 2];
    uint32_t tr, tc;
    tile_position(*tile, g->tiles_r, g->tiles_c, g->band, &tr, &tc);
    if ((tr + 1) * PIPE_ROWS <= g->rows && (tc + 1) * PIPE_COLS <= g->cols)
        ldg_store_tile<true>(g, tile_smem, tr, tc);
    else
        ldg_store_tile<false>(g, tile_smem, tr, tc);
    *tile = *next;
    *next = after;
    return true;
}

__global__ void __launch_bounds__(LDG_THREADS, LDG_BLOCKS_PER_SM)
    ldg_blocked(const float* __restrict__ in, float* __restrict__ out, uint32_t rows, uint32_t cols,
                uint32_t ld_in, uint32_t ld_out, uint32_t band, unsigned int* counter) {
    __shared__ float4 tile_smem[PIPE_TILE_FLOATS / 4];
    __shared__ uint32_t slot[2];
    const uint32_t tiles_r = (rows + PIPE_ROWS - 1) / PIPE_ROWS, tiles_c = (cols + PIPE_COLS - 1) / PIPE_COLS;
    const LdgGeometry g = {in, out, rows, cols, ld_in, ld_out, band, tiles_r, tiles_c, tiles_r * tiles_c};
    Schedule sched = make_schedule(SCHED_DYNAMIC, 1, g.ntiles, counter);  // kept by thread 0 alone
    if (threadIdx.x == 0) {
        slot[0] = next_box(&sched, 0);
        slot[1] = next_box(&sched, 1);
    }
    __syncthreads();
    uint32_t tile = slot[0], next = slot[1];
    float4 x[LDG_LOADS], y[LDG_LOADS];  // the register double buffer
    ldg_load_tile(&g, tile, x);
    for (uint32_t k = 0;; k += 2) {  // two steps per trip: the buffers swap roles, every index constant
        if (!ldg_step(&g, x, y, tile_smem, slot, &sched, k, &tile, &next)) break;
        if (!ldg_step(&g, y, x, tile_smem, slot, &sched, k + 1, &tile, &next)) break;
    }
}

// One block per SM of tma_pipelined becomes LDG_BLOCKS_PER_SM of ldg_blocked:
// the grid is exactly that many per SM, and they must fit at once.
static int ldg_blocked_grid(void) {
    const int fit = blocks_per_sm((const void*)ldg_blocked, LDG_THREADS, 0);
    if (fit < LDG_BLOCKS_PER_SM)
        die_internal("ldg_blocked: %d blocks per SM fit, LDG_BLOCKS_PER_SM is %d", fit, LDG_BLOCKS_PER_SM);
    return sm_count() * LDG_BLOCKS_PER_SM;
}

static void launch_ldg_blocked(const Transpose* t, uint32_t band) {
    if (t->ld_in % 4)  // check_arguments enforces it (the 16-byte stride rule); the loads rely on it
        die_internal("ldg_blocked needs a row stride of a multiple of 4 elements, not %u", t->ld_in);
    CUDA_CHECK(cudaMemsetAsync(t->counter, 0, sizeof *t->counter, t->s));
    ldg_blocked<<<ldg_blocked_grid(), LDG_THREADS, 0, t->s>>>(t->in, t->interior, t->rows, t->cols, t->ld_in,
                                                              t->ld_out, band, t->counter);
}
