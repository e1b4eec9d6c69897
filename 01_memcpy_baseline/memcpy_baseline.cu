// 01_memcpy_baseline: what a plain copy costs, and the ceiling every later
// step is measured against (cudaMemcpy device-to-device, same process).
//
// Parts: host transfers (pageable, pinned); cudaMemcpy D2D; 4-byte and
// 16-byte copies; a grid-stride copy; staging through shared memory with its
// two __syncthreads(); loads in flight (batching) at full occupancy and at one
// block per SM; a transfer overlapped with a kernel on a second stream.
// New: everything (first step). Harness: common/tutorial.cuh. Launch shapes:
// 01_memcpy_baseline/occupancy.cuh. No PTX wrappers yet; SASS: make sass-01.
// Lesson: 01_memcpy_baseline/README.md.
//
// Run: make run-01 [ARGS="--mib 4096"], make check-01, make sanitize-01.
#include "common/tutorial.cuh"
#include "01_memcpy_baseline/occupancy.cuh"

#define THREADS 256  // threads per block for every kernel here
#define BATCH 4      // float4 per thread per tile in staged_batched

// Every part copies the same seeded buffer; the host keeps the input (`want`)
// and each check compares the whole output with it, word for word. Sizes are
// whole MiB: 2^16 float4 per MiB, a multiple of every tile below, so this
// step has no tails (step 02 handles them).
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    size_t bytes;          // of every buffer
    const float4* src;     // device: the seeded input
    float4* dst;           // device: every copy's output, poisoned before each check
    const uint32_t* want;  // host: the input
} Copy;

// Every copy part: poison the output, run the launch once, check every word
// against the input, then time it (a copy reads and writes every byte).
#define COPY_PART(c, name, ...) \
    CHECK_AND_TIME(name, (c)->cli, (c)->s, (c)->dst, (c)->want, (c)->bytes / 4, 2.0 * (c)->bytes, __VA_ARGS__)

// ---- Host transfers ----------------------------------------------------------
// cudaMemcpyAsync from pageable (malloc) memory is staged by the driver through
// its own pinned buffers, chunk by chunk, and blocks the host; from pinned
// (cudaMallocHost) memory the copy engine reads host memory directly (DMA) and
// the call returns at once. Each H2D lands in poisoned device memory; each D2H
// in poisoned host memory, compared where it landed. Each byte crosses PCIe
// once, so a transfer's bandwidth counts `bytes` once.
static void part_host_transfers(const Copy* c, float4* d_buf) {
    const size_t words = c->bytes / 4;
    uint32_t* page_dst = (uint32_t*)xmalloc(c->bytes, "the pageable D2H destination");
    uint32_t *pin_src = NULL, *pin_dst = NULL;
    CUDA_CHECK(cudaMallocHost((void**)&pin_src, c->bytes));
    CUDA_CHECK(cudaMallocHost((void**)&pin_dst, c->bytes));
    memcpy(pin_src, c->want, c->bytes);
    const char* names[2][2] = {{"h2d_pageable", "d2h_pageable"}, {"h2d_pinned", "d2h_pinned"}};
    const uint32_t* up_src[2] = {c->want, pin_src};
    uint32_t* down_dst[2] = {page_dst, pin_dst};
    for (int pinned = 0; pinned < 2; ++pinned) {
        poison_device(d_buf, c->bytes, c->s);
        CUDA_CHECK(cudaMemcpyAsync(d_buf, up_src[pinned], c->bytes, cudaMemcpyHostToDevice, c->s));
        const size_t up_wrong = check_device(names[pinned][0], d_buf, c->want, words, c->s);
        memset(down_dst[pinned], POISON_BYTE, c->bytes);
        CUDA_CHECK(cudaMemcpyAsync(down_dst[pinned], d_buf, c->bytes, cudaMemcpyDeviceToHost, c->s));
        CUDA_CHECK(cudaStreamSynchronize(c->s));
        const size_t down_wrong = check_words(names[pinned][1], down_dst[pinned], c->want, words);
        if (!up_wrong)  // each direction is timed only if its own check passed
            for (Timer t = timer_begin(c->cli, c->s, names[pinned][0], (double)c->bytes); timer_next(&t);)
                CUDA_CHECK(cudaMemcpyAsync(d_buf, up_src[pinned], c->bytes, cudaMemcpyHostToDevice, c->s));
        if (!down_wrong)
            for (Timer t = timer_begin(c->cli, c->s, names[pinned][1], (double)c->bytes); timer_next(&t);)
                CUDA_CHECK(cudaMemcpyAsync(down_dst[pinned], d_buf, c->bytes, cudaMemcpyDeviceToHost, c->s));
    }
    CUDA_CHECK(cudaFreeHost(pin_src));
    CUDA_CHECK(cudaFreeHost(pin_dst));
    free(page_dst);
}

// ---- The reference: cudaMemcpy device to device --------------------------------
static void part_memcpy(const Copy* c) {
    poison_device(c->dst, c->bytes, c->s);
    CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, c->s));
    if (check_device("cudaMemcpy_D2D", c->dst, c->want, c->bytes / 4, c->s) == 0)
        measure_memcpy_reference(c->dst, c->src, c->bytes, c->cli, c->s);
}

// ---- 4 bytes vs 16 bytes per thread ------------------------------------------------
// One thread, one float: each warp moves 128 B per instruction. The memory
// system needs many bytes in flight to hide DRAM latency (Little's law), and
// here each thread contributes only 4 B, so far more instructions and threads
// are needed for the same bytes.
__global__ void copy_scalar(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// One thread, four floats as four independent 4-byte loads, all issued
// before the first store: the bytes in flight per thread of copy_float4, at
// copy_scalar's width. Same grid and block as copy_float4, and each warp
// copies the same 512 B it would there, as four coalesced 128 B loads (load
// k: floats 32k..32k+31 of the warp's 128). Only the access width differs.
__global__ void copy_scalar_x4(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const size_t i = ((size_t)blockIdx.x * THREADS + warp * 32) * 4 + lane;  // copy_float4's warp, in floats
    if (i + 3 * 32 < n) {
        float r[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) r[k] = in[i + 32 * k];  // 4 x LDG.E
#pragma unroll
        for (int k = 0; k < 4; ++k) out[i + 32 * k] = r[k];  // 4 x STG.E
    }
}

// One thread, one float4: LDG.E.128 / STG.E.128, 512 B per warp instruction,
// a quarter of the instructions for the same bytes. Needs 16-byte aligned
// addresses (cudaMalloc gives 256-byte alignment).
__global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

static void part_copy_widths(const Copy* c) {
    const size_t n = c->bytes / sizeof(float), n4 = c->bytes / sizeof(float4);
    COPY_PART(
        c, "copy_scalar",
        copy_scalar<<<(unsigned)(n / THREADS), THREADS, 0, c->s>>>((const float*)c->src, (float*)c->dst, n));
    COPY_PART(c, "copy_scalar_x4",
              copy_scalar_x4<<<(unsigned)(n4 / THREADS), THREADS, 0, c->s>>>((const float*)c->src,
                                                                             (float*)c->dst, n));
    COPY_PART(c, "copy_float4",
              copy_float4<<<(unsigned)(n4 / THREADS), THREADS, 0, c->s>>>(c->src, c->dst, n4));
}

// ---- The harness, tested once -------------------------------------------------
// Every check in this tutorial rests on two things: outputs are poisoned
// before a kernel runs, and the comparator counts every word that differs.
// Both are proven here, once: copy_float4 launched one block short must leave
// exactly that block's words unwritten, and they must read as poison. (The
// output holds a correct copy from the part before, so without the poison the
// missing block would go unseen.)
static void part_harness_self_test(const Copy* c) {
    const size_t n4 = c->bytes / sizeof(float4), words = c->bytes / 4, missing = THREADS * 4;
    poison_device(c->dst, c->bytes, c->s);
    copy_float4<<<(unsigned)(n4 / THREADS) - 1, THREADS, 0, c->s>>>(c->src, c->dst, n4);
    CHECK_LAUNCH();
    const uint32_t* got = read_back(c->dst, words, c->s);
    size_t first_wrong = 0, poison = 0;
    // count_wrong is the comparator behind every check line.
    const size_t wrong = count_wrong(got, c->want, words, &first_wrong, 1);
    for (size_t i = 0; i < words; ++i) poison += got[i] == POISON_WORD;
    // Exactly the last block's words, all poison, the first at its first word.
    const int right = wrong == missing && poison == missing && first_wrong == words - missing;
    report_check("harness_sees_a_missing_block", right ? 0 : 1, 1);
}

// ---- Grid-stride -----------------------------------------------------------------
// Launch exactly as many blocks as are resident at once (persistent_grid) and
// let each thread walk the array in steps of the whole grid. Same bytes per
// instruction as copy_float4; no block ever waits to be scheduled, and the
// block count no longer depends on the problem size.
__global__ void copy_gridstride(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) out[i] = in[i];
}

static void part_gridstride(const Copy* c) {
    const unsigned grid = (unsigned)persistent_grid((const void*)copy_gridstride, THREADS, 0);
    COPY_PART(c, "copy_gridstride",
              copy_gridstride<<<grid, THREADS, 0, c->s>>>(c->src, c->dst, c->bytes / sizeof(float4)));
}

// ---- Staging through shared memory, and loads in flight ---------------------------
// The classic staged copy: global -> registers -> shared -> global, one tile of
// B x THREADS float4 per iteration. Thread t stores its elements of the tile,
// then writes its own places of the output with the elements of thread t ^ 32,
// which another warp stored: the output is the input with each pair of
// 32-float4 runs swapped, so it comes out right only if the data cross threads
// through shared memory, as they do in every tiled kernel (a thread that read
// back its own slot would write every element 32 float4 from its place):
//   1st __syncthreads: every element of the tile is in shared before any is read;
//   2nd __syncthreads: every element has been read before the next tile's
//                      stores overwrite the buffer.
// Drop either one and `make check-01` may count wrong elements (a race can
// pass by luck); `make sanitize-01` (racecheck) reports the hazard every time.
// All B loads of a thread are issued before the first store uses any of them,
// so each thread has B 16-byte loads in flight at a time.
template <int B>
static __device__ __forceinline__ void staged_copy(const float4* __restrict__ in, float4* __restrict__ out,
                                                   size_t n4) {
    // LAB-BEGIN: a grid-stride loop over tiles of B x THREADS float4: each thread loads its B elements (all B loads first) and stores them into a __shared__ tile, then writes its own places of out with its partner's elements (threadIdx.x ^ 32); which two barriers, and why?
    __shared__ float4 tile[B * THREADS];  // [B][THREADS] float4 = B x 4 KiB
    const unsigned partner = threadIdx.x ^ 32;
    for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
        float4 r[B];
#pragma unroll
        for (int k = 0; k < B; ++k) r[k] = in[base + k * THREADS + threadIdx.x];  // B x LDG.E.128
#pragma unroll
        for (int k = 0; k < B; ++k) {
            tile[k * THREADS + threadIdx.x] = r[k];  // STS.128
        }
        __syncthreads();  // every slot is stored before any is read
#pragma unroll
        for (int k = 0; k < B; ++k) {
            out[base + k * THREADS + threadIdx.x] = tile[k * THREADS + partner];  // LDS.128 -> STG.E.128
        }
        __syncthreads();  // every slot is read before the next tile's stores overwrite it
    }
    // LAB-STUB: (void)in, (void)out, (void)n4;
    // LAB-END
}

// staged_one: one float4 per thread per tile. A thread's LDG result feeds the
// very next instruction (STS), so each thread has one 16-byte load in flight.
__global__ void staged_one(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
    staged_copy<1>(in, out, n4);
}

// Batched: BATCH float4 per thread per tile, and all BATCH loads are issued
// before the first store uses any of them. The loads are independent, so the
// SM sends them back to back and waits for DRAM once per batch instead of once
// per element: 4x the bytes in flight per thread. Registers hold the batch
// (BATCH x 4 = 16 registers); the tile in shared memory is 16 KiB.
__global__ void staged_batched(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
    staged_copy<BATCH>(in, out, n4);
}

// Both staged kernels run twice: with a full GPU of blocks (8 per SM here),
// and with ONE block per SM (*_occ1): the situation of a real tiled kernel
// whose big shared-memory tiles leave room for one block. The *_occ1 launches
// pass more than half an SM's shared memory as (unused) dynamic shared memory,
// so no second block fits and the 132 blocks land on 132 SMs. With few warps,
// the bytes each thread keeps in flight decide the bandwidth.
// What the staged copies write: float4 i of the output is float4 i ^ 32 of the
// input (a tile is a multiple of 64 float4), so word w is word w ^ 128.
static uint32_t* partner_order(const uint32_t* in, size_t words) {
    uint32_t* want = (uint32_t*)xmalloc(words * 4, "the staged copies' expected output");
    for (size_t w = 0; w < words; ++w) want[w] = in[w ^ 128];
    return want;
}

static void part_staged(const Copy* copy) {
    Copy staged = *copy;  // the same buffers, checked against the staged copies' order
    staged.want = partner_order(copy->want, copy->bytes / 4);
    const Copy* c = &staged;
    const size_t n4 = c->bytes / sizeof(float4);
    const unsigned full_one = (unsigned)persistent_grid((const void*)staged_one, THREADS, 0);
    const unsigned full_batched = (unsigned)persistent_grid((const void*)staged_batched, THREADS, 0);
    const size_t occ1_one = smem_for_one_block_per_sm((const void*)staged_one, THREADS, 0);
    const size_t occ1_batched = smem_for_one_block_per_sm((const void*)staged_batched, THREADS, 0);
    const unsigned sms = (unsigned)sm_count();
    COPY_PART(c, "staged_one", staged_one<<<full_one, THREADS, 0, c->s>>>(c->src, c->dst, n4));
    COPY_PART(c, "staged_batched", staged_batched<<<full_batched, THREADS, 0, c->s>>>(c->src, c->dst, n4));
    COPY_PART(c, "staged_one_occ1", staged_one<<<sms, THREADS, occ1_one, c->s>>>(c->src, c->dst, n4));
    COPY_PART(c, "staged_batched_occ1",
              staged_batched<<<sms, THREADS, occ1_batched, c->s>>>(c->src, c->dst, n4));
    record_gpu_line(
        "%d threads per block; resident blocks per SM: copy_gridstride %d, staged_one %d, "
        "staged_batched %d, staged_one_occ1 %d, staged_batched_occ1 %d",
        THREADS, blocks_per_sm((const void*)copy_gridstride, THREADS, 0),
        blocks_per_sm((const void*)staged_one, THREADS, 0),
        blocks_per_sm((const void*)staged_batched, THREADS, 0),
        blocks_per_sm((const void*)staged_one, THREADS, occ1_one),
        blocks_per_sm((const void*)staged_batched, THREADS, occ1_batched));
    free((void*)staged.want);
}

// ---- Overlap: a transfer and a kernel at the same time ----------------------------
// A pinned H2D transfer and `passes` copy_float4 launches (as many as take
// about as long as the transfer). Serial: both on stream s, one after the
// other. Concurrent: the kernels run on a second stream, forked from and
// joined back into s with events, so the copy engine and the SMs work at the
// same time and the pair takes about max(t_h2d, t_kernels), not the sum.
static void overlap_once(const Copy* c, float4* d_h2d, const uint32_t* pin_src, int passes, int concurrent,
                         cudaStream_t side, cudaEvent_t fork, cudaEvent_t join) {
    cudaStream_t ks = c->s;
    if (concurrent) {
        CUDA_CHECK(cudaEventRecord(fork, c->s));
        CUDA_CHECK(cudaStreamWaitEvent(side, fork, 0));
        ks = side;
    }
    CUDA_CHECK(cudaMemcpyAsync(d_h2d, pin_src, c->bytes, cudaMemcpyHostToDevice, c->s));
    const size_t n4 = c->bytes / sizeof(float4);
    for (int p = 0; p < passes; ++p) {
        copy_float4<<<(unsigned)(n4 / THREADS), THREADS, 0, ks>>>(c->src, c->dst, n4);
        CHECK_LAUNCH();
    }
    if (concurrent) {
        CUDA_CHECK(cudaEventRecord(join, side));
        CUDA_CHECK(cudaStreamWaitEvent(c->s, join, 0));
    }
}

static void part_overlap(const Copy* c, float4* d_h2d) {
    uint32_t* pin_src = NULL;
    CUDA_CHECK(cudaMallocHost((void**)&pin_src, c->bytes));
    memcpy(pin_src, c->want, c->bytes);
    cudaStream_t side;  // non-blocking, as s: neither serializes with the legacy default stream
    cudaEvent_t fork, join;
    CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    // Repeat the kernel so it takes about as long as the transfer: then perfect
    // overlap halves the serial time, and any shortfall is easy to see.
    const float ms_h2d = perf_ms("h2d_pinned"), ms_copy = perf_ms("copy_float4");
    int passes =
        ms_copy > 0.f ? (int)(ms_h2d / ms_copy + 0.5f) : 1;  // 0: a check failed, the part was not timed
    passes = passes < 1 ? 1 : passes > 1000 ? 1000 : passes;
    poison_device(d_h2d, c->bytes, c->s);
    poison_device(c->dst, c->bytes, c->s);
    overlap_once(c, d_h2d, pin_src, passes, 1, side, fork, join);
    const size_t wrong = check_device("overlap_h2d", d_h2d, c->want, c->bytes / 4, c->s) +
                         check_device("overlap_kernel", c->dst, c->want, c->bytes / 4, c->s);
    const double bytes = (double)c->bytes + passes * 2.0 * c->bytes;  // PCIe once, plus every pass's copy
    if (!wrong) {  // both halves right: only then is the time worth reporting
        for (Timer t = timer_begin(c->cli, c->s, "overlap_serial", bytes); timer_next(&t);)
            overlap_once(c, d_h2d, pin_src, passes, 0, side, fork, join);
        for (Timer t = timer_begin(c->cli, c->s, "overlap_concurrent", bytes); timer_next(&t);)
            overlap_once(c, d_h2d, pin_src, passes, 1, side, fork, join);
    }
    const float serial = perf_ms("overlap_serial"), concurrent = perf_ms("overlap_concurrent");
    const float ms_kernels = passes * ms_copy, shorter = ms_h2d < ms_kernels ? ms_h2d : ms_kernels;
    if (serial > 0.f && concurrent > 0.f && shorter > 0.f)
        record_time_line(
            "overlap: h2d_pinned %.2f ms + %d x copy_float4 %.2f ms; serial %.2f ms, concurrent %.2f ms "
            "(%.0f %% of the shorter part hidden)",
            ms_h2d, passes, ms_kernels, serial, concurrent, 100.0 * (serial - concurrent) / shorter);
    else  // a check this part depends on failed, so something was not timed
        record_time_line("overlap: not timed (a check it depends on failed)");
    CUDA_CHECK(cudaEventDestroy(fork));
    CUDA_CHECK(cudaEventDestroy(join));
    CUDA_CHECK(cudaStreamDestroy(side));
    CUDA_CHECK(cudaFreeHost(pin_src));
}

// ---------------------------------------------------------------------------
static const IntOption kOptions[] = {
    {"--mib", "N", "size of every buffer in MiB (device copies and host transfers)", 1, 16384, 1024, 32},
};
static void check_arguments(const Cli* cli) {
    char what[32];
    snprintf(what, sizeof what, "--mib %lld", cli->value[0]);
    require_host_memory(what,
                        5 * ((size_t)cli->value[0] << 20));  // the input, 3 transfer buffers, the readback
}

static const CliSpec kCli = {
    "01_memcpy_baseline: cudaMemcpy, copy kernels and a shared-memory staged copy, each\n"
    "checked bit for bit and timed as a fraction of cudaMemcpy D2D.",
    CLI_REPS | CLI_SEED, kOptions, 1, check_arguments};

static void print_problem(const Cli* cli, size_t bytes) {
    print_header("01_memcpy_baseline",
                 "what a plain copy costs (cudaMemcpy, LDG/STS, staging, host transfers)");
    printf("problem: %zu float32 per buffer (%lld MiB), every output checked bit for bit, seed %u\n",
           bytes / sizeof(float), cli->value[0], cli->seed);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const size_t bytes = (size_t)cli.value[0] << 20;
    char what[32];
    snprintf(what, sizeof what, "--mib %lld", cli.value[0]);
    require_hopper();
    require_device_memory(what, 3 * bytes);  // source, destination, the overlap's H2D destination
    print_problem(&cli, bytes);
    uint32_t* want = (uint32_t*)xmalloc(bytes, "the input");
    fill_seeded_words(want, bytes / 4, cli.seed);
    float4 *src = NULL, *dst = NULL, *h2d = NULL;
    CUDA_CHECK(cudaMalloc((void**)&src, bytes));
    CUDA_CHECK(cudaMalloc((void**)&dst, bytes));
    CUDA_CHECK(cudaMalloc((void**)&h2d, bytes));
    cudaStream_t s;  // non-blocking: it must not serialize with the legacy default stream
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const Copy c = {&cli, s, bytes, src, dst, want};

    part_host_transfers(&c, src);  // also leaves the checked input in src
    part_memcpy(&c);
    part_copy_widths(&c);
    part_harness_self_test(&c);
    part_gridstride(&c);
    part_staged(&c);
    part_overlap(&c, h2d);
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    CUDA_CHECK(cudaFree(h2d));
    free(want);
    return finish();
}
