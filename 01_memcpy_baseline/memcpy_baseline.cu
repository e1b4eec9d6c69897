// 01_memcpy_baseline: what a plain copy costs.
//
// What it teaches
//   Every later step is measured as a fraction of cudaMemcpy device-to-device,
//   so this step measures that ceiling and the classic ways to approach it:
//     copy_scalar      one 4-byte LDG + STG per thread
//     copy_float4      one 16-byte LDG.E.128 + STG.E.128 per thread
//     copy_gridstride  float4, a grid that fills the GPU once and loops
//     staged_one       global -> registers -> shared -> global, one float4 per
//                      thread per tile, with the two __syncthreads() of the
//                      classic tile loop (each LDG is followed by its STS)
//     staged_batched   the same with 4 float4 per thread, all 4 loads issued
//                      before the first store: more bytes in flight per thread
//     *_occ1           both staged kernels again with one block per SM, where
//                      few warps are resident and loads in flight decide speed
//   and the host side: pageable vs pinned transfers, and an H2D copy overlapped
//   with a kernel on another stream.
//
// New since the previous step: everything (this is the first step). The
// plumbing (checks, CLI, timing, the output contract) is common/tutorial.cuh.
// PTX wrappers introduced: none; the SASS to look for is LDG.E / LDG.E.128,
// STS.128, LDS.128, STG.E(.128) and BAR.SYNC (`make sass-01`).
//
// Run
//   make run-01                      1 GiB buffers (far beyond the 60 MiB L2)
//   make run-01 ARGS="--mib 4096"    other sizes; --quick for sanitizers
//   make check-01                    run and compare with expected_output.txt
//
// A passing run prints one "check ... PASS" line per part (every element of
// every output is compared bit for bit with the seeded input, outputs poisoned
// first), the GPU line, one PERF line per part as a fraction of cudaMemcpy
// D2D, a TIME line for the overlap, and "RESULT: PASS"; exit code 0.
#include "tutorial.cuh"

#define THREADS 256  // threads per block for every kernel here
#define BATCH 4      // float4 per thread per tile in staged_batched

// ---------------------------------------------------------------------------
// CPU reference
// ---------------------------------------------------------------------------
// A copy's reference output is its input, so the host keeps the seeded input
// (fill_seeded_words) and every check compares the full output with it, word
// for word. Sizes are whole MiB: 2^16 float4 per MiB, a multiple of every tile
// below, so this step has no tails (step 02 handles them with zero-fill).

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------
// One thread, one float: each warp moves 128 B per instruction. The memory
// system needs many bytes in flight to hide DRAM latency (Little's law), and
// here each thread contributes only 4 B, so far more instructions and threads
// are needed for the same bytes.
__global__ void copy_scalar(const float* __restrict__ in, float* __restrict__ out, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// One thread, one float4: LDG.E.128 / STG.E.128, 512 B per warp instruction,
// a quarter of the instructions for the same bytes. Needs 16-byte aligned
// addresses (cudaMalloc gives 256-byte alignment).
__global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

// Grid-stride: launch exactly as many blocks as are resident at once (see
// persistent_grid) and let each thread walk the array in steps of the whole
// grid. Same bytes per instruction as copy_float4; no block ever waits to be
// scheduled, and the block count no longer depends on the problem size.
__global__ void copy_gridstride(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) out[i] = in[i];
}

// The classic staged copy: global -> registers -> shared -> global, one tile of
// THREADS float4 (4 KiB) per iteration. Thread t stores element t of the tile
// and then reads element t ^ 32, which another warp stored, so the data really
// crosses threads through shared memory, as it does in every tiled kernel:
//   1st __syncthreads: every element of the tile is in shared before any is read;
//   2nd __syncthreads: every element has been read before the next tile's
//                      stores overwrite the buffer.
// Drop either one and `make check-01` counts wrong elements and
// `make sanitize-01` (racecheck) reports the hazard.
// The load's result is needed by the very next instruction (STS), so each
// thread has one 16-byte load in flight at a time.
__global__ void staged_one(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
    __shared__ float4 tile[THREADS];  // [THREADS] float4 = 4 KiB
    const unsigned partner = threadIdx.x ^ 32;
    for (size_t base = (size_t)blockIdx.x * THREADS; base < n4; base += (size_t)gridDim.x * THREADS) {
        tile[threadIdx.x] = in[base + threadIdx.x];  // LDG.E.128 -> STS.128
        __syncthreads();
        out[base + partner] = tile[partner];  // LDS.128 -> STG.E.128
        __syncthreads();
    }
}

// Batched: BATCH float4 per thread per tile, and all BATCH loads are issued
// before the first store uses any of them. The loads are independent, so the
// SM sends them back to back and waits for DRAM once per batch instead of once
// per element: 4x the bytes in flight per thread. Registers hold the batch
// (BATCH x 4 = 16 registers); the tile in shared memory is 16 KiB.
__global__ void staged_batched(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
    __shared__ float4 tile[BATCH * THREADS];  // [BATCH][THREADS] float4 = 16 KiB
    const unsigned partner = threadIdx.x ^ 32;
    for (size_t base = (size_t)blockIdx.x * BATCH * THREADS; base < n4;
         base += (size_t)gridDim.x * BATCH * THREADS) {
        float4 r[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; ++k) r[k] = in[base + k * THREADS + threadIdx.x];  // 4 x LDG.E.128
#pragma unroll
        for (int k = 0; k < BATCH; ++k) tile[k * THREADS + threadIdx.x] = r[k];  // 4 x STS.128
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BATCH; ++k) out[base + k * THREADS + partner] = tile[k * THREADS + partner];
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------
// Host launchers: each enqueues one copy of `bytes` on a stream
// ---------------------------------------------------------------------------
// The *_occ1 variants run the same staged kernels with one block (8 warps) per
// SM instead of a full GPU of blocks: the situation of a real tiled kernel
// whose big shared-memory tiles leave room for one block. With few warps, the
// bytes each thread keeps in flight decide the bandwidth.
typedef enum {
    COPY_SCALAR, COPY_FLOAT4, COPY_GRIDSTRIDE, STAGED_ONE, STAGED_BATCHED, STAGED_ONE_OCC1,
    STAGED_BATCHED_OCC1, NUM_KERNELS
} Kernel;

// The kernel each variant launches (the *_occ1 variants reuse the staged ones).
static const void* kernel_fn(Kernel k) {
    switch (k) {
    case COPY_SCALAR: return (const void*)copy_scalar;
    case COPY_FLOAT4: return (const void*)copy_float4;
    case COPY_GRIDSTRIDE: return (const void*)copy_gridstride;
    case STAGED_ONE:
    case STAGED_ONE_OCC1: return (const void*)staged_one;
    default: return (const void*)staged_batched;
    }
}

static size_t smem_for(Kernel k) {
    if (k == STAGED_ONE_OCC1 || k == STAGED_BATCHED_OCC1) return smem_for_one_block_per_sm(kernel_fn(k), THREADS, 0);
    return 0;
}

static const char* const kernel_name[NUM_KERNELS] = {"copy_scalar", "copy_float4", "copy_gridstride",
                                                      "staged_one", "staged_batched", "staged_one_occ1",
                                                      "staged_batched_occ1"};

typedef struct {
    Kernel kernel;
    const void* src;
    void* dst;
    size_t bytes;
    unsigned grid;  // blocks, fixed before timing (no occupancy query inside a timed region)
    size_t smem;    // dynamic shared memory: unused by the kernel, it only limits residency
    int passes;     // how many times to repeat the copy (the overlap part uses > 1)
} CopyJob;

// copy_scalar and copy_float4 launch one thread per element; the grid-stride
// kernels launch the persistent grid (every block resident at once) and loop;
// the *_occ1 variants launch one block per SM and loop, with enough (unused)
// dynamic shared memory that no second block fits on an SM.
static unsigned grid_for(Kernel k, size_t bytes) {
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    switch (k) {
    case COPY_SCALAR: return (unsigned)(bytes / sizeof(float) / THREADS);
    case COPY_FLOAT4: return (unsigned)(bytes / sizeof(float4) / THREADS);
    case COPY_GRIDSTRIDE:
    case STAGED_ONE:
    case STAGED_BATCHED: return (unsigned)persistent_grid(kernel_fn(k), THREADS, 0);
    default: return (unsigned)sms;
    }
}

static void enqueue_copy(void* ctx, cudaStream_t s) {
    const CopyJob* j = (const CopyJob*)ctx;
    const size_t n = j->bytes / sizeof(float), n4 = j->bytes / sizeof(float4);
    for (int p = 0; p < j->passes; ++p) {
        switch (j->kernel) {
        case COPY_SCALAR:
            copy_scalar<<<j->grid, THREADS, j->smem, s>>>(
                (const float*)j->src, (float*)j->dst, n);
            break;
        case COPY_FLOAT4:
            copy_float4<<<j->grid, THREADS, j->smem, s>>>(
                (const float4*)j->src, (float4*)j->dst, n4);
            break;
        case COPY_GRIDSTRIDE:
            copy_gridstride<<<j->grid, THREADS, j->smem, s>>>(
                (const float4*)j->src, (float4*)j->dst, n4);
            break;
        case STAGED_ONE:
        case STAGED_ONE_OCC1:
            staged_one<<<j->grid, THREADS, j->smem, s>>>(
                (const float4*)j->src, (float4*)j->dst, n4);
            break;
        case STAGED_BATCHED:
        case STAGED_BATCHED_OCC1:
            staged_batched<<<j->grid, THREADS, j->smem, s>>>(
                (const float4*)j->src, (float4*)j->dst, n4);
            break;
        default:
            break;
        }
        CHECK_LAUNCH();
    }
}

// A host <-> device transfer. cudaMemcpyAsync from pageable memory is staged by
// the driver through its own pinned buffers, chunk by chunk, so it is slower
// and blocks the host; from pinned memory the copy engine reads the host
// buffer directly (DMA) and the call returns at once.
typedef struct {
    void* dst;
    const void* src;
    size_t bytes;
    cudaMemcpyKind kind;
} TransferJob;

static void enqueue_transfer(void* ctx, cudaStream_t s) {
    const TransferJob* j = (const TransferJob*)ctx;
    CUDA_CHECK(cudaMemcpyAsync(j->dst, j->src, j->bytes, j->kind, s));
}

// Overlap: a pinned H2D transfer and a copy kernel (repeated `passes` times so
// both take about as long). Serial: both on one stream, one after the other.
// Concurrent: the kernel runs on a second stream, forked from and joined back
// into the timed stream with events, so the copy engine and the SMs work at
// the same time and the pair takes about max(t_h2d, t_kernel), not the sum.
typedef struct {
    TransferJob h2d;
    CopyJob kernel;
    int concurrent;
    cudaStream_t side;
    cudaEvent_t fork, join;
} OverlapJob;

static void enqueue_overlap(void* ctx, cudaStream_t s) {
    OverlapJob* j = (OverlapJob*)ctx;
    cudaStream_t ks = s;
    if (j->concurrent) {
        CUDA_CHECK(cudaEventRecord(j->fork, s));
        CUDA_CHECK(cudaStreamWaitEvent(j->side, j->fork, 0));
        ks = j->side;
    }
    enqueue_transfer(&j->h2d, s);
    enqueue_copy(&j->kernel, ks);
    if (j->concurrent) {
        CUDA_CHECK(cudaEventRecord(j->join, j->side));
        CUDA_CHECK(cudaStreamWaitEvent(s, j->join, 0));
    }
}

// Runs one job once on `s`, then reads `dev` back and checks it word for word
// against `want`. `dev` was poisoned by the caller.
static void run_and_check(const char* name, EnqueueFn fn, void* job, cudaStream_t s, const void* dev,
                          uint32_t* readback, const uint32_t* want, size_t bytes) {
    fn(job, s);
    memset(readback, POISON_BYTE, bytes);
    CUDA_CHECK(cudaMemcpyAsync(readback, dev, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    check_words(name, readback, want, bytes / sizeof(uint32_t));
}

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------
int main(int argc, char** argv) {
    const IntOption opts[] = {
        {"--mib", "N", "size of every buffer in MiB (device copies and host transfers)", 1, 16384, 1024, 32},
    };
    Cli cli = parse_cli(argc, argv,
                        "01_memcpy_baseline: cudaMemcpy, copy kernels and a shared-memory staged copy,\n"
                        "each checked bit for bit and timed as a fraction of cudaMemcpy D2D.",
                        opts, 1);
    const long long mib = cli.value[0];
    const size_t bytes = (size_t)mib << 20;
    const size_t words = bytes / sizeof(uint32_t);

    require_hopper();

    // Three device buffers (copy source, copy destination, H2D destination of
    // the overlap part) and four host buffers.
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (3 * bytes + (256u << 20) > free_b)
        die_usage("--mib %lld needs 3 x %lld MiB of device memory, only %zu MiB are free", mib,
                  mib, free_b >> 20);

    print_header("01_memcpy_baseline", "what a plain copy costs (cudaMemcpy, LDG/STS, staging, host transfers)");
    printf("problem: %zu float32 per buffer (%lld MiB), every output checked bit for bit, seed %u\n",
           bytes / sizeof(float), mib, cli.seed);

    uint32_t *want = (uint32_t*)malloc(bytes), *page_dst = (uint32_t*)malloc(bytes);  // pageable
    uint32_t *pin_src = NULL, *pin_dst = NULL;                                         // pinned
    if (!want || !page_dst) die_usage("--mib %lld: cannot allocate 2 x %lld MiB of host memory", mib, mib);
    CUDA_CHECK(cudaMallocHost((void**)&pin_src, bytes));
    CUDA_CHECK(cudaMallocHost((void**)&pin_dst, bytes));
    void *d_src = NULL, *d_dst = NULL, *d_h2d = NULL;
    CUDA_CHECK(cudaMalloc(&d_src, bytes));
    CUDA_CHECK(cudaMalloc(&d_dst, bytes));
    CUDA_CHECK(cudaMalloc(&d_h2d, bytes));
    cudaStream_t s, side;  // non-blocking: they must not serialize with the legacy default stream
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));

    fill_seeded_words(want, words, cli.seed);
    memcpy(pin_src, want, bytes);

    // --- checks: every part once, outputs poisoned first --------------------
    TransferJob h2d_page = {d_src, want, bytes, cudaMemcpyHostToDevice};
    TransferJob d2h_page = {page_dst, d_src, bytes, cudaMemcpyDeviceToHost};
    TransferJob h2d_pin = {d_src, pin_src, bytes, cudaMemcpyHostToDevice};
    TransferJob d2h_pin = {pin_dst, d_src, bytes, cudaMemcpyDeviceToHost};

    // Each H2D lands in poisoned device memory (read back through pinned memory);
    // each D2H lands in poisoned host memory and is compared where it landed.
    const TransferJob* round_trips[2][2] = {{&h2d_page, &d2h_page}, {&h2d_pin, &d2h_pin}};
    const char* const round_trip_names[2][2] = {{"h2d_pageable", "d2h_pageable"}, {"h2d_pinned", "d2h_pinned"}};
    for (int r = 0; r < 2; ++r) {
        const TransferJob *up = round_trips[r][0], *down = round_trips[r][1];
        poison_device(d_src, bytes, s);
        run_and_check(round_trip_names[r][0], enqueue_transfer, (void*)up, s, d_src, pin_dst, want, bytes);
        memset(down->dst, POISON_BYTE, bytes);
        enqueue_transfer((void*)down, s);
        CUDA_CHECK(cudaStreamSynchronize(s));
        check_words(round_trip_names[r][1], (const uint32_t*)down->dst, want, words);
    }
    // From here on d_src holds the seeded input (it passed the checks above).

    MemcpyJob d2d = {d_dst, d_src, bytes};
    poison_device(d_dst, bytes, s);
    run_and_check("cudaMemcpy_D2D", enqueue_memcpy_d2d, &d2d, s, d_dst, pin_dst, want, bytes);

    CopyJob copies[NUM_KERNELS];
    for (int k = 0; k < NUM_KERNELS; ++k) {
        CopyJob job = {(Kernel)k, d_src, d_dst, bytes, grid_for((Kernel)k, bytes), smem_for((Kernel)k), 1};
        copies[k] = job;
        poison_device(d_dst, bytes, s);
        run_and_check(kernel_name[k], enqueue_copy, &copies[k], s, d_dst, pin_dst, want, bytes);
    }

    OverlapJob overlap = {h2d_pin, copies[COPY_FLOAT4], 1, side, NULL, NULL};
    overlap.h2d.dst = d_h2d;
    CUDA_CHECK(cudaEventCreateWithFlags(&overlap.fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&overlap.join, cudaEventDisableTiming));
    poison_device(d_h2d, bytes, s);
    poison_device(d_dst, bytes, s);
    run_and_check("overlap_h2d", enqueue_overlap, &overlap, s, d_h2d, pin_dst, want, bytes);
    memset(pin_dst, POISON_BYTE, bytes);
    CUDA_CHECK(cudaMemcpyAsync(pin_dst, d_dst, bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    check_words("overlap_kernel", pin_dst, want, words);

    // --- timing: memcpy reference first, then every part --------------------
    print_gpu();
    // Resident blocks per SM of each grid-stride launch, from the occupancy API.
    int per_sm[NUM_KERNELS];
    for (int k = COPY_GRIDSTRIDE; k < NUM_KERNELS; ++k)
        per_sm[k] = blocks_per_sm(kernel_fn((Kernel)k), THREADS, copies[k].smem);
    printf("GPU    %d threads per block; resident blocks per SM: copy_gridstride %d, staged_one %d, "
           "staged_batched %d, staged_one_occ1 %d, staged_batched_occ1 %d\n",
           THREADS, per_sm[COPY_GRIDSTRIDE], per_sm[STAGED_ONE], per_sm[STAGED_BATCHED], per_sm[STAGED_ONE_OCC1],
           per_sm[STAGED_BATCHED_OCC1]);
    measure_memcpy_reference(d_dst, d_src, bytes, &cli);
    float ms[NUM_KERNELS];
    for (int k = 0; k < NUM_KERNELS; ++k) {
        ms[k] = time_median_ms(enqueue_copy, &copies[k], s, &cli);
        print_perf(kernel_name[k], ms[k], 2.0 * bytes);  // each byte read once and written once
    }
    // Host transfers count each byte once: it crosses PCIe once.
    print_perf("h2d_pageable", time_median_ms(enqueue_transfer, &h2d_page, s, &cli), (double)bytes);
    print_perf("d2h_pageable", time_median_ms(enqueue_transfer, &d2h_page, s, &cli), (double)bytes);
    float ms_h2d = time_median_ms(enqueue_transfer, &h2d_pin, s, &cli);
    print_perf("h2d_pinned", ms_h2d, (double)bytes);
    print_perf("d2h_pinned", time_median_ms(enqueue_transfer, &d2h_pin, s, &cli), (double)bytes);

    // Repeat the kernel so it takes about as long as the transfer: then perfect
    // overlap halves the serial time, and any shortfall is easy to see.
    int passes = (int)(ms_h2d / ms[COPY_FLOAT4] + 0.5f);
    overlap.kernel.passes = passes < 1 ? 1 : passes > 1000 ? 1000 : passes;
    const double overlap_bytes = (double)bytes + overlap.kernel.passes * 2.0 * bytes;
    overlap.concurrent = 0;
    float ms_serial = time_median_ms(enqueue_overlap, &overlap, s, &cli);
    overlap.concurrent = 1;
    float ms_concurrent = time_median_ms(enqueue_overlap, &overlap, s, &cli);
    print_perf("overlap_serial", ms_serial, overlap_bytes);
    print_perf("overlap_concurrent", ms_concurrent, overlap_bytes);
    float ms_kernels = overlap.kernel.passes * ms[COPY_FLOAT4];
    float shorter = ms_h2d < ms_kernels ? ms_h2d : ms_kernels;
    printf("TIME   overlap: h2d_pinned %.2f ms + %d x copy_float4 %.2f ms; serial %.2f ms, concurrent %.2f ms "
           "(%.0f %% of the shorter part hidden)\n",
           ms_h2d, overlap.kernel.passes, ms_kernels, ms_serial, ms_concurrent,
           100.0 * (ms_serial - ms_concurrent) / shorter);

    CUDA_CHECK(cudaEventDestroy(overlap.fork));
    CUDA_CHECK(cudaEventDestroy(overlap.join));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaStreamDestroy(side));
    CUDA_CHECK(cudaFree(d_src));
    CUDA_CHECK(cudaFree(d_dst));
    CUDA_CHECK(cudaFree(d_h2d));
    CUDA_CHECK(cudaFreeHost(pin_src));
    CUDA_CHECK(cudaFreeHost(pin_dst));
    free(want);
    free(page_dst);
    return finish();
}
