// A part of 06_transpose/transpose.cu, whose main() runs the parts in order.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "06_transpose/named_barrier.cuh"
#include "06_transpose/parts/indices.cuh"
#include "06_transpose/parts/problem.cuh"

// ---- Part 6: pipelined ----------------------------------------------------
// Persistent blocks of 5 warps. Warp 0's elected lane is the producer: it
// takes tiles from a global counter (03_tma_load/pipeline.cuh, one tile
// ahead) and loads each, PIPE_ROWS x PIPE_COLS floats in ONE box, into the
// next of PIPE_STAGES input stages as soon as the consumers have freed it.
// Warps 1-4 are the consumers: they transpose a stage into one of two output
// stages through registers, 4 x 4 elements per thread (LDS.128 in, STS.128
// out, no bank conflicts), free the input stage, fence, and meet at a named
// barrier; then one of them, the storer, stores the tile as ONE box and
// commits it. Before the next tile, the storer's wait_group.read says the
// store that last read the output stage about to be rewritten is done
// reading it. A side that is 32 floats (128 B) wide is 128B-swizzled; a wider
// one is not swizzled: its rows are a multiple of 128 B, and the thread
// mapping alone keeps the banks apart.
// Tile order: bands of `band` tile rows, down each band first: consecutive
// tiles write consecutive pieces of the same output rows. The default band
// (1024 tile rows) is column-major order for any matrix up to 128K rows: the
// tiles in flight write runs of tens of KiB into each output row. Band 1 is
// plain row-major order: their writes land in many output rows, a few
// hundred bytes each.
// The shape and the order were chosen by measurement on the H200
// (results/experiments/transpose_tiles_NVIDIA_H200.txt): 128 x 64 tiles,
// 32 KiB, one block per SM, in column-major tile order. Experiments:
// make NVCCFLAGS="-DPIPE_ROWS=128 -DPIPE_COLS=32 -DPIPE_STAGES=4" build-06.
#ifndef PIPE_ROWS
#define PIPE_ROWS 128  // input rows per tile: the output box's inner dimension (512 B)
#endif
#ifndef PIPE_COLS
#define PIPE_COLS 64  // input columns per tile: the input box's inner dimension (256 B)
#endif
#ifndef PIPE_STAGES
#define PIPE_STAGES 3
#endif
#define PIPE_OUT_STAGES 2
#define PIPE_CONSUMERS 128
static_assert(PIPE_ROWS % 32 == 0 && PIPE_ROWS <= 256 && PIPE_COLS % 32 == 0 && PIPE_COLS <= 256,
              "a tile side is a multiple of 32 floats (128 B) and at most 256 (a TMA box side)");
static_assert(PIPE_OUT_STAGES >= 2, "the storer frees an output stage a tile ahead");
#define PIPE_TILE_FLOATS (PIPE_ROWS * PIPE_COLS)
#define PIPE_IN_SWIZZLED (PIPE_COLS == 32)
#define PIPE_OUT_SWIZZLED (PIPE_ROWS == 32)

static __host__ __device__ __forceinline__ void tile_position(uint32_t tile, uint32_t tiles_r,
                                                              uint32_t tiles_c, uint32_t band, uint32_t* tr,
                                                              uint32_t* tc) {
    const uint32_t per_band = band * tiles_c, first = tile / per_band * band, rest = tile % per_band;
    const uint32_t band_rows = tiles_r - first < band ? tiles_r - first : band;  // the last band may be short
    *tr = first + rest % band_rows;
    *tc = rest / band_rows;
}

// Byte offset in a box at `base` of row `row`, 16-byte chunk `chunk`, for a
// box `width` floats wide, 128B-swizzled or not.
static __host__ __device__ __forceinline__ uint32_t chunk_offset(uint32_t base, uint32_t row, uint32_t chunk,
                                                                 uint32_t width, bool swizzled) {
    const uint32_t off = row * width * 4 + chunk * 16;
    return swizzled ? swizzled_offset(base, off) : off;
}

// The consumers' share of a tile: input rows 4a..4a+3, chunk b become output
// rows 4b..4b+3 (input columns), chunk a (input rows).
static __device__ __forceinline__ void transpose_tile(const float* src, float* dst, uint32_t tid) {
    const uint32_t src_base = smem_u32(src), dst_base = smem_u32(dst);
#pragma unroll
    for (uint32_t g = tid; g < PIPE_TILE_FLOATS / 16; g += PIPE_CONSUMERS) {
        uint32_t a, b;
        block_of_thread(g, PIPE_ROWS / 4, &a, &b);
        float v[4][4];  // v[k][m]: input row 4a + k, column 4b + m
#pragma unroll
        for (uint32_t k = 0; k < 4; ++k) {
            const uint32_t off = chunk_offset(src_base, 4 * a + k, b, PIPE_COLS, PIPE_IN_SWIZZLED);
            const float4 x = *(const float4*)((const uint8_t*)src + off);
            v[k][0] = x.x, v[k][1] = x.y, v[k][2] = x.z, v[k][3] = x.w;
        }
#pragma unroll
        for (uint32_t m = 0; m < 4; ++m) {
            const uint32_t off = chunk_offset(dst_base, 4 * b + m, a, PIPE_ROWS, PIPE_OUT_SWIZZLED);
            *(float4*)((uint8_t*)dst + off) = make_float4(v[0][m], v[1][m], v[2][m], v[3][m]);
        }
    }
}

__global__ void __launch_bounds__(32 + PIPE_CONSUMERS)
    tma_pipelined(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
                  uint32_t rows, uint32_t cols, uint32_t band, unsigned int* counter) {
    float* in_stage = (float*)tma_smem_base<1024>();               // [PIPE_STAGES][PIPE_ROWS][PIPE_COLS]
    float* out_stage = in_stage + PIPE_STAGES * PIPE_TILE_FLOATS;  // [PIPE_OUT_STAGES][PIPE_COLS][PIPE_ROWS]
    __shared__ __align__(8) uint64_t full[PIPE_STAGES], empty[PIPE_STAGES];
    __shared__ uint32_t tile_of[PIPE_STAGES];  // written by the producer, read by the storer
    __shared__ uint32_t current;  // the storer's word to all consumers: this tile, or ntiles: stop
    const uint32_t tiles_r = (rows + PIPE_ROWS - 1) / PIPE_ROWS, tiles_c = (cols + PIPE_COLS - 1) / PIPE_COLS,
                   ntiles = tiles_r * tiles_c;
    if (threadIdx.x == 0) {
        for (int s = 0; s < PIPE_STAGES; ++s) {
            mbar_init(&full[s], 1);                     // the producer's expect_tx
            mbar_init(&empty[s], PIPE_CONSUMERS / 32);  // one arrival per consumer warp
        }
        mbar_fence_init();
    }
    __syncthreads();
    uint32_t tr, tc;
    if (threadIdx.x < 32) {  // the producer
        if (!elect_one_sync()) return;
        Schedule sched = make_schedule(SCHED_DYNAMIC, 1, ntiles, counter);
        for (uint32_t k = 0;; ++k) {
            const uint32_t s = k % PIPE_STAGES;
            if (!MBAR_WAIT(&empty[s], ((k / PIPE_STAGES) & 1) ^ 1))
                return;  // stage s free (first pass: at once)
            const uint32_t tile = next_box(&sched, k);
            tile_of[s] = tile;
            if (tile == ntiles) {
                mbar_arrive(&full[s]);  // no more tiles: complete full[s] without a copy
                return;
            }
            tile_position(tile, tiles_r, tiles_c, band, &tr, &tc);
            mbar_arrive_expect_tx(&full[s], PIPE_TILE_FLOATS * 4);
            tma_load_2d(in_stage + s * PIPE_TILE_FLOATS, &in_map, (int32_t)(tc * PIPE_COLS),
                        (int32_t)(tr * PIPE_ROWS), &full[s]);
        }
    }
    const uint32_t tid = threadIdx.x - 32;
    const bool storer = tid == 0;
    for (uint32_t k = 0;; ++k) {
        const uint32_t s = k % PIPE_STAGES;
        float* out = out_stage + k % PIPE_OUT_STAGES * PIPE_TILE_FLOATS;
        const bool landed = MBAR_WAIT(&full[s], (k / PIPE_STAGES) & 1);  // every consumer sees the load done
        if (storer) {
            // Tiles 0..k-1 are committed; the store of tile k - 2 last read
            // the output stage tile k writes: wait until at most 1 is pending.
            bulk_wait_group_read<PIPE_OUT_STAGES - 1>();
            current = landed ? tile_of[s] : ntiles;  // the storer decides for all: nobody waits alone
        }
        named_barrier_sync<1, PIPE_CONSUMERS>();
        const uint32_t tile = current;
        if (tile == ntiles) break;
        transpose_tile(in_stage + s * PIPE_TILE_FLOATS, out, tid);
        __syncwarp();
        if (tid % 32 == 0) mbar_arrive(&empty[s]);  // this warp has read stage s
        fence_proxy_async_shared();
        named_barrier_sync<1, PIPE_CONSUMERS>();  // the output stage is complete (and `current` read)
        if (storer) {
            tile_position(tile, tiles_r, tiles_c, band, &tr, &tc);
            store_transposed(&out_map, (int32_t)(tc * PIPE_COLS), (int32_t)(tr * PIPE_ROWS), out);
            bulk_commit_group();
        }
    }
    if (storer) bulk_wait_group<0>();  // every store complete before the block ends (.read would do)
}

static size_t pipelined_smem(void) {
    return tma_smem_bytes((size_t)(PIPE_STAGES + PIPE_OUT_STAGES) * PIPE_TILE_FLOATS * 4, 1024);
}

static void launch_pipelined(const Transpose* t, uint32_t band) {
    const int threads = 32 + PIPE_CONSUMERS;
    CUDA_CHECK(cudaMemsetAsync(t->counter, 0, sizeof *t->counter, t->s));
    tma_pipelined<<<persistent_grid((const void*)tma_pipelined, threads, pipelined_smem()), threads,
                    pipelined_smem(), t->s>>>(t->in_tile, t->out_tile, t->rows, t->cols, band, t->counter);
}
