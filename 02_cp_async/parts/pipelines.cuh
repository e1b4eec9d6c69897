// A part of 02_cp_async/cp_async.cu, whose main() runs the parts in order.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "02_cp_async/cp_async.cuh"
#include "02_cp_async/parts/polynomial.cuh"
#include "02_cp_async/parts/problem.cuh"

// ---- Part 4 (continued): the pipelines, and the plain loads they are measured against --
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
