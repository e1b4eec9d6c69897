// 02_cp_async: Ampere's asynchronous copies: groups, zero-fill, pipelines.
//
// cp.async copies global -> shared without passing through registers and
// without making the thread wait; the thread decides when to wait, and for
// which copies. Parts: the staged copy of step 01 filled five ways (LDG+STS,
// cp.async .ca 4/8/16, .cg 16); four groups consumed oldest first; the tail
// of an array (zero-fill and ignore-src); pipelines of 1, 2 and N stages for
// a copy and for real arithmetic, and plain loads as deep as N stages; the
// N-stage copy with persistent blocks.
// New since step 01: 02_cp_async/cp_async.cuh (the cp.async wrappers, and
// smem_u32/gmem_u64, which every later PTX header uses). SASS: make sass-02.
// Lesson: 02_cp_async/README.md.
//
// Run: make run-02 [ARGS="--stages 3" | "--chunk 16"],
//      make check-02, make sanitize-02.
#include <math.h>

#include "01_memcpy_baseline/occupancy.cuh"
#include "02_cp_async/cp_async.cuh"

#define THREADS 256            // threads per block, every kernel
#define VEC 4                  // float4 per thread per tile
#define TILE4 (VEC * THREADS)  // float4 per tile: 1024 = 16 KiB
#define MAX_DEGREE 256

// What every part shares: the seeded input (device and host) and one output.
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    size_t bytes, ntiles;  // the buffers, in bytes and in 16 KiB tiles
    const float4* in;
    float4* out;           // poisoned before each check
    const uint32_t* want;  // host: the input, which a copy must reproduce
} Copy;

#define COPY_PART(c, name, ...) \
    CHECK_AND_TIME(name, (c)->cli, (c)->s, (c)->out, (c)->want, (c)->bytes / 4, 2.0 * (c)->bytes, __VA_ARGS__)

// ---- Part 1: step 01's staged copy, five ways to fill the tile ------------
// Each thread fills VEC float4 of the tile, then (after the barrier) copies
// its partner's (t ^ 32, another warp's) elements to global memory, so data
// crosses threads as in every tiled kernel. One tile per block.
enum { LDG_STS, CA4, CA8, CA16, CG16 };

template <int METHOD>
static __device__ __forceinline__ void fill_element(float4* dst, const float4* src) {
    if (METHOD == CA4) {  // four 4-byte copies: LDGSTS.E x4
        for (int w = 0; w < 4; ++w) cp_async_ca<4>((float*)dst + w, (const float*)src + w);
    } else if (METHOD == CA8) {  // two 8-byte copies: LDGSTS.E.64 x2
        for (int w = 0; w < 2; ++w) cp_async_ca<8>((float2*)dst + w, (const float2*)src + w);
    } else if (METHOD == CA16) {  // one 16-byte copy through L1: LDGSTS.E.128
        cp_async_ca<16>(dst, src);
    } else {  // one 16-byte copy, L2 only: LDGSTS.E.BYPASS.128
        cp_async_cg16(dst, src);
    }
}

template <int METHOD>
__global__ void __launch_bounds__(THREADS) staged(const float4* __restrict__ in, float4* __restrict__ out) {
    __shared__ float4 tile[TILE4];  // [VEC][THREADS] float4 = 16 KiB
    const unsigned t = threadIdx.x, partner = t ^ 32;
    const float4* src = in + (size_t)blockIdx.x * TILE4;
    if (METHOD == LDG_STS) {
        float4 r[VEC];  // the data passes through 16 registers
#pragma unroll
        for (int j = 0; j < VEC; ++j) r[j] = src[j * THREADS + t];
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            tile[j * THREADS + t] = r[j];
            SHADOW_WROTE(&tile[j * THREADS + t], sizeof(float4));  // (the shadow build's race rule)
        }
    } else {
#pragma unroll
        for (int j = 0; j < VEC; ++j) fill_element<METHOD>(&tile[j * THREADS + t], &src[j * THREADS + t]);
        cp_async_commit_group();
        cp_async_wait_group<0>();  // this thread's copies have landed...
    }
    __syncthreads();  // ...and now everyone's: partners may be read
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
        SHADOW_READ(&tile[j * THREADS + partner], sizeof(float4));  // (the shadow build's cp.async rules)
        out[(size_t)blockIdx.x * TILE4 + j * THREADS + partner] = tile[j * THREADS + partner];
    }
}

template <int METHOD>
static void staged_part(const Copy* c, const char* name) {
    COPY_PART(c, name, staged<METHOD><<<(unsigned)c->ntiles, THREADS, 0, c->s>>>(c->in, c->out));
}

static void part_staged(const Copy* c) {
    staged_part<LDG_STS>(c, "staged_ldg_sts");
    staged_part<CA4>(c, "staged_ca4");
    staged_part<CA8>(c, "staged_ca8");
    staged_part<CA16>(c, "staged_ca16");
    staged_part<CG16>(c, "staged_cg16");
}

// ---- Part 2: groups, consumed oldest first --------------------------------
// Each tile is copied as VEC = 4 groups (group g = row g of the tile, one
// 16-byte copy per thread). Then row g is consumed after
// cp.async.wait_group (3 - g): "at most 3 - g of my newest groups may still be
// pending", i.e. groups 0..g are complete. The __syncthreads() after each wait
// extends "my copies landed" to "everyone's copies landed".
// stamps (block 0, thread 0): clock64 after each wait, from before the issue.
static __device__ __forceinline__ void consume_row(const float4* tile, float4* out, int row,
                                                   unsigned partner) {
    __syncthreads();
    SHADOW_READ(&tile[row * THREADS + partner], sizeof(float4));
    out[row * THREADS + partner] = tile[row * THREADS + partner];
}

__global__ void __launch_bounds__(THREADS)
    groups(const float4* __restrict__ in, float4* __restrict__ out, long long* stamps) {
    __shared__ float4 tile[TILE4];  // [4 groups][THREADS] float4
    const unsigned t = threadIdx.x, partner = t ^ 32;
    const size_t b = blockIdx.x;
    const long long t0 = clock64();
#pragma unroll
    for (int g = 0; g < VEC; ++g) {
        cp_async_cg16(&tile[g * THREADS + t], &in[b * TILE4 + g * THREADS + t]);
        cp_async_commit_group();  // one group per row
    }
    float4* dst = out + b * TILE4;
    long long when[4];
    cp_async_wait_group<3>();  // group 0 complete; 1, 2, 3 may be in flight
    when[0] = clock64();
    consume_row(tile, dst, 0, partner);
    cp_async_wait_group<2>();  // groups 0, 1 complete
    when[1] = clock64();
    consume_row(tile, dst, 1, partner);
    cp_async_wait_group<1>();  // groups 0..2 complete
    when[2] = clock64();
    consume_row(tile, dst, 2, partner);
    cp_async_wait_group<0>();  // all complete
    when[3] = clock64();
    consume_row(tile, dst, 3, partner);
    if (stamps && b == 0 && t == 0)
        for (int g = 0; g < 4; ++g) stamps[g] = when[g] - t0;
}

static void part_groups(const Copy* c) {
    long long* d_stamps = NULL;
    long long stamps[4];
    CUDA_CHECK(cudaMalloc((void**)&d_stamps, sizeof stamps));
    COPY_PART(c, "groups_oldest_first",
              groups<<<(unsigned)c->ntiles, THREADS, 0, c->s>>>(c->in, c->out, d_stamps));
    CUDA_CHECK(cudaMemcpyAsync(stamps, d_stamps, sizeof stamps, cudaMemcpyDeviceToHost, c->s));
    CUDA_CHECK(cudaStreamSynchronize(c->s));
    record_time_line(
        "groups (block 0): wait_group 3 returned after %lld cycles, 2 after %lld, 1 after %lld, "
        "0 after %lld",
        stamps[0], stamps[1], stamps[2], stamps[3]);
    CUDA_CHECK(cudaFree(d_stamps));
}

// ---- Part 3: the tail of an array of n floats ------------------------------
// Chunk c covers floats [4c, 4c + 4). Whole chunks: a normal 16-byte copy.
// The chunk that straddles n: the src-size form reads only the 4 * (n - 4c)
// bytes that exist and zero-fills the rest. Chunks wholly past n: the
// ignore-src form reads nothing and writes 16 zero bytes. Shared memory is
// poisoned first, so a copy that did not happen shows as poison; a read past
// the end shows as the guard words the host put after the array.
__global__ void __launch_bounds__(THREADS) tail_copy(const float* __restrict__ in, size_t n, float4* out) {
    __shared__ float4 slot[THREADS];
    const unsigned t = threadIdx.x;
    const size_t c = (size_t)blockIdx.x * THREADS + t;
    const float poison = __uint_as_float(POISON_WORD);
    slot[t] = make_float4(poison, poison, poison, poison);
    __syncthreads();  // the poison is in place before any copy can land
    const size_t first = 4 * c;
    if (first + 4 <= n) {
        cp_async_cg16(&slot[t], in + first);
    } else if (first < n) {
        cp_async_cg16_zfill(&slot[t], in + first, (uint32_t)(4 * (n - first)));
    } else {
        cp_async_cg16_ignore_src(&slot[t], in, 1);  // source never read; `in` just keeps it valid
    }
    cp_async_wait_all();
    out[c] = slot[t];  // each thread reads only its own slot: its own wait suffices
}

// The array sits in a buffer followed by GUARD words that are neither data
// nor zero: a copy that read past element n - 1 would bring them in.
static void part_tail(const Copy* c, size_t n) {
    enum { GUARD = 64 };
    // One block more than the data needs, so the ignore-src path always runs.
    const size_t chunks = (n + 3) / 4, blocks = chunks / THREADS + 1;
    const size_t padded = blocks * THREADS * 4;  // floats the kernel writes
    float* h_in = (float*)xmalloc((n + GUARD) * sizeof(float), "the tail array");
    uint32_t* want = (uint32_t*)xmalloc(padded * sizeof(uint32_t), "the tail's expected output");
    fill_seeded_floats(h_in, n, c->cli->seed);
    for (int g = 0; g < GUARD; ++g) h_in[n + g] = 12345.0f;  // guard: not data, not zero
    // Expected: the data, then zeros (src-size fill of the straddling chunk),
    // then zeros (ignore-src chunks).
    memcpy(want, h_in, n * sizeof(float));
    memset(want + n, 0, (padded - n) * sizeof(uint32_t));
    float* d_in = NULL;
    float4* d_out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_in, (n + GUARD) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void**)&d_out, padded * sizeof(float)));
    CUDA_CHECK(cudaMemcpyAsync(d_in, h_in, (n + GUARD) * sizeof(float), cudaMemcpyHostToDevice, c->s));
    poison_device(d_out, padded * sizeof(float), c->s);
    tail_copy<<<(unsigned)blocks, THREADS, 0, c->s>>>(d_in, n, d_out);
    CHECK_LAUNCH();
    const uint32_t* out = (const uint32_t*)d_out;
    const size_t zfill_end = chunks * 4;
    check_device("tail_data", out, want, n, c->s);
    if (zfill_end > n)  // n % 4 != 0: a chunk straddles the end (not so for --tail a multiple of 4)
        check_device("tail_zfill", out + n, want + n, zfill_end - n, c->s);
    check_device("tail_ignore_src", out + zfill_end, want + zfill_end, padded - zfill_end, c->s);
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    free(h_in);
    free(want);
}

// ---- Part 4: pipelines, a copy and real arithmetic --------------------------
// Polynomial coefficients: c[k] = (-1)^k / (k + 2). Inputs lie in [-1, 1), so
// every intermediate stays small and finite.
__constant__ float c_coeff[MAX_DEGREE];

// The "real work" per element: `degree` fused multiply-adds (Horner's rule
// starting from x). degree 0 is the identity, so the same kernels are a pure
// copy. fmaf on the CPU and __fmaf_rn on the GPU both round once, correctly,
// so the results agree bit for bit.
static float poly_cpu(float x, int degree, const float* c) {
    float acc = x;
    for (int k = 0; k < degree; ++k) acc = fmaf(acc, x, c[k]);
    return acc;
}

static __device__ __forceinline__ float poly(float x, int degree) {
    float acc = x;
#pragma unroll 4
    for (int k = 0; k < degree; ++k) acc = __fmaf_rn(acc, x, c_coeff[k]);
    return acc;
}

// The same polynomial on a thread's VEC float4 at once, coefficient loop
// outside: 16 independent FMA chains per step instead of one. Each chain is a
// dependent sequence (acc feeds the next FMA, 4+ cycles apart), so with few
// warps per SM the independent chains are what keeps the FMA units busy.
// Per element the operations are exactly those of poly(): same bits.
static __device__ __forceinline__ void poly_vec(float4 (&v)[VEC], int degree) {
    float4 x[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) x[j] = v[j];
#pragma unroll 2
    for (int k = 0; k < degree; ++k) {
        const float c = c_coeff[k];
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            v[j].x = __fmaf_rn(v[j].x, x[j].x, c);
            v[j].y = __fmaf_rn(v[j].y, x[j].y, c);
            v[j].z = __fmaf_rn(v[j].z, x[j].z, c);
            v[j].w = __fmaf_rn(v[j].w, x[j].w, c);
        }
    }
}

// The trivially correct reference the pipelines are compared with: one
// thread per element, no shared memory. It is itself checked on the CPU.
__global__ void poly_reference(const float* __restrict__ in, float* __restrict__ out, size_t n, int degree) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = poly(in[i], degree);
}

// Block b handles `chunk` consecutive tiles from tile b * chunk (the last
// block fewer). Shared memory holds STAGES tiles. Prologue: issue the first
// STAGES - 1 tiles, one group each. Loop i: issue tile i + STAGES - 1 (into
// the stage tile i - 1 used), commit, then wait_group STAGES - 1: every group
// but the newest STAGES - 1 is complete, and that includes tile i's. A group
// is committed every time, even when there is no tile left to issue, so "one
// group per tile" keeps the count right to the end. STAGES = 1 is the
// single-stage version: issue, wait for everything, compute. A wait with
// wait_group STAGES (one too many pending) would return while tile i may
// still be in flight.
template <int STAGES>
static __device__ __forceinline__ void pipeline_tiles(float4* stage, const float4* __restrict__ in,
                                                      float4* __restrict__ out, size_t first, size_t mine,
                                                      int degree) {
    const unsigned t = threadIdx.x, partner = t ^ 32;
    for (int s = 0; s < STAGES - 1; ++s) {  // prologue
        if ((size_t)s < mine) {
            const float4* src = in + (first + s) * TILE4;
#pragma unroll
            for (int j = 0; j < VEC; ++j)
                cp_async_cg16(&stage[s * TILE4 + j * THREADS + t], &src[j * THREADS + t]);
        }
        cp_async_commit_group();
    }
    for (size_t i = 0; i < mine; ++i) {
        // LAB-BEGIN: issue tile i + STAGES - 1 (if there is one) into its stage, VEC 16-byte cp.async per thread (the prologue shows the shape)
        const size_t ahead = i + STAGES - 1;
        if (ahead < mine) {
            const float4* src = in + (first + ahead) * TILE4;
            float4* dst = stage + (ahead % STAGES) * TILE4;
#pragma unroll
            for (int j = 0; j < VEC; ++j) cp_async_cg16(&dst[j * THREADS + t], &src[j * THREADS + t]);
        }
        // LAB-END
        cp_async_commit_group();
        cp_async_wait_group<STAGES - 1>();
        __syncthreads();  // everyone's part of tile i has landed
        const float4* cur = stage + (i % STAGES) * TILE4;
        float4 v[VEC];
#pragma unroll
        for (int j = 0; j < VEC; ++j) {
            SHADOW_READ(&cur[j * THREADS + partner], sizeof(float4));  // (the shadow build's cp.async rules)
            v[j] = cur[j * THREADS + partner];
        }
        __syncthreads();  // everyone has read this stage: it may be refilled
        poly_vec(v, degree);
        float4* dst = out + (first + i) * TILE4;
#pragma unroll
        for (int j = 0; j < VEC; ++j) dst[j * THREADS + partner] = v[j];
    }
}

template <int STAGES>
__global__ void __launch_bounds__(THREADS) pipeline(const float4* __restrict__ in, float4* __restrict__ out,
                                                    size_t ntiles, size_t chunk, int degree) {
    extern __shared__ float4 stage[];         // [STAGES][VEC][THREADS] float4, 16 KiB per stage
    const size_t first = blockIdx.x * chunk;  // this block's first tile
    pipeline_tiles<STAGES>(stage, in, out, first, first < ntiles ? min(chunk, ntiles - first) : 0, degree);
}

// Persistent, one block per SM, but scheduled as the hardware schedules short
// blocks: each block takes the next unit of `chunk` tiles from a counter
// (reset to 0 before the launch) until none is left, so a block that runs
// ahead does more. Thread 0 asks for the NEXT unit as the current one starts
// and hands it over after it: the atomic's round trip (about a microsecond)
// overlaps the work instead of stalling the whole block between units. The
// barriers inside pipeline_tiles() guarantee everyone has read next_first
// before thread 0 overwrites it; the one after it publishes the new value.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    pipeline_dynamic(const float4* __restrict__ in, float4* __restrict__ out, size_t ntiles, size_t chunk,
                     unsigned int* next_unit) {
    extern __shared__ float4 stage[];
    __shared__ size_t next_first;
    if (threadIdx.x == 0) next_first = (size_t)atomicAdd(next_unit, 1u) * chunk;
    __syncthreads();
    for (;;) {
        const size_t first = next_first;
        unsigned int ticket = 0;
        if (threadIdx.x == 0) ticket = atomicAdd(next_unit, 1u);  // the unit after this one
        if (first >= ntiles) return;
        pipeline_tiles<STAGES>(stage, in, out, first, min(chunk, ntiles - first), 0);
        if (threadIdx.x == 0) next_first = (size_t)ticket * chunk;
        __syncthreads();
    }
}

// The same work staged through registers (step 01's staged_batched), for
// comparison: the VEC loads of a tile are in flight together, but the next
// tile's loads wait until this tile is computed and stored.
__global__ void __launch_bounds__(THREADS)
    regs_staged(const float4* __restrict__ in, float4* __restrict__ out, size_t ntiles, size_t chunk,
                int degree) {
    __shared__ float4 tile[TILE4];
    const unsigned t = threadIdx.x, partner = t ^ 32;
    const size_t first = blockIdx.x * chunk, last = min(first + chunk, ntiles);
    for (size_t b = first; b < last; ++b) {
        float4 r[VEC];
#pragma unroll
        for (int j = 0; j < VEC; ++j) r[j] = in[b * TILE4 + j * THREADS + t];
#pragma unroll
        for (int j = 0; j < VEC; ++j) tile[j * THREADS + t] = r[j];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < VEC; ++j) r[j] = tile[j * THREADS + partner];
        __syncthreads();  // everyone has read the tile: the next loads may land
        poly_vec(r, degree);
#pragma unroll
        for (int j = 0; j < VEC; ++j) out[b * TILE4 + j * THREADS + partner] = r[j];
    }
}

// The plain-load pipeline as deep as pipeline<STAGES>, the baseline of the
// *_Nstage lines: the same grid, block, shared memory and tiles per block,
// but the stages are registers. When tile i is stored to shared memory, the
// loads of tiles i+1..i+STAGES-1 are already issued: STAGES tiles in flight,
// as cp.async has at its wait. Tile i + STAGES is loaded into tile i's
// registers right after their store (ptxas puts it after the barrier, before
// the compute). A thread holds STAGES x VEC float4 (64 registers at 4
// stages). Registers cannot be indexed at run time, so the loop is unrolled
// STAGES times and tile i's slot, i % STAGES, is a constant. One 16 KiB tile
// of the shared memory is used; the rest keeps the block alone on its SM.
template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    regs_prefetch(const float4* __restrict__ in, float4* __restrict__ out, size_t ntiles, size_t chunk,
                  int degree) {
    extern __shared__ float4 tile[];  // [VEC][THREADS] float4 used
    const unsigned t = threadIdx.x, partner = t ^ 32;
    const size_t first = blockIdx.x * chunk, mine = first < ntiles ? min(chunk, ntiles - first) : 0;
    const float4* src = in + first * TILE4 + t;
    float4 r[STAGES][VEC];  // slot s holds the tiles i with i % STAGES == s
#pragma unroll
    for (int s = 0; s < STAGES; ++s)  // prologue: tiles 0..STAGES-1
        if ((size_t)s < mine)
#pragma unroll
            for (int j = 0; j < VEC; ++j) r[s][j] = src[s * TILE4 + j * THREADS];
    for (size_t i0 = 0; i0 < mine; i0 += STAGES) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            const size_t i = i0 + s, next = i + STAGES;
            if (i >= mine) break;
#pragma unroll
            for (int j = 0; j < VEC; ++j) tile[j * THREADS + t] = r[s][j];  // waits for tile i only
            if (next < mine)  // the registers just stored take tile i + STAGES
#pragma unroll
                for (int j = 0; j < VEC; ++j) r[s][j] = src[next * TILE4 + j * THREADS];
            __syncthreads();
            float4 v[VEC];
#pragma unroll
            for (int j = 0; j < VEC; ++j) v[j] = tile[j * THREADS + partner];
            __syncthreads();  // everyone has read the tile: the next stores may land
            poly_vec(v, degree);
            float4* dst = out + (first + i) * TILE4;
#pragma unroll
            for (int j = 0; j < VEC; ++j) dst[j * THREADS + partner] = v[j];
        }
    }
}

// The arithmetic alone: the same grid and the same polynomials per block, on
// values that stay in registers (each tile's results feed the next), no
// global traffic in the loop. One word per thread is stored at the end so the
// compiler must do all of it.
__global__ void __launch_bounds__(THREADS)
    arithmetic_only(const float4* __restrict__ in, float* __restrict__ sink, size_t ntiles, size_t chunk,
                    int degree) {
    const unsigned t = threadIdx.x;
    float4 v[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) v[j] = in[j * THREADS + t];
    const size_t first = blockIdx.x * chunk, last = min(first + chunk, ntiles);
    for (size_t b = first; b < last; ++b) poly_vec(v, degree);
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < VEC; ++j) s += v[j].x + v[j].y + v[j].z + v[j].w;
    sink[(size_t)blockIdx.x * THREADS + t] = s;
}

// Every pipeline version launches one block per SM (the regime of a tiled
// kernel with large tiles) with the same dynamic shared memory, enough for 4
// stages and more than half an SM's, so all run at the same occupancy.
typedef struct {
    size_t chunk, smem;
    int stages;
    const uint32_t* want_poly;  // host: the checked GPU reference's output
} Pipelines;

template <int STAGES>
static void pipeline_part(const Copy* c, const Pipelines* p, const char* name, size_t chunk, int degree) {
    const unsigned grid = (unsigned)((c->ntiles + chunk - 1) / chunk);
    CHECK_AND_TIME(name, c->cli, c->s, c->out, degree ? p->want_poly : c->want, c->bytes / 4, 2.0 * c->bytes,
                   pipeline<STAGES>
                   <<<grid, THREADS, p->smem, c->s>>>(c->in, c->out, c->ntiles, chunk, degree));
}

// The plain-load baseline of pipeline_part<STAGES>: the same grid, block,
// shared memory and chunk.
template <int STAGES>
static void regs_prefetch_part(const Copy* c, const Pipelines* p, const char* name, int degree) {
    const unsigned grid = (unsigned)((c->ntiles + p->chunk - 1) / p->chunk);
    CHECK_AND_TIME(name, c->cli, c->s, c->out, degree ? p->want_poly : c->want, c->bytes / 4, 2.0 * c->bytes,
                   regs_prefetch<STAGES>
                   <<<grid, THREADS, p->smem, c->s>>>(c->in, c->out, c->ntiles, p->chunk, degree));
}

template <int STAGES>
static void dynamic_part(const Copy* c, const Pipelines* p, const char* name) {
    unsigned int* counter = NULL;
    CUDA_CHECK(cudaMalloc((void**)&counter, sizeof *counter));
    COPY_PART(c, name, {  // the reset is part of each launch, so it is timed with it
        CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof *counter, c->s));
        pipeline_dynamic<STAGES>
            <<<sm_count(), THREADS, p->smem, c->s>>>(c->in, c->out, c->ntiles, p->chunk, counter);
    });
    CUDA_CHECK(cudaFree(counter));
}

static void pipelines_of_degree(const Copy* c, const Pipelines* p, int degree) {
    const char* kind = degree ? "poly" : "copy";
    const unsigned grid = (unsigned)(c->ntiles / p->chunk);
    char name[5][32];
    snprintf(name[0], sizeof name[0], "%s_regs", kind);
    snprintf(name[1], sizeof name[1], "%s_1stage", kind);
    snprintf(name[2], sizeof name[2], "%s_2stage", kind);
    snprintf(name[3], sizeof name[3], "%s_%dstage", kind, p->stages);
    snprintf(name[4], sizeof name[4], "%s_regs_%dstage", kind, p->stages);  // its plain-load baseline
    CHECK_AND_TIME(name[0], c->cli, c->s, c->out, degree ? p->want_poly : c->want, c->bytes / 4,
                   2.0 * c->bytes,
                   regs_staged<<<grid, THREADS, p->smem, c->s>>>(c->in, c->out, c->ntiles, p->chunk, degree));
    pipeline_part<1>(c, p, name[1], p->chunk, degree);
    pipeline_part<2>(c, p, name[2], p->chunk, degree);
    if (p->stages == 3) {
        pipeline_part<3>(c, p, name[3], p->chunk, degree);
        regs_prefetch_part<3>(c, p, name[4], degree);
    } else {
        pipeline_part<4>(c, p, name[3], p->chunk, degree);
        regs_prefetch_part<4>(c, p, name[4], degree);
    }
}

static void part_pipelines(const Copy* c, size_t chunk, int degree, int stages) {
    const size_t n = c->bytes / sizeof(float);
    float coeff[MAX_DEGREE];
    for (int k = 0; k < MAX_DEGREE; ++k) coeff[k] = (k % 2 ? -1.0f : 1.0f) / (float)(k + 2);
    CUDA_CHECK(cudaMemcpyToSymbol(c_coeff, coeff, sizeof coeff));
    // The GPU reference, checked bit for bit on the CPU on its first and last
    // 2^20 elements, then used as the expected output of every poly_* part.
    uint32_t* want_poly = (uint32_t*)xmalloc(c->bytes, "the polynomial's expected output");
    poly_reference<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, c->s>>>((const float*)c->in,
                                                                                  (float*)c->out, n, degree);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(want_poly, c->out, c->bytes, cudaMemcpyDeviceToHost, c->s));
    CUDA_CHECK(cudaStreamSynchronize(c->s));
    const size_t part = n < (2u << 20) ? n / 2 : (1u << 20);
    uint32_t* cpu = (uint32_t*)xmalloc(2 * part * sizeof(uint32_t), "the CPU reference");
    uint32_t* gpu = (uint32_t*)xmalloc(2 * part * sizeof(uint32_t), "the GPU reference sample");
    const float* x = (const float*)c->want;
    for (size_t k = 0; k < 2 * part; ++k) {
        const size_t i = k < part ? k : n - 2 * part + k;
        const float y = poly_cpu(x[i], degree, coeff);
        memcpy(&cpu[k], &y, sizeof y);
        gpu[k] = want_poly[i];
    }
    check_words("poly_reference_vs_cpu", gpu, cpu, 2 * part);
    free(cpu);
    free(gpu);

    const void* kernels[] = {(const void*)regs_staged,         (const void*)pipeline<1>,
                             (const void*)pipeline<2>,         (const void*)pipeline<3>,
                             (const void*)pipeline<4>,         (const void*)regs_prefetch<3>,
                             (const void*)regs_prefetch<4>,    (const void*)pipeline_dynamic<3>,
                             (const void*)pipeline_dynamic<4>, (const void*)arithmetic_only};
    size_t smem = 0;
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k)
        smem = smem_for_one_block_per_sm(kernels[k], THREADS, (size_t)4 * TILE4 * sizeof(float4));
    const Pipelines p = {chunk, smem, stages, want_poly};
    pipelines_of_degree(c, &p, 0);
    pipelines_of_degree(c, &p, degree);

    // The N-stage copy with persistent blocks, one per SM: each streaming
    // through its fixed share of ntiles / SMs consecutive tiles, or taking
    // units of `chunk` tiles from a counter until none is left.
    const size_t chunk_p = (c->ntiles + sm_count() - 1) / sm_count();
    char name[48];
    snprintf(name, sizeof name, "copy_%dstage_persistent", stages);
    if (stages == 3)
        pipeline_part<3>(c, &p, name, chunk_p, 0);
    else
        pipeline_part<4>(c, &p, name, chunk_p, 0);
    snprintf(name, sizeof name, "copy_%dstage_dynamic", stages);
    if (stages == 3)
        dynamic_part<3>(c, &p, name);
    else
        dynamic_part<4>(c, &p, name);

    // The arithmetic alone, for the TIME line that explains the poly_* numbers.
    float* d_sink = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_sink, c->ntiles / chunk * THREADS * sizeof(float)));
    Timer t = timer_begin(c->cli, c->s, NULL, 0.0);
    while (timer_next(&t)) {
        arithmetic_only<<<(unsigned)(c->ntiles / chunk), THREADS, smem, c->s>>>(c->in, d_sink, c->ntiles,
                                                                                chunk, degree);
        CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaFree(d_sink));
    char copy_name[32];
    snprintf(copy_name, sizeof copy_name, "copy_%dstage", stages);
    const float ms_copy = perf_ms(copy_name), ms_arith = t.median_ms;
    if (ms_copy == 0.f)  // its check failed, so it was not timed
        record_time_line(
            "arithmetic alone (%d FMAs per element, no memory traffic) %.3f ms; %s was not timed", degree,
            ms_arith, copy_name);
    else
        record_time_line(
            "arithmetic alone (%d FMAs per element, no memory traffic) %.3f ms; copy alone (%s) %.3f "
            "ms; sum %.3f ms",
            degree, ms_arith, copy_name, ms_copy, ms_arith + ms_copy);
    record_gpu_line(
        "%d threads per block; staged_* and groups: one 16 KiB tile per block, %d blocks per SM; "
        "copy_*, poly_*: %zu tiles per block, 1 block per SM (%zu KiB shared each); persistent: %zu "
        "tiles per block",
        THREADS, blocks_per_sm((const void*)staged<CG16>, THREADS, 0), chunk, smem >> 10, chunk_p);
    free(want_poly);
}

// ---------------------------------------------------------------------------
enum { OPT_MIB, OPT_TAIL, OPT_DEGREE, OPT_STAGES, OPT_CHUNK, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--mib", "N", "size of the input and output buffers in MiB", 1, 16384, 1024, 32},
    {"--tail", "N", "length in floats of the tail part's array (any length)", 1, 1 << 26, 1000003, 1000003},
    {"--degree", "D", "fused multiply-adds per element in the poly_* kernels", 1, MAX_DEGREE, 48, 48},
    {"--stages", "N", "stages of the N-stage pipeline", 3, 4, 4, 4},
    {"--chunk", "T", "16 KiB tiles per block in the copy_*/poly_* kernels (must divide 64 x --mib)", 1, 4096,
     4, 4},
};
static void check_arguments(const Cli* cli) {
    const size_t bytes = (size_t)cli->value[OPT_MIB] << 20, ntiles = bytes / (TILE4 * sizeof(float4));
    require_divisor("--chunk", cli->value[OPT_CHUNK], ntiles, "16 KiB tiles of the buffers (64 per MiB)");
    char what[64];
    snprintf(what, sizeof what, "--mib %lld", cli->value[OPT_MIB]);
    require_host_memory(what, 3 * bytes);  // the input, the polynomial's reference, the readback buffer
}

static const CliSpec kCli = {
    "02_cp_async: cp.async staged copies, groups, zero-filled tails and pipelines,\n"
    "each checked in full and timed as a fraction of cudaMemcpy D2D.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const size_t bytes = (size_t)cli.value[OPT_MIB] << 20, ntiles = bytes / (TILE4 * sizeof(float4));
    require_hopper();
    require_device_memory("--mib, --tail",
                          2 * bytes + 2 * ((size_t)cli.value[OPT_TAIL] + 64) * sizeof(float));
    print_header("02_cp_async", "asynchronous copies: cp.async, groups, zero-fill, pipelines");
    printf(
        "problem: %zu float32 per buffer (%lld MiB); tail array of %lld floats; polynomial of %lld FMAs per "
        "element; %lld-stage pipeline, %lld tiles of 16 KiB per block; seed %u\n",
        bytes / sizeof(float), cli.value[OPT_MIB], cli.value[OPT_TAIL], cli.value[OPT_DEGREE],
        cli.value[OPT_STAGES], cli.value[OPT_CHUNK], cli.seed);

    float* h_in = (float*)xmalloc(bytes, "the input");
    fill_seeded_floats(h_in, bytes / sizeof(float), cli.seed);
    float4 *in = NULL, *out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&in, bytes));
    CUDA_CHECK(cudaMalloc((void**)&out, bytes));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMemcpyAsync(in, h_in, bytes, cudaMemcpyHostToDevice, s));
    const Copy c = {&cli, s, bytes, ntiles, in, out, (const uint32_t*)h_in};
    measure_memcpy_reference(out, in, bytes, &cli, s);
    part_staged(&c);
    part_groups(&c);
    part_tail(&c, (size_t)cli.value[OPT_TAIL]);
    part_pipelines(&c, (size_t)cli.value[OPT_CHUNK], (int)cli.value[OPT_DEGREE], (int)cli.value[OPT_STAGES]);
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    free(h_in);
    return finish();
}
