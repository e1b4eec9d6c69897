// A part of 03_tma_load/tma_load.cu, whose main() runs the parts in order.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "03_tma_load/parts/problem.cuh"

// ---- Parts 7 and 8: a sum at memory speed ------------------------------------------
// Block-wide reduction, then ONE atomic per block: thousands of warps adding
// to one address would make the L2's atomic unit the bottleneck.
static __device__ __forceinline__ void add_to_total(unsigned long long v, unsigned long long* total) {
    __shared__ unsigned long long warp_sums[THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long s = 0;
        for (int w = 0; w < THREADS / 32; ++w) s += warp_sums[w];
        atomicAdd(total, s);
    }
}

// Plain loads: a block sums 64 KiB; each
// thread issues SUM_VEC uint4 loads (LDG.E.128) before using any of them.
#define SUM_VEC 4
#define SUM_LDG_ROUNDS 4  // 256 threads x 4 x 4 uint4 = 64 KiB per block
__global__ void __launch_bounds__(THREADS) sum_ldg(const uint4* __restrict__ in, unsigned long long* total) {
    unsigned long long s = 0;
    for (int round = 0; round < SUM_LDG_ROUNDS; ++round) {
        const size_t base = ((size_t)blockIdx.x * SUM_LDG_ROUNDS + round) * THREADS * SUM_VEC + threadIdx.x;
        uint4 v[SUM_VEC];
#pragma unroll
        for (int j = 0; j < SUM_VEC; ++j) v[j] = in[base + j * THREADS];  // all loads before any use
#pragma unroll
        for (int j = 0; j < SUM_VEC; ++j) s += (unsigned long long)v[j].x + v[j].y + v[j].z + v[j].w;
    }
    add_to_total(s, total);
}

// TMA: the buffer seen as rows of SUM_COLS words; a box is SUM_BOX_ROWS rows
// (16 KiB). Each block sums `chunk` consecutive boxes through SUM_STAGES
// buffers: thread 0 keeps SUM_STAGES boxes in flight, every thread sums its
// share of the oldest one, and a __syncthreads() frees that stage for the
// next load.
#define SUM_COLS 256
#define SUM_BOX_ROWS 16
#define SUM_STAGES 4
#define SUM_BOX_WORDS (SUM_COLS * SUM_BOX_ROWS)

__global__ void __launch_bounds__(THREADS)
    sum_tma(const __grid_constant__ CUtensorMap map, uint32_t chunk, unsigned long long* total) {
    uint32_t* stage = (uint32_t*)tma_smem_base();  // [SUM_STAGES][SUM_BOX_ROWS][SUM_COLS] uint32
    __shared__ __align__(8) uint64_t full[SUM_STAGES];
    const uint32_t bytes = SUM_BOX_WORDS * 4;
    const uint32_t first = blockIdx.x * chunk;  // this block's first box (a box = SUM_BOX_ROWS rows)
    mbar_init_cta(full, SUM_STAGES, 1);
    if (threadIdx.x == 0)
        for (uint32_t s = 0; s < SUM_STAGES && s < chunk; ++s) {  // prologue: fill every stage
            mbar_arrive_expect_tx(&full[s], bytes);
            tma_load_2d(stage + s * SUM_BOX_WORDS, &map, 0, (int32_t)((first + s) * SUM_BOX_ROWS), &full[s]);
        }
    unsigned long long sum = 0;
    for (uint32_t i = 0; i < chunk; ++i) {
        const uint32_t s = i % SUM_STAGES;
        MBAR_WAIT(&full[s], (i / SUM_STAGES) & 1);
        const uint4* v = (const uint4*)(stage + s * SUM_BOX_WORDS);
        for (uint32_t j = threadIdx.x; j < SUM_BOX_WORDS / 4; j += THREADS) {
            const uint4 q = v[j];
            sum += (unsigned long long)q.x + q.y + q.z + q.w;
        }
        __syncthreads();  // stage s fully read: it may be refilled
        if (threadIdx.x == 0 && i + SUM_STAGES < chunk) {
            mbar_arrive_expect_tx(&full[s], bytes);
            tma_load_2d(stage + s * SUM_BOX_WORDS, &map, 0,
                        (int32_t)((first + i + SUM_STAGES) * SUM_BOX_ROWS), &full[s]);
        }
    }
    add_to_total(sum, total);
}

// ---- Part 8: the Hopper pipeline ----------------------------------------------
// The same sum, warp-specialized. Warpgroup 0 is the producer: one elected
// lane of its first warp issues every load; the other 3 warps only hand their
// registers back. Warpgroups 1..RING_CONSUMER_WARPGROUPS sum. Two rings of
// mbarriers pass the RING_STAGES stages back and forth:
//   full[s]   count 1: the producer arms it with expect_tx, the TMA completes
//             it. Stage s holds a new box.
//   empty[s]  count RING_CONSUMERS: every consumer thread arrives when it has
//             read stage s (its own arrive releases its own reads). Free.
// Use i of the ring is pass p = i / RING_STAGES of stage s = i % RING_STAGES.
// (Fewer arrivals work too: CUTLASS's PipelineTmaAsync counts consumer
// warpgroups, one signalling thread each. But compute-sanitizer's racecheck
// does not follow the other threads' reads through the synchronization that
// precedes one elected arrive, so here each thread arrives for itself.)
// Consumers wait on full[s] for parity p & 1. The producer waits on empty[s]
// for parity (p & 1) ^ 1: on its first pass that names the phase before the
// first, which counts as complete, so every stage starts out free. No
// __syncthreads() in the loops: each side waits only for what it needs.
// Persistent: one block per SM, boxes handed out in units of RING_UNIT
// through a counter (pipeline.cuh). The producer tells the consumers which
// box a stage holds in box_of[s], and nboxes means "no more": the arrive
// that completes full[s] releases that write to the waiting consumers.
// SETMAXNREG: the producer warpgroup drops to PRODUCER_REGS registers per
// thread and the consumers rise to CONSUMER_REGS. BULK: each box is loaded
// as 16 contiguous KiB with cp.async.bulk instead of through the tensor map.
// A wait that gives up (the bounded wait, mbarrier.cuh) ends its loop, so no
// copy is left in flight.
#ifndef RING_STAGES
#define RING_STAGES 8
#endif
#ifndef RING_UNIT
#define RING_UNIT 4
#endif
#define RING_CONSUMER_WARPGROUPS 2
#define RING_THREADS (128 * (1 + RING_CONSUMER_WARPGROUPS))  // 384
#define RING_CONSUMERS (128 * RING_CONSUMER_WARPGROUPS)
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232  // 128 x 40 + 256 x 232 = 64512 of the SM's 65536

template <bool SETMAXNREG, bool BULK>
__global__ void __launch_bounds__(RING_THREADS, 1)
    sum_ring(const __grid_constant__ CUtensorMap map, const uint32_t* src, uint32_t nboxes,
             unsigned int* next_unit, unsigned long long* total) {
    uint32_t* stage = (uint32_t*)tma_smem_base();  // [RING_STAGES][SUM_BOX_ROWS][SUM_COLS] uint32
    __shared__ __align__(8) uint64_t full[RING_STAGES], empty[RING_STAGES];
    __shared__ uint32_t box_of[RING_STAGES];
    const uint32_t warp = threadIdx.x / 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < RING_STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], RING_CONSUMERS);
            box_of[s] = 0;
        }
        mbar_fence_init();
    }
    __syncthreads();  // the only block-wide barrier: the barriers exist before the roles split
    if (warp < 4) {   // producer warpgroup
        if (SETMAXNREG) setmaxnreg_dec<PRODUCER_REGS>();
        if (warp == 0 && elect_one_sync()) {
            Schedule sched = make_schedule(SCHED_DYNAMIC, RING_UNIT, nboxes, next_unit);
            for (uint32_t i = 0;; ++i) {
                const uint32_t s = i % RING_STAGES, pass = i / RING_STAGES;
                if (!MBAR_WAIT(&empty[s], (pass & 1) ^ 1u)) break;  // stage s is free
                const uint32_t box = next_box(&sched, i);
                box_of[s] = box;
                if (box == nboxes) {  // no more: complete full[s] without a copy
                    mbar_arrive(&full[s]);
                    break;
                }
                mbar_arrive_expect_tx(&full[s], SUM_BOX_WORDS * 4);
                if (BULK)  // the same 16 KiB, as one contiguous bulk copy: no tensor map
                    bulk_load(stage + s * SUM_BOX_WORDS, src + (size_t)box * SUM_BOX_WORDS, SUM_BOX_WORDS * 4,
                              &full[s]);
                else
                    tma_load_2d(stage + s * SUM_BOX_WORDS, &map, 0, (int32_t)(box * SUM_BOX_ROWS), &full[s]);
            }
        }
        return;
    }
    if (SETMAXNREG) setmaxnreg_inc<CONSUMER_REGS>();
    const uint32_t c = threadIdx.x - 128;  // this thread among the consumers
    unsigned long long sum = 0;
    for (uint32_t i = 0;; ++i) {
        const uint32_t s = i % RING_STAGES, pass = i / RING_STAGES;
        if (!MBAR_WAIT(&full[s], pass & 1)) break;  // stage s holds a box
        if (box_of[s] == nboxes) break;
        const uint4* v = (const uint4*)(stage + s * SUM_BOX_WORDS);
        for (uint32_t j = c; j < SUM_BOX_WORDS / 4; j += RING_CONSUMERS) {
            const uint4 q = v[j];
            sum += (unsigned long long)q.x + q.y + q.z + q.w;
        }
        mbar_arrive(&empty[s]);  // this thread is done with stage s
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if (threadIdx.x % 32 == 0) atomicAdd(total, sum);  // one atomic per consumer warp
}

// The sums only read, so their bandwidth (bytes read / time) can exceed a
// copy's (read + written / time). The result is one number, checked exactly:
// word i of the buffer is i, so the sum of n words is n (n - 1) / 2, and a box
// skipped or summed twice changes it.
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    size_t bytes;
    const uint32_t* d;          // the buffer: word i holds i
    unsigned long long* total;  // the kernels add into it
    unsigned int* counter;      // sum_ring's dynamic schedule
    unsigned long long want;
} Sum;

// The total, read back after the stream's work.
static unsigned long long read_total(const Sum* m) {
    unsigned long long got = 0;
    CUDA_CHECK(cudaMemcpyAsync(&got, m->total, sizeof got, cudaMemcpyDeviceToHost, m->s));
    CUDA_CHECK(cudaStreamSynchronize(m->s));
    return got;
}

static void sum_ldg_part(const Sum* m) {
    const unsigned grid = (unsigned)(m->bytes / 16 / (THREADS * SUM_VEC * SUM_LDG_ROUNDS));
    CUDA_CHECK(cudaMemsetAsync(m->total, 0, sizeof *m->total, m->s));
    sum_ldg<<<grid, THREADS, 0, m->s>>>((const uint4*)m->d, m->total);
    CHECK_LAUNCH();
    if (!check_value("sum_ldg_uint4", read_total(m), m->want))
        for (Timer t = timer_begin(m->cli, m->s, "sum_ldg_uint4", (double)m->bytes); timer_next(&t);) {
            sum_ldg<<<grid, THREADS, 0, m->s>>>((const uint4*)m->d, m->total);
            CHECK_LAUNCH();
        }
}

static void sum_tma_part(const Sum* m, const CUtensorMap* map, uint32_t chunk, const char* name) {
    const uint32_t grid = (uint32_t)(m->bytes / (SUM_BOX_WORDS * 4)) / chunk;
    const size_t smem = tma_smem_bytes((size_t)SUM_STAGES * SUM_BOX_WORDS * 4);
    CUDA_CHECK(
        cudaFuncSetAttribute((const void*)sum_tma, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CUDA_CHECK(cudaMemsetAsync(m->total, 0, sizeof *m->total, m->s));
    sum_tma<<<grid, THREADS, smem, m->s>>>(*map, chunk, m->total);
    CHECK_LAUNCH();
    if (!check_value(name, read_total(m), m->want))
        for (Timer t = timer_begin(m->cli, m->s, name, (double)m->bytes); timer_next(&t);) {
            sum_tma<<<grid, THREADS, smem, m->s>>>(*map, chunk, m->total);
            CHECK_LAUNCH();
        }
}

// One launch of the warp-specialized sum: its counter and the total start at 0.
template <bool SETMAXNREG, bool BULK>
static void launch_sum_ring(const Sum* m, const CUtensorMap* map, size_t smem) {
    CUDA_CHECK(cudaMemsetAsync(m->total, 0, sizeof *m->total, m->s));
    CUDA_CHECK(cudaMemsetAsync(m->counter, 0, sizeof *m->counter, m->s));
    sum_ring<SETMAXNREG, BULK><<<sm_count(), RING_THREADS, smem, m->s>>>(
        *map, m->d, (uint32_t)(m->bytes / (SUM_BOX_WORDS * 4)), m->counter, m->total);
    CHECK_LAUNCH();
}

template <bool SETMAXNREG, bool BULK>
static void sum_ring_part(const Sum* m, const CUtensorMap* map, const char* name) {
    const size_t smem = tma_smem_bytes((size_t)RING_STAGES * SUM_BOX_WORDS * 4);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)sum_ring<SETMAXNREG, BULK>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    launch_sum_ring<SETMAXNREG, BULK>(m, map, smem);
    if (!check_value(name, read_total(m), m->want))
        for (Timer t = timer_begin(m->cli, m->s, name, (double)m->bytes); timer_next(&t);)
            launch_sum_ring<SETMAXNREG, BULK>(m, map, smem);
}

// The L2 promotion of a tensor map (cuTensorMapEncodeTiled's l2Promotion) is
// the size of the requests L2 makes to DRAM when a TMA load misses. Part 9
// measures the sums under each of the four values; the plain loads and the
// bulk copies have no map and no such knob.
static const CUtensorMapL2promotion kPromotion[] = {
    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
    CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
static const char* const kPromotionName[] = {"none", "64B", "128B", "256B"};

// Parts 7-9: the sums (7: plain loads and TMA, 8: the Hopper pipeline) with
// the maps' default promotion (none, as tensor_spec_2d sets it), then 9: the
// two tensor-map sums again with each other promotion.
static void part_sums(size_t bytes, uint32_t chunk, const Cli* cli, cudaStream_t s) {
    const size_t words = bytes / 4;
    uint32_t* h = (uint32_t*)xmalloc(bytes, "the sum's buffer");
    for (size_t i = 0; i < words; ++i) h[i] = (uint32_t)i;
    uint32_t *d = NULL, *copy = NULL;
    unsigned long long* total = NULL;
    unsigned int* counter = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d, bytes));
    CUDA_CHECK(cudaMalloc((void**)&copy, bytes));
    CUDA_CHECK(cudaMalloc((void**)&total, sizeof *total));
    CUDA_CHECK(cudaMalloc((void**)&counter, sizeof *counter));
    CUDA_CHECK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
    measure_memcpy_reference(copy, d, bytes, cli, s);
    const Sum m = {cli, s, bytes, d, total, counter, (unsigned long long)words * (words - 1) / 2};
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d, words / SUM_COLS, SUM_COLS,
                                        SUM_COLS * 4, SUM_BOX_ROWS, SUM_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the part-7 buffer (--mib)");
    sum_ldg_part(&m);
    sum_tma_part(&m, &map, chunk, "sum_tma_4stage");
    sum_ring_part<false, false>(&m, &map, "sum_tma_ring");
    sum_ring_part<true, false>(&m, &map, "sum_tma_ring_setmaxnreg");
    sum_ring_part<false, true>(&m, &map, "sum_bulk_ring");
    for (int p = 1; p < 4; ++p) {  // part 9: the other promotions (none was measured above)
        char name4[48], ring[48];
        snprintf(name4, sizeof name4, "sum_tma_4stage_l2_%s", kPromotionName[p]);
        snprintf(ring, sizeof ring, "sum_tma_ring_l2_%s", kPromotionName[p]);
        spec.l2_promotion = kPromotion[p];
        const CUtensorMap promoted = make_tensor_map(&spec, "the part-9 buffer (--mib)");
        sum_tma_part(&m, &promoted, chunk, name4);
        sum_ring_part<false, false>(&m, &promoted, ring);
    }
    record_gpu_line(
        "sum_tma: %u boxes of %d x %d uint32 per block, %d stages, %d blocks per SM", chunk, SUM_BOX_ROWS,
        SUM_COLS, SUM_STAGES,
        blocks_per_sm((const void*)sum_tma, THREADS, tma_smem_bytes((size_t)SUM_STAGES * SUM_BOX_WORDS * 4)));
    record_gpu_line(
        "sum_tma_ring: %d threads (1 producer warpgroup, %d consumer warpgroups), %d stages of 16 KiB, "
        "1 block per SM, units of %d boxes",
        RING_THREADS, RING_CONSUMER_WARPGROUPS, RING_STAGES, RING_UNIT);
    CUDA_CHECK(cudaFree(d));
    CUDA_CHECK(cudaFree(copy));
    CUDA_CHECK(cudaFree(total));
    CUDA_CHECK(cudaFree(counter));
    free(h);
}
