// 06_transpose: out[c][r] = in[r][c] for an fp32 matrix, from the naive
// kernel to memory speed: what the TMA adds, what the swizzle adds, and what
// it takes to match cuBLAS. Parts, each checked on every word of a poisoned,
// guard-framed output, then timed against cudaMemcpy: 1 naive, 2 smem_padded
// (the 32 x 33 tile), 3 tma_naive (a box in, transposed in shared memory, a
// box out), 4 tma_swizzle (128B, via 05_swizzle/swizzle.h), 5
// tma_swizzle_batched, 6 tma_pipelined (a persistent ring, 4 x 4 register
// blocks, tile order), 6b ldg_blocked (part 6 with LDG/STG, no TMA), 7
// cublas_sgeam. Each also runs on an edge matrix whose sizes are no multiple
// of any box (checked, not timed).
// New since step 05: 06_transpose/named_barrier.cuh (bar.sync for some warps).
// Part 7 links cuBLAS from the CUDA toolkit (06_transpose/check.py: build).
// SASS: make sass-06. Counters: make profile-06. Lesson: 06_transpose/README.md.
//
// Run: make run-06 [ARGS="--rows 4099 --cols 3001"], make check-06.
#include "common/cublas_check.h"
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "04_tma_store/tma_store.cuh"
#include "05_swizzle/swizzle.h"
#include "06_transpose/named_barrier.cuh"

#define TILE 32   // a 32 x 32 fp32 box: 128-byte rows, exactly the 128B swizzle span
#define FRAME 32  // guard rows and columns around the output (128 B: its rows stay 128-byte aligned)

// ---- The problem (host): the data, the check, one part -----------------------
// Element (r, c) of the input holds a positive normal float whose bits code
// its position r * cols + c, one-to-one, so a wrong index cannot pass, and
// neighbours' codes are far apart. Padding at the end of the input's rows
// holds PAD_WORD (-1.0f), which no element holds. Every code is a normal
// float: cuBLAS computes 1 * a + 0 and returns each one bit for bit.
#define CODE_BASE 0x00800000u   // the smallest positive normal float
#define CODE_RANGE 0x7F000000u  // the positive normal floats: CODE_BASE .. 0x7F7FFFFF
#define CODE_MUL 2654435761u    // odd, and not a multiple of 127: invertible modulo 2^24 * 127
#define PAD_WORD 0xBF800000u

static uint32_t input_word(uint64_t i) {
    return CODE_BASE + (uint32_t)(i * CODE_MUL % CODE_RANGE);
}

// The position whose code `w` is, or UINT64_MAX if w is no element's code.
static uint64_t input_position(uint32_t w) {
    static uint64_t inverse = 0;  // CODE_MUL^-1 modulo CODE_RANGE (extended Euclid, once)
    if (!inverse) {
        int64_t r0 = CODE_RANGE, r1 = CODE_MUL % CODE_RANGE, t0 = 0, t1 = 1;
        while (r1) {
            const int64_t q = r0 / r1, r2 = r0 - q * r1, t2 = t0 - q * t1;
            r0 = r1, r1 = r2, t0 = t1, t1 = t2;
        }
        inverse = (uint64_t)((t0 % (int64_t)CODE_RANGE + CODE_RANGE) % CODE_RANGE);
    }
    if (w < CODE_BASE || w - CODE_BASE >= CODE_RANGE) return UINT64_MAX;
    return (uint64_t)(w - CODE_BASE) * inverse % CODE_RANGE;
}

typedef struct {
    const Cli* cli;  // NULL: the edge matrix, checked and not timed
    const char* prefix;
    cudaStream_t s;
    uint32_t rows, cols, ld_in, ld_out;  // ld: elements from one row to the next
    const float* in;
    float *out, *interior;  // the framed output, and where its matrix starts
    size_t framed_words;
    uint32_t* want;  // the framed output as it must come out
    CUtensorMap in_box, out_box, in_swizzled, out_swizzled, in_tile, out_tile;
    unsigned int* counter;
} Transpose;

// The output buffer: cols rows of ld_out elements, FRAME guard rows above and
// below, FRAME guard columns left and right; ld_out keeps rows 128-byte aligned.
static uint32_t output_ld(uint32_t rows) {
    return (rows + TILE - 1) / TILE * TILE + 2 * FRAME;
}

// Why the wrong words are wrong: a moved element, a word never written, the
// load's zero fill, the input's padding, or a write outside the matrix.
static void explain_wrong(const uint32_t* got, const Transpose* t) {
    size_t outside = 0, unwritten = 0, zero = 0, padding = 0, moved = 0, other = 0;
    const uint64_t n = (uint64_t)t->rows * t->cols;
    for (size_t k = 0; k < t->framed_words; ++k) {
        if (got[k] == t->want[k]) continue;
        const size_t row = k / t->ld_out, col = k % t->ld_out;
        if (row < FRAME || row >= FRAME + t->cols || col < FRAME || col >= FRAME + t->rows)
            ++outside;
        else if (got[k] == POISON_WORD)
            ++unwritten;
        else if (got[k] == 0)
            ++zero;
        else if (got[k] == PAD_WORD)
            ++padding;
        else if (input_position(got[k]) < n)
            ++moved;
        else
            ++other;
    }
    printf(
        "       inside the matrix: %zu moved (another element's value), %zu never written, %zu zero "
        "(out-of-bounds fill), %zu the input's row padding, %zu other; outside it: %zu written\n",
        moved, unwritten, zero, padding, other, outside);
}

// A TMA store writes whole 16-byte chunks: when a row of the output (the
// input's row count) does not end on a 16-byte boundary, the store also
// writes the rest of its last chunk, in the row's padding, with whatever the
// box holds there (the load's zero fill). Those words, and only those, may
// come out zero in a TMA part; they are counted and restored to poison, so
// that every other padding and frame word is still checked untouched.
static size_t tma_store_tail(uint32_t* got, const Transpose* t) {
    size_t written = 0;
    const uint32_t end = (t->rows + 3) / 4 * 4;  // the interior starts 16-byte aligned (FRAME)
    for (size_t c = 0; c < t->cols; ++c)
        for (uint32_t r = t->rows; r < end; ++r) {
            uint32_t* w = &got[(FRAME + c) * t->ld_out + FRAME + r];
            if (*w == 0) ++written, *w = POISON_WORD;
        }
    return written;
}

// Every word of the framed output: the transpose inside, poison (never
// written) in the frame and in the padding of each output row.
static size_t check_transposed(const char* name, const Transpose* t, bool tma_store) {
    uint32_t* got =
        (uint32_t*)read_back(t->out, t->framed_words, t->s);  // the harness's buffer: ours to edit
    const size_t tail = tma_store ? tma_store_tail(got, t) : 0;
    const size_t wrong = check_words(name, got, t->want, t->framed_words);
    if (wrong) explain_wrong(got, t);
    if (tail)
        printf(
            "note   %s: the TMA store also wrote %zu words past the matrix, each in the 16-byte chunk of a "
            "row's "
            "last element\n",
            name, tail);
    return wrong;
}

// One part: poison the framed output, launch, check, and (timed matrix only) time.
#define TRANSPOSE_PART(name, t, tma_store, ...)                                   \
    do {                                                                          \
        char name_[64];                                                           \
        snprintf(name_, sizeof name_, "%s%s", (t)->prefix, (name));               \
        poison_device((t)->out, (t)->framed_words * 4, (t)->s);                   \
        CHECK_THEN_TIME(name_, (t)->cli, (t)->s, 2.0 * 4 * (t)->rows * (t)->cols, \
                        check_transposed(name_, (t), (tma_store)), __VA_ARGS__);  \
    } while (0)

// ---- Indices shared by the kernels and the host's bank model ---------------
// Byte `offset` of a 128B-swizzled box that starts at shared address `base`:
// where it really is, as an offset from `base`. The formula takes the
// ABSOLUTE address (05_swizzle), so a box need not start at a 1024-byte
// boundary for this to be right.
static __host__ __device__ __forceinline__ uint32_t swizzled_offset(uint32_t base, uint32_t offset) {
    return swizzle_address(base + offset, SWIZZLE_MODE_128B) - base;
}

// The element index of (row, col) in a swizzled 32 x 32 fp32 box at `base`.
static __host__ __device__ __forceinline__ uint32_t swizzled_element(uint32_t base, uint32_t row,
                                                                     uint32_t col) {
    return swizzled_offset(base, (row * TILE + col) * 4) / 4;
}

// Part 6 moves a tile of PIPE_ROWS x PIPE_COLS elements as blocks of 4 x 4;
// block (a, b) holds rows 4a..4a+3 and columns 4b..4b+3, read as four 16-byte
// chunks and written as four. A quarter warp (8 threads) is served in one
// wavefront when its 8 chunks lie in 8 different positions of 8 (16 bytes x
// 8 = the 32 banks). Work item g takes i = g % 8, d = g / 8 % 8 and
// b = 8 * hi_b + i, a = 8 * hi_a + (i ^ d): within a quarter warp the b are
// 8 consecutive values and the a 8 different ones, on both sides of the
// transpose. With a 128B-swizzled box the position is also XORed with the
// row (the lesson shows it stays one-to-one); with an unswizzled box whose
// rows are a multiple of 128 B it is the chunk index mod 8. The plain
// mapping a = g / 8 gives the writes of a quarter warp one a: conflicts.
static __host__ __device__ __forceinline__ void block_of_thread(uint32_t g, uint32_t blocks_a, uint32_t* a,
                                                                uint32_t* b) {
    const uint32_t i = g % 8, d = g / 8 % 8, hi = g / 64, groups_a = blocks_a / 8;
    *b = hi / groups_a * 8 + i;
    *a = hi % groups_a * 8 + (i ^ d);
}

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
    SHADOW_WROTE(t, TILE * TILE * 4);  // (the shadow build: these writes need the fence)
    fence_proxy_async_shared();        // every writing thread, before the barrier
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
    SHADOW_WROTE(t, BATCH * TILE * TILE * 4);
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
        SHADOW_WROTE(out, PIPE_TILE_FLOATS * 4);
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

// ---- Part 7: cuBLAS's transpose, the library reference ------------------------
// C = 1 * op(A) + 0 * B in cuBLAS's column-major terms: our row-major input
// is a cols x rows column-major A (lda = ld_in), op = transpose; the output
// C is rows x cols column-major (ldc = ld_out). B is C itself, the in-place
// form cuBLAS allows, and is not read with beta = 0: C is poisoned (NaN), so
// a read would show in the check.
static void cublas_sgeam(const Transpose* t, cublasHandle_t h) {
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)t->rows, (int)t->cols, &one, t->in,
                             (int)t->ld_in, &zero, t->interior, (int)t->ld_out, t->interior, (int)t->ld_out));
}

// ---- Every part on one matrix ------------------------------------------------
static void run_parts(const Transpose* t, cublasHandle_t h, uint32_t band) {
    TRANSPOSE_PART("naive", t, false, launch_naive(t));
    TRANSPOSE_PART("smem_padded", t, false, launch_smem_padded(t));
    TRANSPOSE_PART("tma_naive", t, true, launch_box_per_block(t, false));
    TRANSPOSE_PART("tma_swizzle", t, true, launch_box_per_block(t, true));
    TRANSPOSE_PART("tma_swizzle_batched", t, true, launch_batched(t));
    TRANSPOSE_PART("ldg_blocked", t, false, launch_ldg_blocked(t, band));
    TRANSPOSE_PART("tma_pipelined", t, true, launch_pipelined(t, band));
    if (t->cli)  // the tile order's effect, timed: plain row-major order
        TRANSPOSE_PART("tma_pipelined_rowmajor", t, true, launch_pipelined(t, 1));
    TRANSPOSE_PART("cublas_sgeam", t, false, cublas_sgeam(t, h));
}

// One matrix: data, expected output, tensor maps, the parts.
static void part_matrix(const char* prefix, uint32_t rows, uint32_t cols, uint32_t ld_in, uint32_t band,
                        const Cli* cli, cudaStream_t s, cublasHandle_t h) {
    Transpose t;
    memset(&t, 0, sizeof t);
    t.cli = cli, t.prefix = prefix, t.s = s;
    t.rows = rows, t.cols = cols, t.ld_in = ld_in, t.ld_out = output_ld(rows);
    t.framed_words = (size_t)(cols + 2 * FRAME) * t.ld_out;
    const size_t in_words = (size_t)rows * ld_in;
    uint32_t* h_in = (uint32_t*)xmalloc(in_words * 4, "the input matrix");
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < ld_in; ++c)
            h_in[r * ld_in + c] = c < cols ? input_word(r * cols + c) : PAD_WORD;
    t.want = (uint32_t*)xmalloc(t.framed_words * 4, "the expected output");
    for (size_t k = 0; k < t.framed_words; ++k) t.want[k] = POISON_WORD;
    for (size_t c = 0; c < cols; ++c)
        for (size_t r = 0; r < rows; ++r)
            t.want[(FRAME + c) * t.ld_out + FRAME + r] = input_word(r * cols + c);
    float* in = NULL;
    CUDA_CHECK(cudaMalloc((void**)&in, in_words * 4));
    CUDA_CHECK(cudaMalloc((void**)&t.out, t.framed_words * 4));
    CUDA_CHECK(cudaMalloc((void**)&t.counter, sizeof *t.counter));
    CUDA_CHECK(cudaMemcpyAsync(in, h_in, in_words * 4, cudaMemcpyHostToDevice, s));
    t.in = in;
    t.interior = t.out + (size_t)FRAME * t.ld_out + FRAME;
    // Input map {cols, rows}, output map {rows, cols}: the store's
    // coordinates are the load's, swapped. Only the interior is described, so
    // a store clipped at the matrix's edge cannot reach the frame.
    const CUtensorMapDataType f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    const CUtensorMapSwizzle none = CU_TENSOR_MAP_SWIZZLE_NONE, sw128 = CU_TENSOR_MAP_SWIZZLE_128B;
    TensorMapSpec in_spec = tensor_spec_2d(f32, in, rows, cols, (uint64_t)ld_in * 4, TILE, TILE, none);
    TensorMapSpec out_spec =
        tensor_spec_2d(f32, t.interior, cols, rows, (uint64_t)t.ld_out * 4, TILE, TILE, none);
    t.in_box = make_tensor_map(&in_spec, "the input (--rows, --cols, --ld)");
    t.out_box = make_tensor_map(&out_spec, "the framed output");
    in_spec.swizzle = out_spec.swizzle = sw128;
    t.in_swizzled = make_tensor_map(&in_spec, "the input, swizzled");
    t.out_swizzled = make_tensor_map(&out_spec, "the framed output, swizzled");
    in_spec.box[0] = PIPE_COLS, in_spec.box[1] = PIPE_ROWS;  // the pipelined kernel's tiles, one box each
    in_spec.swizzle = PIPE_IN_SWIZZLED ? sw128 : none;
    out_spec.box[0] = PIPE_ROWS, out_spec.box[1] = PIPE_COLS;
    out_spec.swizzle = PIPE_OUT_SWIZZLED ? sw128 : none;
    t.in_tile = make_tensor_map(&in_spec, "the input in PIPE_ROWS x PIPE_COLS tiles");
    t.out_tile = make_tensor_map(&out_spec, "the framed output in PIPE_COLS x PIPE_ROWS tiles");
    if (cli) measure_memcpy_reference(t.out, in, (size_t)rows * cols * 4, cli, s);
    run_parts(&t, h, band);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(t.out));
    CUDA_CHECK(cudaFree(t.counter));
    free(h_in);
    free(t.want);
}

// ---- On the host: the index formulas and the bank model ---------------------
// The transpose write-up this step follows wrote the 128B swizzle of a
// 32 x 32 fp32 box in 16-byte units: i16 the chunk of the box an element is
// in, y16 its 128-byte line, x16 the chunk within the line; the swizzle moves
// chunk x16 to x16 ^ (y16 % 8). Checked here against swizzle.h's element
// index for every element, at three 1024-byte-aligned bases.
static uint32_t writeup_index(uint32_t y, uint32_t x) {
    const uint32_t i16 = (y * TILE + x) * 4 / 16, y16 = i16 / 8, x16 = i16 % 8;
    return y16 * TILE + (x16 ^ (y16 % 8)) * 4 + x % 4;
}

static void check_writeup_index(void) {
    uint32_t got[3 * TILE * TILE], want[3 * TILE * TILE];
    for (uint32_t k = 0; k < 3; ++k)
        for (uint32_t e = 0; e < TILE * TILE; ++e) {
            got[k * TILE * TILE + e] = writeup_index(e / TILE, e % TILE);
            want[k * TILE * TILE + e] =
                swizzle_element(1024 * k, SWIZZLE_MODE_128B, e / TILE, e % TILE, 4, TILE * 4);
        }
    check_words("writeup_index_is_swizzle_h", got, want, 3 * TILE * TILE);
}

// Shared-memory wavefronts of one warp instruction: lane l accesses `bytes`
// (4 or 16) at byte address addr[l]. The 32 banks serve one 4-byte word
// each per wavefront (one word to many lanes is a broadcast); a 16-byte
// access is served a quarter warp (8 lanes, 128 B) at a time, so 4 is its
// conflict-free minimum.
static int wavefronts(const uint32_t* addr, uint32_t bytes) {
    const uint32_t group = bytes == 16 ? 8 : 32;
    int total = 0;
    for (uint32_t g0 = 0; g0 < 32; g0 += group) {
        int worst = 0;
        for (uint32_t bank = 0; bank < 32; ++bank) {
            uint32_t words[32 * 4];
            int n = 0;
            for (uint32_t l = g0; l < g0 + group; ++l)
                for (uint32_t w = addr[l] / 4; w < (addr[l] + bytes) / 4; ++w) {
                    int seen = w % 32 != bank;
                    for (int i = 0; i < n && !seen; ++i) seen = words[i] == w;
                    if (!seen) words[n++] = w;
                }
            worst = n > worst ? n : worst;
        }
        total += worst;
    }
    return total;
}

// The model's prediction for the first warp of each kernel, from the same
// index functions the kernels use (boxes at a 1024-byte-aligned base 0; the
// output box 4 KiB after the input box).
static void print_bank_model(void) {
    uint32_t ld[32], st[32];
    for (uint32_t l = 0; l < 32; ++l) {  // smem_padded: row in, column out, 33-word rows
        ld[l] = (l * (TILE + 1) + 0) * 4;
        st[l] = (0 * (TILE + 1) + l) * 4;
    }
    printf("note   bank model: %-22s STS %2d, LDS %2d wavefronts per warp instruction\n", "smem_padded",
           wavefronts(st, 4), wavefronts(ld, 4));
    for (int swizzled = 0; swizzled < 2; ++swizzled) {
        const uint32_t a = 0, t = TILE * TILE * 4;  // warp 0: i = 0, j = lane
        for (uint32_t l = 0; l < 32; ++l) {
            ld[l] = a + 4 * (swizzled ? swizzled_element(a, 0, l) : l);
            st[l] = t + 4 * (swizzled ? swizzled_element(t, l, 0) : l * TILE);
        }
        printf("note   bank model: %-22s LDS %2d, STS %2d wavefronts per warp instruction\n",
               swizzled ? "tma_swizzle(_batched)" : "tma_naive", wavefronts(ld, 4), wavefronts(st, 4));
    }
    // Consumer warp 0's first 32 work items: block_of_thread's mapping, then
    // the plain one (a = g / 8) it replaces.
    const uint32_t src = 0, dst = PIPE_STAGES * PIPE_TILE_FLOATS * 4;
    for (int diagonal = 1; diagonal >= 0; --diagonal) {
        for (uint32_t l = 0; l < 32; ++l) {
            uint32_t a = l / 8, b = l % 8;
            if (diagonal) block_of_thread(l, PIPE_ROWS / 4, &a, &b);
            ld[l] = src + chunk_offset(src, 4 * a, b, PIPE_COLS, PIPE_IN_SWIZZLED);
            st[l] = dst + chunk_offset(dst, 4 * b, a, PIPE_ROWS, PIPE_OUT_SWIZZLED);
        }
        printf(
            "note   bank model: %-22s LDS.128 %2d, STS.128 %2d wavefronts per warp instruction (4: no "
            "conflict)\n",
            diagonal ? "tma_pipelined" : "the same, a = g / 8", wavefronts(ld, 16), wavefronts(st, 16));
    }
    // ldg_blocked's warp 0: its first STS.128 (load j = 0) and first LDS.128 (block n = 0, row 4a).
    for (uint32_t l = 0; l < 32; ++l) {
        st[l] = 16 * ldg_chunk(l / LDG_ROW_CHUNKS, l % LDG_ROW_CHUNKS);
        ld[l] = 16 * ldg_chunk(4 * (l % (PIPE_ROWS / 4)), l / (PIPE_ROWS / 4));
    }
    printf(
        "note   bank model: %-22s STS.128 %2d, LDS.128 %2d wavefronts per warp instruction (4: no "
        "conflict)\n",
        "ldg_blocked", wavefronts(st, 16), wavefronts(ld, 16));
}

// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_LD, OPT_EDGE_ROWS, OPT_EDGE_COLS, OPT_BAND, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--rows", "R", "rows of the timed matrix (fp32)", 1, 32768, 16384, 1031},
    {"--cols", "C", "columns of the timed matrix", 1, 32768, 16384, 2053},
    {"--ld", "L", "elements from one input row to the next (0: --cols rounded up to 4, the 16-byte rule)", 0,
     65536, 0, 0},
    {"--edge-rows", "R", "rows of the edge matrix (checked, not timed)", 1, 32768, 4099, 259},
    {"--edge-cols", "C", "columns of the edge matrix", 1, 32768, 3001, 131},
    {"--band", "B", "tma_pipelined's and ldg_blocked's tile order: bands of B tile rows (1 = row-major)", 1,
     1024, 1024, 1024},
};
static uint32_t padded_ld(uint32_t cols) {
    return (cols + 3) / 4 * 4;
}

// Every rule before the GPU is touched, and the host memory.
static void check_arguments(const Cli* cli) {
    const uint32_t rows = (uint32_t)cli->value[OPT_ROWS], cols = (uint32_t)cli->value[OPT_COLS];
    const uint32_t ld = cli->value[OPT_LD] ? (uint32_t)cli->value[OPT_LD] : padded_ld(cols);
    char what[96];
    snprintf(what, sizeof what, "--rows %u --cols %u --ld %u", rows, cols, ld);
    if (ld < cols) die_usage("%s: --ld must be at least --cols, or one row would overlap the next", what);
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, (const void*)256, rows, cols,
                                              (uint64_t)ld * 4, TILE, TILE, CU_TENSOR_MAP_SWIZZLE_128B);
    require_tensor_rules(&spec, what);
    // The input, the expected output and the pinned readback of the larger matrix.
    const uint32_t er = (uint32_t)cli->value[OPT_EDGE_ROWS], ec = (uint32_t)cli->value[OPT_EDGE_COLS];
    const size_t big = (size_t)rows * ld + 2 * (size_t)(cols + 2 * FRAME) * output_ld(rows);
    const size_t edge = (size_t)er * padded_ld(ec) + 2 * (size_t)(ec + 2 * FRAME) * output_ld(er);
    require_host_memory(what, 4 * big);  // never both at once: each names its own options
    snprintf(what, sizeof what, "--edge-rows %u --edge-cols %u", er, ec);
    require_host_memory(what, 4 * edge);
}

static const CliSpec kCli = {
    "06_transpose: an fp32 matrix transpose, from the naive kernel through TMA, swizzle,\n"
    "batching and a pipeline to cuBLAS, each checked on every element.",
    CLI_REPS, kOptions, NUM_OPTS, check_arguments};

// Device memory one matrix takes: the input and the framed output.
static size_t matrix_bytes(uint32_t rows, uint32_t cols, uint32_t ld) {
    return 4 * ((size_t)rows * ld + (size_t)(cols + 2 * FRAME) * output_ld(rows));
}

// The deterministic preamble: header, problem line, the host-side checks.
static void print_problem(uint32_t rows, uint32_t cols, uint32_t ld, uint32_t er, uint32_t ec) {
    print_header("06_transpose", "an fp32 transpose, from naive to TMA + swizzle + pipeline, against cuBLAS");
    printf(
        "problem: timed %u x %u fp32 (row stride %u elements), edge %u x %u; boxes 32 x 32, pipelined tiles "
        "%d x %d\n",
        rows, cols, ld, er, ec, PIPE_ROWS, PIPE_COLS);
    check_writeup_index();
    print_bank_model();
}

static int kernel_registers(const void* kernel) {
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    return attr.numRegs;
}

// After the parts: how the pipeline and its plain twin launched.
static void report_pipeline(uint32_t band) {
    record_gpu_line("tma_pipelined: %d blocks per SM of %d threads, %d + %d stages of %d KiB, band %u",
                    blocks_per_sm((const void*)tma_pipelined, 32 + PIPE_CONSUMERS, pipelined_smem()),
                    32 + PIPE_CONSUMERS, PIPE_STAGES, PIPE_OUT_STAGES, PIPE_TILE_FLOATS * 4 >> 10, band);
    record_gpu_line(
        "ldg_blocked: %d blocks per SM (%d fit) of %d threads, %d regs, 2 x %d KiB in registers + %d KiB "
        "shared per block, band %u",
        LDG_BLOCKS_PER_SM, blocks_per_sm((const void*)ldg_blocked, LDG_THREADS, 0), LDG_THREADS,
        kernel_registers((const void*)ldg_blocked), PIPE_TILE_FLOATS * 4 >> 10, PIPE_TILE_FLOATS * 4 >> 10,
        band);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint32_t rows = (uint32_t)cli.value[OPT_ROWS], cols = (uint32_t)cli.value[OPT_COLS];
    const uint32_t ld = cli.value[OPT_LD] ? (uint32_t)cli.value[OPT_LD] : padded_ld(cols);
    const uint32_t er = (uint32_t)cli.value[OPT_EDGE_ROWS], ec = (uint32_t)cli.value[OPT_EDGE_COLS];
    const uint32_t band = (uint32_t)cli.value[OPT_BAND];
    require_hopper();
    require_device_memory("--rows, --cols, --ld", matrix_bytes(rows, cols, ld));
    require_device_memory("--edge-rows, --edge-cols", matrix_bytes(er, ec, padded_ld(ec)));
    print_problem(rows, cols, ld, er, ec);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, s));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)tma_pipelined, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)pipelined_smem()));
    part_matrix("edge_", er, ec, padded_ld(ec), band, NULL, s, h);
    part_matrix("", rows, cols, ld, band, &cli, s, h);
    report_pipeline(band);
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
