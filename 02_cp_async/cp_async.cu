// 02_cp_async: Ampere's asynchronous copies: groups, zero-fill, pipelines.
//
// What it teaches
//   cp.async copies global -> shared without passing through registers and
//   without making the thread wait. The thread decides when to wait, and for
//   which copies (commit_group / wait_group N). The program shows:
//     1. staged_*   step 01's staged copy with cp.async of 4, 8, 16 bytes,
//                   .ca and .cg, against LDG+STS (LDGSTS replaces the pair;
//                   the compiler's register report shows what that saves)
//     2. groups     four groups in flight, consumed oldest first with
//                   wait_group 3, 2, 1, 0, plus the cross-thread rule: a wait
//                   covers only the waiting thread's copies, so a
//                   __syncthreads() must follow before other threads' data
//                   is read
//     3. tail_*     an array whose length is not a multiple of 4 floats: the
//                   partial last chunk is zero-filled (src-size form) and
//                   chunks past the end read nothing (ignore-src form), proven
//                   on poisoned shared memory and a guard after the array
//     4. copy_*, poly_*  a kernel with real arithmetic per element over 1 GiB,
//                   one block per SM, each block working through a short
//                   chunk of tiles, in four versions: LDG/STS through
//                   registers, cp.async with 1 stage, 2 stages, and N stages
//                   (--stages 3 or 4, waiting with wait_group N-1); and the
//                   N-stage copy with persistent blocks, which is slower
//
// New since step 01: common/cp_async.cuh (cp_async_ca<4|8|16>, cp_async_cg16,
// cp_async_cg16_zfill, cp_async_cg16_ignore_src, cp_async_commit_group,
// cp_async_wait_group<N>, cp_async_wait_all). SASS: LDGSTS.E(.64|.128),
// LDGSTS.E.BYPASS.128(.ZFILL), LDGDEPBAR, DEPBAR.LE (`make sass-02`).
//
// Run
//   make run-02                      1 GiB buffers
//   make run-02 ARGS="--stages 3"    a 3-stage pipeline instead of 4
//   make run-02 ARGS="--chunk 16"    16 tiles per pipeline block instead of 4
//   make run-02 ARGS="--bug 1"       exercise: wait_group off by one (check fails)
//   make run-02 ARGS="--bug 2"       exercise: no __syncthreads after the wait
//   make check-02                    compare with expected_output.txt
//
// A passing run prints one check line per part (every output compared in
// full: with the input for copies, with a GPU reference for the polynomial,
// which is itself checked against the CPU), the GPU lines, PERF lines as
// fractions of cudaMemcpy D2D, TIME lines for the groups and the overlap of
// copy and arithmetic, and "RESULT: PASS"; exit code 0.
#include <math.h>

#include "cp_async.cuh"
#include "tutorial.cuh"

#define THREADS 256                // threads per block, every kernel
#define VEC 4                      // float4 per thread per tile
#define TILE4 (VEC * THREADS)      // float4 per tile: 1024 = 16 KiB
#define MAX_DEGREE 256

// Polynomial coefficients: c[k] = (-1)^k / (k + 2). Inputs lie in [-1, 1), so
// every intermediate stays small and finite.
__constant__ float c_coeff[MAX_DEGREE];

// ---------------------------------------------------------------------------
// CPU reference
// ---------------------------------------------------------------------------
// The "real work" per element: `degree` fused multiply-adds (Horner's rule
// starting from x). degree 0 is the identity, so the same kernels are a pure
// copy. fmaf here and __fmaf_rn on the GPU both round once, correctly, so the
// results agree bit for bit.
static float poly_cpu(float x, int degree, const float* c) {
    float acc = x;
    for (int k = 0; k < degree; ++k) acc = fmaf(acc, x, c[k]);
    return acc;
}

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------
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

// ---- Part 1: step 01's staged copy, five ways to fill the tile ------------
// Each thread fills VEC float4 of the tile, then (after the barrier) copies
// its partner's (t ^ 32, another warp's) elements to global memory, so data
// crosses threads as in every tiled kernel.
typedef enum { LDG_STS, CA4, CA8, CA16, CG16, NUM_METHODS } Method;

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
__global__ void __launch_bounds__(THREADS) staged(const float4* __restrict__ in, float4* __restrict__ out,
                                                  size_t ntiles) {
    __shared__ float4 tile[TILE4];  // [VEC][THREADS] float4 = 16 KiB
    const unsigned t = threadIdx.x, partner = t ^ 32;
    for (size_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
        const float4* src = in + b * TILE4;
        if (METHOD == LDG_STS) {
            float4 r[VEC];  // the data passes through 16 registers
#pragma unroll
            for (int j = 0; j < VEC; ++j) r[j] = src[j * THREADS + t];
#pragma unroll
            for (int j = 0; j < VEC; ++j) tile[j * THREADS + t] = r[j];
        } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) fill_element<METHOD>(&tile[j * THREADS + t], &src[j * THREADS + t]);
            cp_async_commit_group();
            cp_async_wait_group<0>();  // this thread's copies have landed...
        }
        __syncthreads();  // ...and now everyone's: partners may be read
#pragma unroll
        for (int j = 0; j < VEC; ++j) out[b * TILE4 + j * THREADS + partner] = tile[j * THREADS + partner];
        __syncthreads();  // all reads done before the next tile overwrites
    }
}

// ---- Part 2: groups, consumed oldest first --------------------------------
// Each tile is copied as VEC = 4 groups (group g = row g of the tile, one
// 16-byte copy per thread). Then row g is consumed after
// cp.async.wait_group (3 - g): "at most 3 - g of my newest groups may still be
// pending", i.e. groups 0..g are complete. The __syncthreads() after each wait
// extends "my copies landed" to "everyone's copies landed"; --bug 2 drops it.
// stamps (block 0, thread 0, first tile): clock64 at issue and after each wait.
static __device__ __forceinline__ void consume_row(const float4* tile, float4* out, int row, unsigned partner,
                                                   int bug) {
    if (bug != 2) __syncthreads();
    out[row * THREADS + partner] = tile[row * THREADS + partner];
}

__global__ void __launch_bounds__(THREADS) groups(const float4* __restrict__ in, float4* __restrict__ out,
                                                  size_t ntiles, int bug, long long* stamps) {
    __shared__ float4 tile[TILE4];  // [4 groups][THREADS] float4
    const unsigned t = threadIdx.x, partner = t ^ 32;
    for (size_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
        const bool record = stamps && blockIdx.x == 0 && t == 0 && b == 0;
        long long t0 = clock64(), t1, t2, t3, t4;
#pragma unroll
        for (int g = 0; g < VEC; ++g) {
            cp_async_cg16(&tile[g * THREADS + t], &in[b * TILE4 + g * THREADS + t]);
            cp_async_commit_group();  // one group per row
        }
        float4* dst = out + b * TILE4;
        cp_async_wait_group<3>();  // group 0 complete; 1, 2, 3 may be in flight
        t1 = clock64();
        consume_row(tile, dst, 0, partner, bug);
        cp_async_wait_group<2>();  // groups 0, 1 complete
        t2 = clock64();
        consume_row(tile, dst, 1, partner, bug);
        cp_async_wait_group<1>();  // groups 0..2 complete
        t3 = clock64();
        consume_row(tile, dst, 2, partner, bug);
        cp_async_wait_group<0>();  // all complete
        t4 = clock64();
        consume_row(tile, dst, 3, partner, bug);
        if (record) {
            stamps[0] = t1 - t0;
            stamps[1] = t2 - t0;
            stamps[2] = t3 - t0;
            stamps[3] = t4 - t0;
        }
        __syncthreads();  // all rows read before the next tile's copies land
    }
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
    out[c] = slot[t];  // each thread reads only its own slot: the wait suffices
}

// ---- Part 4: a pipeline with arithmetic ------------------------------------
// Block b handles `chunk` consecutive tiles, b * chunk ... (the last block
// fewer). Short chunks, many blocks: on the H200 a copy reaches memcpy speed
// this way, while a persistent block that streams through a long range loses
// about 10 points (the *_persistent line; why is open, see the lesson).
// Shared memory holds STAGES tiles. Prologue: issue the first STAGES - 1 tiles, one group
// each. Loop i: issue tile i + STAGES - 1 (into the stage tile i - 1 used),
// commit, then wait_group STAGES - 1: every group but the newest STAGES - 1 is
// complete, and that includes tile i's. A group is committed every time, even
// when there is no tile left to issue, so "one group per tile" keeps the
// count right to the end. STAGES = 1 is the single-stage version: issue, wait
// for everything, compute. --bug 1 waits with wait_group STAGES (one too many
// pending): tile i may still be in flight when it is read.
template <int STAGES>
__global__ void __launch_bounds__(THREADS) pipeline(const float4* __restrict__ in, float4* __restrict__ out,
                                                    size_t ntiles, size_t chunk, int degree, int bug) {
    extern __shared__ float4 stage[];  // [STAGES][VEC][THREADS] float4, 16 KiB per stage
    const unsigned t = threadIdx.x, partner = t ^ 32;
    const size_t first = blockIdx.x * chunk;  // this block's first tile
    const size_t mine = first < ntiles ? min(chunk, ntiles - first) : 0;
    for (int s = 0; s < STAGES - 1; ++s) {  // prologue
        if ((size_t)s < mine) {
            const float4* src = in + (first + s) * TILE4;
#pragma unroll
            for (int j = 0; j < VEC; ++j) cp_async_cg16(&stage[s * TILE4 + j * THREADS + t], &src[j * THREADS + t]);
        }
        cp_async_commit_group();
    }
    for (size_t i = 0; i < mine; ++i) {
        const size_t ahead = i + STAGES - 1;
        if (ahead < mine) {
            const float4* src = in + (first + ahead) * TILE4;
            float4* dst = stage + (ahead % STAGES) * TILE4;
#pragma unroll
            for (int j = 0; j < VEC; ++j) cp_async_cg16(&dst[j * THREADS + t], &src[j * THREADS + t]);
        }
        cp_async_commit_group();
        if (bug == 1)
            cp_async_wait_group<STAGES>();
        else
            cp_async_wait_group<STAGES - 1>();
        __syncthreads();  // everyone's part of tile i has landed
        const float4* cur = stage + (i % STAGES) * TILE4;
        float4 v[VEC];
#pragma unroll
        for (int j = 0; j < VEC; ++j) v[j] = cur[j * THREADS + partner];
        __syncthreads();  // everyone has read this stage: it may be refilled
        poly_vec(v, degree);
        float4* dst = out + (first + i) * TILE4;
#pragma unroll
        for (int j = 0; j < VEC; ++j) dst[j * THREADS + partner] = v[j];
    }
}

// The same work staged through registers (step 01's staged_batched), for
// comparison: the VEC loads of a tile are in flight together, but the next
// tile's loads wait until this tile is computed and stored.
__global__ void __launch_bounds__(THREADS) regs_staged(const float4* __restrict__ in, float4* __restrict__ out,
                                                       size_t ntiles, size_t chunk, int degree) {
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

// The arithmetic alone: the same grid and the same polynomials per block, on
// values that stay in registers (each tile's results feed the next), no
// global traffic in the loop. One word per thread is stored at the end so the
// compiler must do all of it.
__global__ void __launch_bounds__(THREADS) arithmetic_only(const float4* __restrict__ in, float* __restrict__ sink,
                                                           size_t ntiles, size_t chunk, int degree) {
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

// ---------------------------------------------------------------------------
// Host launchers
// ---------------------------------------------------------------------------
typedef enum { V_REGS, V_STAGES1, V_STAGES2, V_STAGESN, NUM_VERSIONS } Version;

typedef struct {
    const float4* in;
    float4* out;
    size_t ntiles;
    unsigned grid;
    size_t chunk;  // tiles per block (pipelines)
    int degree;
    int bug;
    int version;   // Version for pipelines, Method for part 1
    int stages;    // N of the N-stage version
    float* sink;   // arithmetic_only
} Job;

static size_t stage_bytes(int stages) { return (size_t)stages * TILE4 * sizeof(float4); }

static void enqueue_staged(void* ctx, cudaStream_t s) {
    const Job* j = (const Job*)ctx;
    switch ((Method)j->version) {
    case LDG_STS: staged<LDG_STS><<<j->grid, THREADS, 0, s>>>(j->in, j->out, j->ntiles); break;
    case CA4: staged<CA4><<<j->grid, THREADS, 0, s>>>(j->in, j->out, j->ntiles); break;
    case CA8: staged<CA8><<<j->grid, THREADS, 0, s>>>(j->in, j->out, j->ntiles); break;
    case CA16: staged<CA16><<<j->grid, THREADS, 0, s>>>(j->in, j->out, j->ntiles); break;
    default: staged<CG16><<<j->grid, THREADS, 0, s>>>(j->in, j->out, j->ntiles); break;
    }
    CHECK_LAUNCH();
}

// Every pipeline version launches one block per SM with the same (unused
// beyond its stages) dynamic shared memory, so all run at the same occupancy.
static size_t g_pipeline_smem = 0;

static void enqueue_pipeline(void* ctx, cudaStream_t s) {
    const Job* j = (const Job*)ctx;
    const size_t smem = g_pipeline_smem;
    switch ((Version)j->version) {
    case V_REGS: regs_staged<<<j->grid, THREADS, smem, s>>>(j->in, j->out, j->ntiles, j->chunk, j->degree); break;
    case V_STAGES1:
        pipeline<1><<<j->grid, THREADS, smem, s>>>(j->in, j->out, j->ntiles, j->chunk, j->degree, j->bug);
        break;
    case V_STAGES2:
        pipeline<2><<<j->grid, THREADS, smem, s>>>(j->in, j->out, j->ntiles, j->chunk, j->degree, j->bug);
        break;
    default:
        if (j->stages == 3)
            pipeline<3><<<j->grid, THREADS, smem, s>>>(j->in, j->out, j->ntiles, j->chunk, j->degree, j->bug);
        else
            pipeline<4><<<j->grid, THREADS, smem, s>>>(j->in, j->out, j->ntiles, j->chunk, j->degree, j->bug);
        break;
    }
    CHECK_LAUNCH();
}

static void enqueue_arithmetic(void* ctx, cudaStream_t s) {
    const Job* j = (const Job*)ctx;
    arithmetic_only<<<j->grid, THREADS, g_pipeline_smem, s>>>(j->in, j->sink, j->ntiles, j->chunk, j->degree);
    CHECK_LAUNCH();
}

static void enqueue_groups(void* ctx, cudaStream_t s) {
    const Job* j = (const Job*)ctx;
    groups<<<j->grid, THREADS, 0, s>>>(j->in, j->out, j->ntiles, j->bug, NULL);
    CHECK_LAUNCH();
}

// Poison `out`, run the job once, read `out` back and compare with `want`.
static void run_and_check(const char* name, EnqueueFn fn, Job* job, cudaStream_t s, uint32_t* readback,
                          const uint32_t* want, size_t bytes) {
    poison_device(job->out, bytes, s);
    fn(job, s);
    CUDA_CHECK(cudaMemcpyAsync(readback, job->out, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    check_words(name, readback, want, bytes / sizeof(uint32_t));
}

static const char* const method_name[NUM_METHODS] = {"staged_ldg_sts", "staged_ca4", "staged_ca8", "staged_ca16",
                                                     "staged_cg16"};

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------
enum { OPT_MIB, OPT_TAIL, OPT_DEGREE, OPT_STAGES, OPT_CHUNK, OPT_BUG, NUM_OPTS };

int main(int argc, char** argv) {
    const IntOption opts[NUM_OPTS] = {
        {"--mib", "N", "size of the input and output buffers in MiB", 1, 16384, 1024, 32},
        {"--tail", "N", "length in floats of the tail part's array (any length)", 1, 1 << 26, 1000003, 1000003},
        {"--degree", "D", "fused multiply-adds per element in the poly_* kernels", 1, MAX_DEGREE, 48, 48},
        {"--stages", "N", "stages of the N-stage pipeline", 3, 4, 4, 4},
        {"--chunk", "T", "16 KiB tiles per block in the copy_*/poly_* kernels (must divide 64 x --mib)", 1, 4096, 4, 4},
        {"--bug", "B", "exercise: 1 = wait_group off by one, 2 = no __syncthreads after the waits", 0, 2, 0, 0},
    };
    Cli cli = parse_cli(argc, argv,
                        "02_cp_async: cp.async staged copies, groups, zero-filled tails and pipelines,\n"
                        "each checked in full and timed as a fraction of cudaMemcpy D2D.",
                        opts, NUM_OPTS);
    const long long mib = cli.value[OPT_MIB];
    const size_t bytes = (size_t)mib << 20, words = bytes / sizeof(uint32_t);
    const size_t ntiles = bytes / (TILE4 * sizeof(float4));  // 1 MiB = 64 tiles: no partial tile
    const size_t tail_n = (size_t)cli.value[OPT_TAIL];
    const int degree = (int)cli.value[OPT_DEGREE], stages = (int)cli.value[OPT_STAGES];
    const int bug = (int)cli.value[OPT_BUG];
    const size_t chunk = (size_t)cli.value[OPT_CHUNK];
    require_divisor("--chunk", (long long)chunk, ntiles, "16 KiB tiles of the buffers (64 per MiB)");

    require_hopper();

    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (3 * bytes + (256u << 20) > free_b)
        die_usage("--mib %lld needs 3 x %lld MiB of device memory, only %zu MiB are free", mib, mib, free_b >> 20);

    print_header("02_cp_async", "asynchronous copies: cp.async, groups, zero-fill, pipelines");
    printf("problem: %zu float32 per buffer (%lld MiB); tail array of %zu floats; polynomial of %d FMAs per "
           "element; %d-stage pipeline, %zu tiles of 16 KiB per block; seed %u%s\n",
           bytes / sizeof(float), mib, tail_n, degree, stages, chunk, cli.seed,
           bug == 1 ? "; BUG 1: wait_group off by one" : bug == 2 ? "; BUG 2: no __syncthreads after the waits" : "");

    float* h_in = (float*)malloc(bytes);
    uint32_t *h_ref = (uint32_t*)malloc(bytes), *readback = NULL;
    if (!h_in || !h_ref) die_usage("--mib %lld: cannot allocate 2 x %lld MiB of host memory", mib, mib);
    CUDA_CHECK(cudaMallocHost((void**)&readback, bytes));
    float4 *d_in = NULL, *d_out = NULL, *d_ref = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_in, bytes));
    CUDA_CHECK(cudaMalloc((void**)&d_out, bytes));
    CUDA_CHECK(cudaMalloc((void**)&d_ref, bytes));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    float coeff[MAX_DEGREE];
    for (int k = 0; k < MAX_DEGREE; ++k) coeff[k] = (k % 2 ? -1.0f : 1.0f) / (float)(k + 2);
    CUDA_CHECK(cudaMemcpyToSymbol(c_coeff, coeff, sizeof coeff));
    fill_seeded_floats(h_in, bytes / sizeof(float), cli.seed);
    CUDA_CHECK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, s));

    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const uint32_t* want_copy = (const uint32_t*)h_in;

    // --- 1. staged copies ----------------------------------------------------
    Job staged_jobs[NUM_METHODS];
    for (int m = 0; m < NUM_METHODS; ++m) {
        Job j = {d_in, d_out, ntiles, (unsigned)ntiles, 1, 0, bug, m, stages, NULL};  // one tile per block
        staged_jobs[m] = j;
        run_and_check(method_name[m], enqueue_staged, &staged_jobs[m], s, readback, want_copy, bytes);
    }

    // --- 2. groups -------------------------------------------------------------
    long long* d_stamps = NULL;
    long long stamps[4] = {0, 0, 0, 0};
    CUDA_CHECK(cudaMalloc((void**)&d_stamps, sizeof stamps));
    Job groups_job = {d_in, d_out, ntiles, (unsigned)ntiles, 1, 0, bug, 0, stages, NULL};
    poison_device(d_out, bytes, s);
    groups<<<groups_job.grid, THREADS, 0, s>>>(d_in, d_out, ntiles, bug, d_stamps);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(stamps, d_stamps, sizeof stamps, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(readback, d_out, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    check_words("groups_oldest_first", readback, want_copy, words);

    // --- 3. tail ---------------------------------------------------------------
    // The array sits in a buffer followed by GUARD words that are neither data
    // nor zero: a copy that read past element n - 1 would bring them in.
    enum { GUARD = 64 };
    const size_t chunks = (tail_n + 3) / 4, blocks = (chunks + THREADS - 1) / THREADS;
    const size_t padded = blocks * THREADS * 4;  // floats written by the kernel
    float *d_tail_in = NULL, *h_tail = (float*)malloc((tail_n + GUARD) * sizeof(float));
    float4* d_tail_out = NULL;
    uint32_t* h_tail_out = (uint32_t*)malloc(padded * sizeof(float));
    if (!h_tail || !h_tail_out) die_usage("--tail %zu: cannot allocate host memory", tail_n);
    CUDA_CHECK(cudaMalloc((void**)&d_tail_in, (tail_n + GUARD) * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void**)&d_tail_out, padded * sizeof(float)));
    fill_seeded_floats(h_tail, tail_n, cli.seed);
    for (int g = 0; g < GUARD; ++g) h_tail[tail_n + g] = 12345.0f;  // guard: not data, not zero
    CUDA_CHECK(cudaMemcpyAsync(d_tail_in, h_tail, (tail_n + GUARD) * sizeof(float), cudaMemcpyHostToDevice, s));
    poison_device(d_tail_out, padded * sizeof(float), s);
    tail_copy<<<(unsigned)blocks, THREADS, 0, s>>>(d_tail_in, tail_n, d_tail_out);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(h_tail_out, d_tail_out, padded * sizeof(float), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    {
        // Expected: the data, then zeros (src-size fill of the straddling
        // chunk), then zeros (ignore-src chunks).
        const size_t zfill_end = chunks * 4;
        uint32_t* want_tail = (uint32_t*)malloc(padded * sizeof(uint32_t));
        memcpy(want_tail, h_tail, tail_n * sizeof(float));
        memset(want_tail + tail_n, 0, (padded - tail_n) * sizeof(uint32_t));
        check_words("tail_data", h_tail_out, want_tail, tail_n);
        check_words("tail_zfill", h_tail_out + tail_n, want_tail + tail_n, zfill_end - tail_n);
        check_words("tail_ignore_src", h_tail_out + zfill_end, want_tail + zfill_end, padded - zfill_end);
        free(want_tail);
    }

    // --- 4. pipelines ----------------------------------------------------------
    // GPU reference, checked on the CPU on its first and last 2^20 elements.
    const size_t n = bytes / sizeof(float);
    poly_reference<<<(unsigned)((n + THREADS - 1) / THREADS), THREADS, 0, s>>>((const float*)d_in, (float*)d_ref, n,
                                                                              degree);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(h_ref, d_ref, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    {
        const size_t part = n < (2u << 20) ? n / 2 : (1u << 20);
        uint32_t* cpu = (uint32_t*)malloc(2 * part * sizeof(uint32_t));
        uint32_t* gpu = (uint32_t*)malloc(2 * part * sizeof(uint32_t));
        for (size_t k = 0; k < 2 * part; ++k) {
            size_t i = k < part ? k : n - 2 * part + k;
            float y = poly_cpu(h_in[i], degree, coeff);
            memcpy(&cpu[k], &y, sizeof y);
            gpu[k] = h_ref[i];
        }
        check_words("poly_reference_vs_cpu", gpu, cpu, 2 * part);
        free(cpu);
        free(gpu);
    }

    // Every pipeline version: one block per SM, the same dynamic shared memory
    // (enough for 4 stages, and more than half an SM's, so one block fits).
    // Each kernel's limit is raised; the byte count is the same for all.
    const void* pipe_fn[] = {(const void*)regs_staged, (const void*)pipeline<1>, (const void*)pipeline<2>,
                             (const void*)pipeline<3>, (const void*)pipeline<4>, (const void*)arithmetic_only};
    for (size_t k = 0; k < sizeof pipe_fn / sizeof pipe_fn[0]; ++k)
        g_pipeline_smem = smem_for_one_block_per_sm(pipe_fn[k], THREADS, stage_bytes(4));
    char name[2][NUM_VERSIONS][32];
    Job pipe_jobs[2][NUM_VERSIONS];  // [0]: degree 0 (pure copy), [1]: the polynomial
    for (int d = 0; d < 2; ++d)
        for (int v = 0; v < NUM_VERSIONS; ++v) {
            Job j = {d_in, d_out, ntiles, (unsigned)(ntiles / chunk), chunk, d ? degree : 0, bug, v, stages, NULL};
            pipe_jobs[d][v] = j;
            if (v == V_REGS)
                snprintf(name[d][v], sizeof name[d][v], "%s_regs", d ? "poly" : "copy");
            else
                snprintf(name[d][v], sizeof name[d][v], "%s_%dstage", d ? "poly" : "copy",
                         v == V_STAGES1 ? 1 : v == V_STAGES2 ? 2 : stages);
            run_and_check(name[d][v], enqueue_pipeline, &pipe_jobs[d][v], s, readback, d ? h_ref : want_copy, bytes);
        }
    // The same N-stage copy with persistent blocks: one block per SM, each
    // streaming through ntiles / SMs consecutive tiles.
    const size_t chunk_p = (ntiles + sms - 1) / sms;
    Job persistent = {d_in, d_out, ntiles, (unsigned)((ntiles + chunk_p - 1) / chunk_p), chunk_p, 0, bug, V_STAGESN,
                      stages, NULL};
    char persistent_name[48];
    snprintf(persistent_name, sizeof persistent_name, "copy_%dstage_persistent", stages);
    run_and_check(persistent_name, enqueue_pipeline, &persistent, s, readback, want_copy, bytes);

    // --- timing -----------------------------------------------------------------
    print_gpu();
    printf("GPU    %d threads per block; staged_* and groups: one tile per block, %d blocks per SM; copy_*, poly_*: "
           "%zu tiles per block, %d block per SM (%zu KiB shared each, %d KiB per stage); persistent: %zu tiles "
           "per block\n",
           THREADS, blocks_per_sm((const void*)staged<CG16>, THREADS, 0), chunk,
           blocks_per_sm((const void*)pipeline<4>, THREADS, g_pipeline_smem), g_pipeline_smem >> 10,
           (int)(stage_bytes(1) >> 10), chunk_p);
    measure_memcpy_reference(d_out, d_in, bytes, &cli);
    for (int m = 0; m < NUM_METHODS; ++m)
        print_perf(method_name[m], time_median_ms(enqueue_staged, &staged_jobs[m], s, &cli), 2.0 * bytes);
    print_perf("groups_oldest_first", time_median_ms(enqueue_groups, &groups_job, s, &cli), 2.0 * bytes);
    float ms[2][NUM_VERSIONS];
    for (int d = 0; d < 2; ++d)
        for (int v = 0; v < NUM_VERSIONS; ++v) {
            ms[d][v] = time_median_ms(enqueue_pipeline, &pipe_jobs[d][v], s, &cli);
            print_perf(name[d][v], ms[d][v], 2.0 * bytes);
        }
    print_perf(persistent_name, time_median_ms(enqueue_pipeline, &persistent, s, &cli), 2.0 * bytes);
    float* d_sink = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_sink, ntiles / chunk * THREADS * sizeof(float)));
    Job arith = {d_in, NULL, ntiles, (unsigned)(ntiles / chunk), chunk, degree, 0, 0, stages, d_sink};
    const float ms_arith = time_median_ms(enqueue_arithmetic, &arith, s, &cli);
    printf("TIME   groups (block 0, first tile): wait_group 3 returned after %lld cycles, 2 after %lld, 1 after "
           "%lld, 0 after %lld\n",
           stamps[0], stamps[1], stamps[2], stamps[3]);
    printf("TIME   arithmetic alone (%d FMAs per element, no memory traffic) %.3f ms; copy alone (copy_%dstage) "
           "%.3f ms; sum %.3f ms; poly_regs %.3f ms, poly_1stage %.3f ms, poly_%dstage %.3f ms\n",
           degree, ms_arith, stages, ms[0][V_STAGESN], ms_arith + ms[0][V_STAGESN], ms[1][V_REGS],
           ms[1][V_STAGES1], stages, ms[1][V_STAGESN]);

    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_ref));
    CUDA_CHECK(cudaFree(d_stamps));
    CUDA_CHECK(cudaFree(d_tail_in));
    CUDA_CHECK(cudaFree(d_tail_out));
    CUDA_CHECK(cudaFree(d_sink));
    CUDA_CHECK(cudaFreeHost(readback));
    free(h_in);
    free(h_ref);
    free(h_tail);
    free(h_tail_out);
    return finish();
}
