// 04_tma_store: the Tensor Memory Accelerator, storing: the async proxy,
// bulk groups, and a TMA copy at memory speed.
//
// A TMA store reads shared memory through the ASYNC proxy: what threads wrote
// with ordinary stores is only guaranteed visible to it after every writing
// thread runs fence.proxy.async. Stores complete in bulk groups: .read says
// the source may be reused, the full wait that the writes are done. Parts:
// load, add one, fence, store, reload; boxes at the edge of a matrix inside a
// guard frame; the missing fence, provoked; a 1D bulk store; a 1 GiB copy.
// New since step 03: 04_tma_store/tma_store.cuh (tma_store_2d, bulk_store,
// bulk_commit_group, bulk_wait_group<N>, bulk_wait_group_read<N>).
// SASS: make sass-04. Lesson: 04_tma_store/README.md.
//
// Run: make run-04 [ARGS="--chunk 16"], make check-04.
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "04_tma_store/tma_store.cuh"

#define THREADS 256
#define BOX 64  // part 1-2 boxes: 64 x 64 uint32 = 16 KiB
#define GUARD_WORD 0xDEADBEEFu
#define FRAME 4  // guard columns (16 B) and rows around the part-2 matrix

// ---- Parts 1-2: load, add one, fence, store, reload --------------------------
// Inputs are position-coded as in step 03: element (r, c) is r * cols + c.
// The output matrix sits inside a frame of GUARD_WORDs; its tensor map
// describes only the interior, so a store at the edge must write only inside.
// After the store, the block reloads what it stored into a re-poisoned box
// and copies it out: a store that never landed, or a reload that never came,
// shows.
// The fence is what orders the threads' generic-proxy writes before the
// async-proxy read: the barrier alone orders only the threads, and without
// the fence the store may send the box as it was before the additions.
__global__ void __launch_bounds__(THREADS)
    add_one(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
            uint32_t tiles_x, uint32_t* reloaded) {
    uint32_t* box = (uint32_t*)tma_smem_base();  // [BOX][BOX] uint32, 128-byte aligned
    __shared__ __align__(8) uint64_t bar;
    const uint32_t bytes = BOX * BOX * 4;
    const int32_t col0 = (int32_t)(blockIdx.x % tiles_x * BOX), row0 = (int32_t)(blockIdx.x / tiles_x * BOX);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, bytes);
        tma_load_2d(box, &in_map, col0, row0, &bar);
    }
    MBAR_WAIT(&bar, 0);
    for (uint32_t i = threadIdx.x; i < BOX * BOX; i += blockDim.x) box[i] += 1;  // generic-proxy writes
    fence_proxy_async_shared();  // EVERY writing thread, before the barrier
    __syncthreads();             // the box is complete; hand it to thread 0
    if (threadIdx.x == 0) {
        tma_store_2d(&out_map, col0, row0, box);  // only the in-bounds part is written
        bulk_commit_group();
        bulk_wait_group<0>();  // the FULL wait: the writes are done and visible to this thread
    }
    __syncthreads();  // the store has read the box: it may be poisoned
    poison_smem(box, BOX * BOX);
    __syncthreads();
    if (threadIdx.x == 0) {                  // thread 0 waited for the writes, so its reload sees them
        mbar_arrive_expect_tx(&bar, bytes);  // phase 1
        tma_load_2d(box, &out_map, col0, row0, &bar);
    }
    MBAR_WAIT(&bar, 1);
    for (uint32_t i = threadIdx.x; i < BOX * BOX; i += blockDim.x)
        reloaded[(size_t)blockIdx.x * BOX * BOX + i] = box[i];
}

// The input word at element i: position-coded but not i itself, so that
// "plus one" can never be mistaken for "the next element" (a box shifted by
// one column would otherwise pass). The odd multiplier makes it one-to-one;
// below 2^31, so +1 is never the poison or the guard word.
static uint32_t input_word(uint64_t i) {
    return (uint32_t)(i * 2654435761u) >> 1;
}

static void part_add_one(uint64_t rows, uint64_t cols, cudaStream_t s) {
    const uint64_t pitch = cols + 2 * FRAME, framed_rows = rows + 2 * FRAME, n = rows * cols;
    const size_t framed = framed_rows * pitch;
    const uint32_t tiles_x = (uint32_t)((cols + BOX - 1) / BOX),
                   tiles = tiles_x * (uint32_t)((rows + BOX - 1) / BOX);
    uint32_t* h = (uint32_t*)xmalloc(framed * 4, "the framed matrix");
    for (size_t i = 0; i < n; ++i) h[i] = input_word(i);
    uint32_t *in = NULL, *out = NULL, *reloaded = NULL;
    CUDA_CHECK(cudaMalloc((void**)&in, n * 4));
    CUDA_CHECK(cudaMalloc((void**)&out, framed * 4));
    CUDA_CHECK(cudaMalloc((void**)&reloaded, (size_t)tiles * BOX * BOX * 4));
    CUDA_CHECK(cudaMemcpyAsync(in, h, n * 4, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    for (size_t i = 0; i < framed; ++i) h[i] = GUARD_WORD;
    CUDA_CHECK(cudaMemcpyAsync(out, h, framed * 4, cudaMemcpyHostToDevice, s));
    poison_device(reloaded, (size_t)tiles * BOX * BOX * 4, s);
    // The output map describes only the interior: its address is FRAME rows and
    // FRAME columns (16 B) into the framed buffer, its row stride the framed pitch.
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, in, rows, cols, cols * 4, BOX, BOX,
                                        CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap in_map = make_tensor_map(&spec, "the input matrix (--rows, --cols)");
    spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, out + FRAME * pitch + FRAME, rows, cols, pitch * 4,
                          BOX, BOX, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap out_map = make_tensor_map(&spec, "the framed output (--cols + 8 guard columns)");
    add_one<<<tiles, THREADS, tma_smem_bytes(BOX * BOX * 4), s>>>(in_map, out_map, tiles_x, reloaded);
    CHECK_LAUNCH();
    // The reloads: input + 1 inside, the load's zero fill outside, box by box.
    uint32_t* want = (uint32_t*)xmalloc((size_t)tiles * BOX * BOX * 4, "the reloaded boxes");
    for (uint32_t t = 0; t < tiles; ++t)
        for (uint32_t i = 0; i < BOX * BOX; ++i) {
            const uint64_t r = (uint64_t)(t / tiles_x) * BOX + i / BOX,
                           c = (uint64_t)(t % tiles_x) * BOX + i % BOX;
            want[(size_t)t * BOX * BOX + i] = r < rows && c < cols ? input_word(r * cols + c) + 1u : 0u;
        }
    check_device("add_one_reloaded", reloaded, want, (size_t)tiles * BOX * BOX, s);
    // The framed output, read once and checked in two parts: the interior
    // (input + 1) and the frame (untouched guard words).
    CUDA_CHECK(cudaMemcpyAsync(h, out, framed * 4, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    uint32_t* got = (uint32_t*)xmalloc(framed * 4, "the framed output, split");
    free(want);
    want = (uint32_t*)xmalloc(framed * 4, "the framed output's expected values");
    size_t inside = 0, outside = n;  // interior words first, then the frame's
    for (uint64_t r = 0; r < framed_rows; ++r)
        for (uint64_t c = 0; c < pitch; ++c) {
            const int in_matrix = r >= FRAME && r < rows + FRAME && c >= FRAME && c < cols + FRAME;
            const size_t k = in_matrix ? inside++ : outside++;
            got[k] = h[r * pitch + c];
            want[k] = in_matrix ? input_word((r - FRAME) * cols + (c - FRAME)) + 1u : GUARD_WORD;
        }
    check_words("add_one_stored", got, want, n);
    check_words("edges_guard_untouched", got + n, want + n, framed - n);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(reloaded));
    free(h);
    free(got);
    free(want);
}

// ---- Part 3: the missing fence, provoked ---------------------------------------
// add_one's threads write, then meet at a barrier, then thread 0 stores: a
// long way between the last ordinary store and the TMA's read. Here one
// thread writes a whole 16 KiB buffer with STS.128 and issues the bulk store
// right after, round after round with new values, in every block: the
// shortest distance there is. Without the fence nothing would order those
// STS before the store's read; the host counts words that left with an older
// round's value.
#define PROBE_WORDS 4096
#define PROBE_ROUNDS 64

__global__ void __launch_bounds__(32) fence_probe(uint32_t* out) {
    uint4* buf = (uint4*)tma_smem_base();  // [PROBE_WORDS / 4] uint4
    if (threadIdx.x != 0) return;
    for (uint32_t r = 0; r < PROBE_ROUNDS; ++r) {
        const uint32_t v = (blockIdx.x * PROBE_ROUNDS + r) * 2 + 1;  // odd, never poison, new each round
        for (uint32_t i = 0; i < PROBE_WORDS / 4; ++i) buf[i] = make_uint4(v, v, v, v);
        fence_proxy_async_shared();
        bulk_store(out + ((size_t)blockIdx.x * PROBE_ROUNDS + r) * PROBE_WORDS, buf, PROBE_WORDS * 4);
        bulk_commit_group();
        bulk_wait_group_read<0>();  // the store has read buf: the next round may overwrite it
    }
    bulk_wait_group<0>();
}

// A fixed block count (the SMs of an H100 SXM or H200), not sm_count(): the
// check line's word count is part of the expected output on every GPU.
#define PROBE_BLOCKS 132

static void part_fence_probe(cudaStream_t s) {
    const unsigned blocks = PROBE_BLOCKS;
    const size_t words = (size_t)blocks * PROBE_ROUNDS * PROBE_WORDS;
    uint32_t* want = (uint32_t*)xmalloc(words * 4, "the fence probe's expected values");
    for (size_t i = 0; i < words; ++i) want[i] = (uint32_t)(i / PROBE_WORDS) * 2 + 1;
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&out, words * 4));
    poison_device(out, words * 4, s);
    fence_probe<<<blocks, 32, tma_smem_bytes(PROBE_WORDS * 4), s>>>(out);
    CHECK_LAUNCH();
    check_device("fence_probe_one_writer", out, want, words, s);
    CUDA_CHECK(cudaFree(out));
    free(want);
}

// ---- Part 4: 1D bulk store --------------------------------------------------
// The block writes a pattern into shared memory with ordinary stores, fences,
// and one thread stores it with cp.async.bulk. The kernel must not end before
// the store has at least READ its shared source: wait_group.read.
__global__ void __launch_bounds__(THREADS) bulk_store_kernel(uint32_t* out, uint32_t chunk_bytes) {
    uint32_t* buf = (uint32_t*)tma_smem_base();
    const uint32_t words = chunk_bytes / 4;
    const size_t base = (size_t)blockIdx.x * words;
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) buf[i] = (uint32_t)(base + i);
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        bulk_store(out + base, buf, chunk_bytes);
        bulk_commit_group();
        bulk_wait_group_read<0>();  // shared source read: the block may exit
    }
}

static void part_bulk_store(uint32_t chunk_bytes, cudaStream_t s) {
    const size_t bytes = 1u << 20, words = bytes / 4;
    uint32_t* want = (uint32_t*)xmalloc(bytes, "the bulk store's expected values");
    for (size_t i = 0; i < words; ++i) want[i] = (uint32_t)i;
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&out, bytes));
    poison_device(out, bytes, s);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)bulk_store_kernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)tma_smem_bytes(65536)));
    bulk_store_kernel<<<(unsigned)(bytes / chunk_bytes), THREADS, tma_smem_bytes(chunk_bytes), s>>>(
        out, chunk_bytes);
    CHECK_LAUNCH();
    check_device("bulk_store", out, want, words, s);
    CUDA_CHECK(cudaFree(out));
    free(want);
}

// ---- Part 5: a TMA copy -------------------------------------------------------
// The baseline first: step 01's copy_float4, the best plain copy found there
// (one 16-byte load and store per thread, coalesced, 256 threads, one block
// per 4 KiB), timed here in the same process as every TMA copy below.
__global__ void copy_ldg(const uint4* __restrict__ in, uint4* __restrict__ out, size_t n16) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n16) out[i] = in[i];
}

// The buffer as rows of COPY_COLS words, boxes of COPY_BOX_ROWS rows (16 KiB;
// make NVCCFLAGS=-DCOPY_STAGES=8 build-04 changes the shape for experiments).
// One thread does everything: the data never passes through registers, and
// both sides of the copy are the async proxy, so no fence is needed between
// a load's completion (the mbarrier wait) and the store that reads the box.
// The k-th box of the block goes through stage k % STAGES. After store k is
// committed, wait_group.read 1 says store k - 1 has read its stage, which is
// then reloaded with box k - 1 + STAGES. Which boxes are the block's is the
// schedule's business (03_tma_load/pipeline.cuh): chunk, strided or dynamic.
// `finish`, if not NULL, receives each block's end time (%globaltimer).
#define COPY_COLS 256
#define COPY_BOX_ROWS 16  // 16 KiB boxes: the --chunk rule counts 64 per MiB
#ifndef COPY_STAGES
#define COPY_STAGES 4
#endif
static_assert(COPY_STAGES >= 2, "a stage is reloaded only after the next store is issued: 2 stages at least");
#define COPY_BOX_WORDS (COPY_COLS * COPY_BOX_ROWS)

// Stage s holds box `box` of the input: store it back through out_map, to
// where it came from (tma_copy and copy_ring<false>).
static __device__ __forceinline__ void store_box(const CUtensorMap* out_map, uint32_t* stage, uint32_t s,
                                                 uint32_t box) {
    // LAB-BEGIN: store stage s back through out_map, to where box `box` came from (a box is COPY_BOX_ROWS full rows): which coordinates, in which order?
    tma_store_2d(out_map, 0, (int32_t)(box * COPY_BOX_ROWS), stage + s * COPY_BOX_WORDS);
    // LAB-STUB: (void)out_map, (void)stage, (void)s, (void)box;
    // LAB-END
}

__global__ void __launch_bounds__(32)
    tma_copy(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
             uint32_t nboxes, int schedule, uint32_t chunk, unsigned int* counter,
             unsigned long long* finish) {
    uint32_t* stage = (uint32_t*)tma_smem_base();  // [COPY_STAGES][COPY_BOX_ROWS][COPY_COLS] uint32
    __shared__ __align__(8) uint64_t full[COPY_STAGES];
    __shared__ uint32_t box_of[COPY_STAGES];  // which box each stage holds
    if (threadIdx.x != 0) return;             // one thread drives the copy engine
    const uint32_t bytes = COPY_BOX_WORDS * 4;
    Schedule sched = make_schedule(schedule, chunk, nboxes, counter);
    for (int s = 0; s < COPY_STAGES; ++s) mbar_init(&full[s], 1);
    mbar_fence_init();    // one thread inits and uses the barriers: no __syncthreads() needed
    uint32_t issued = 0;  // boxes loaded so far; box `issued` is next
    for (; issued < COPY_STAGES; ++issued) {
        const uint32_t box = next_box(&sched, issued);
        box_of[issued] = box;
        if (box == nboxes) break;
        mbar_arrive_expect_tx(&full[issued], bytes);
        tma_load_2d(stage + issued * COPY_BOX_WORDS, &in_map, 0, (int32_t)(box * COPY_BOX_ROWS),
                    &full[issued]);
    }
    for (uint32_t k = 0; k < issued; ++k) {
        const uint32_t s = k % COPY_STAGES;
        if (!MBAR_WAIT(&full[s], (k / COPY_STAGES) & 1)) break;
        store_box(&out_map, stage, s, box_of[s]);
        bulk_commit_group();
        if (k >= 1 && issued == k - 1 + COPY_STAGES) {  // reload the stage store k - 1 used, if a box is left
            const uint32_t r = (k - 1) % COPY_STAGES, box = next_box(&sched, issued);
            if (box == nboxes) continue;
            bulk_wait_group_read<1>();  // store k - 1 has read stage r
            box_of[r] = box;
            mbar_arrive_expect_tx(&full[r], bytes);
            tma_load_2d(stage + r * COPY_BOX_WORDS, &in_map, 0, (int32_t)(box * COPY_BOX_ROWS), &full[r]);
            ++issued;
        }
    }
    // Every store complete before the block ends: .read would do for its
    // shared memory; the full wait also makes `finish` the copy's true end.
    bulk_wait_group<0>();
    if (finish) finish[blockIdx.x] = globaltimer_ns();
}

// The copy rebuilt on the Hopper pipeline (step 03's sum_ring): warp 0's
// elected lane loads, warp 1's elected lane stores, and two rings of
// mbarriers pass the stages between them. full[s] (count 1) completes when a
// box has landed; empty[s] (count 1) when the store that read it has finished
// reading (the storer's wait_group.read 1 says so for the store before the
// newest, and the storer arrives for it). Loads run ahead of stores by up to
// COPY_STAGES boxes, and neither side ever waits for the other's issue.
// Persistent and dynamic: units of COPY_UNIT boxes from a counter. BULK: each
// box is moved as 16 contiguous KiB with cp.async.bulk, both ways.
#ifndef COPY_UNIT
#define COPY_UNIT 2  // on the H200 2 beat 4 and 8 (results/experiments/persistent_copy_NVIDIA_H200.txt, C)
#endif

template <bool BULK>
__global__ void __launch_bounds__(64)
    copy_ring(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
              const uint32_t* in, uint32_t* out, uint32_t nboxes, unsigned int* counter) {
    uint32_t* stage = (uint32_t*)tma_smem_base();  // [COPY_STAGES][COPY_BOX_ROWS][COPY_COLS] uint32
    __shared__ __align__(8) uint64_t full[COPY_STAGES], empty[COPY_STAGES];
    __shared__ uint32_t box_of[COPY_STAGES];
    const uint32_t bytes = COPY_BOX_WORDS * 4;
    if (threadIdx.x == 0) {
        for (int s = 0; s < COPY_STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 1);
        }
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x / 32 == 0) {  // producer: loads
        if (!elect_one_sync()) return;
        Schedule sched = make_schedule(SCHED_DYNAMIC, COPY_UNIT, nboxes, counter);
        for (uint32_t i = 0;; ++i) {
            const uint32_t s = i % COPY_STAGES, pass = i / COPY_STAGES;
            if (!MBAR_WAIT(&empty[s], (pass & 1) ^ 1)) return;  // stage s is free (first pass: at once)
            const uint32_t box = next_box(&sched, i);
            box_of[s] = box;
            if (box == nboxes) {
                mbar_arrive(&full[s]);  // no more: complete full[s] without a copy
                return;
            }
            mbar_arrive_expect_tx(&full[s], bytes);
            if (BULK)
                bulk_load(stage + s * COPY_BOX_WORDS, in + (size_t)box * COPY_BOX_WORDS, bytes, &full[s]);
            else
                tma_load_2d(stage + s * COPY_BOX_WORDS, &in_map, 0, (int32_t)(box * COPY_BOX_ROWS), &full[s]);
        }
    }
    if (!elect_one_sync()) return;  // storer: warp 1's elected lane
    for (uint32_t i = 0;; ++i) {
        const uint32_t s = i % COPY_STAGES, pass = i / COPY_STAGES;
        if (!MBAR_WAIT(&full[s], pass & 1)) break;
        const uint32_t box = box_of[s];
        if (box == nboxes) break;
        if (BULK)
            bulk_store(out + (size_t)box * COPY_BOX_WORDS, stage + s * COPY_BOX_WORDS, bytes);
        else
            store_box(&out_map, stage, s, box);
        bulk_commit_group();
        if (i >= 1) {
            bulk_wait_group_read<1>();  // store i - 1 has read its stage: free it
            mbar_arrive(&empty[(i - 1) % COPY_STAGES]);
        }
    }
    bulk_wait_group<0>();  // every store complete before the block ends (.read would do)
}

typedef struct {
    cudaStream_t s;
    uint32_t nboxes;
    const CUtensorMap *src_map, *dst_map;
    uint32_t* dst;
    unsigned int* counter;         // the dynamic schedules' counter, reset before each launch
    size_t smem, smem_one_per_sm;  // the stages; the same, padded so that one block fits per SM
    const uint32_t* src;
} Copy;

// One launch. SCHED_CHUNK launches a block per `chunk` boxes; the others one
// block per SM. A grid of one block per SM gets the padded shared memory, so
// that the blocks really spread over the SMs.
static void launch_tma_copy(const Copy* c, int schedule, uint32_t chunk, unsigned long long* finish) {
    const unsigned grid = schedule == SCHED_CHUNK ? (c->nboxes + chunk - 1) / chunk : (unsigned)sm_count();
    const size_t smem = grid <= (unsigned)sm_count() ? c->smem_one_per_sm : c->smem;
    CUDA_CHECK(cudaMemsetAsync(c->counter, 0, sizeof *c->counter, c->s));
    tma_copy<<<grid, 32, smem, c->s>>>(*c->src_map, *c->dst_map, c->nboxes, schedule, chunk, c->counter,
                                       finish);
}

template <bool BULK>
static void launch_copy_ring(const Copy* c) {
    CUDA_CHECK(cudaMemsetAsync(c->counter, 0, sizeof *c->counter, c->s));
    copy_ring<BULK><<<sm_count(), 64, c->smem_one_per_sm, c->s>>>(*c->src_map, *c->dst_map, c->src, c->dst,
                                                                  c->nboxes, c->counter);
}

// Where the persistent copy's time goes: one more launch with each block's
// end time recorded. If blocks end far apart, the GPU idles at the end while
// the last ones finish their fixed shares.
static void finish_spread(const Copy* c, int schedule, uint32_t chunk, const char* name) {
    const unsigned grid = schedule == SCHED_CHUNK ? (c->nboxes + chunk - 1) / chunk : (unsigned)sm_count();
    unsigned long long* finish = (unsigned long long*)xmalloc(grid * sizeof *finish, "the blocks' end times");
    unsigned long long* d_finish = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_finish, grid * sizeof *finish));
    launch_tma_copy(c, schedule, chunk, d_finish);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpyAsync(finish, d_finish, grid * sizeof *finish, cudaMemcpyDeviceToHost, c->s));
    CUDA_CHECK(cudaStreamSynchronize(c->s));
    unsigned long long first = finish[0], last = finish[0];
    for (unsigned b = 1; b < grid; ++b) {
        first = finish[b] < first ? finish[b] : first;
        last = finish[b] > last ? finish[b] : last;
    }
    const double run_us = perf_ms(name) * 1e3, spread_us = (last - first) * 1e-3;
    if (run_us > 0)  // 0: the part's check failed and it was not timed
        record_time_line(
            "%s: the %u blocks ended within %.1f us of each other, in a run of %.1f us (%.0f %%)", name, grid,
            spread_us, run_us, 100.0 * spread_us / run_us);
    CUDA_CHECK(cudaFree(d_finish));
    free(finish);
}

static void part_copy(size_t bytes, uint32_t chunk, const Cli* cli, cudaStream_t s) {
    const size_t words = bytes / 4;
    uint32_t* want = (uint32_t*)xmalloc(bytes, "the copy's input");
    fill_seeded_words(want, words, cli->seed);
    uint32_t *src = NULL, *dst = NULL;
    unsigned int* counter = NULL;
    CUDA_CHECK(cudaMalloc((void**)&src, bytes));
    CUDA_CHECK(cudaMalloc((void**)&dst, bytes));
    CUDA_CHECK(cudaMalloc((void**)&counter, sizeof *counter));
    CUDA_CHECK(cudaMemcpyAsync(src, want, bytes, cudaMemcpyHostToDevice, s));
    measure_memcpy_reference(dst, src, bytes, cli, s);
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, src, words / COPY_COLS, COPY_COLS,
                                        COPY_COLS * 4, COPY_BOX_ROWS, COPY_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap src_map = make_tensor_map(&spec, "the copy's source (--mib)");
    spec.address = dst;
    const CUtensorMap dst_map = make_tensor_map(&spec, "the copy's destination (--mib)");
    const size_t smem = tma_smem_bytes((size_t)COPY_STAGES * COPY_BOX_WORDS * 4);
    // copy_tma: one box per block (--chunk 1), as many blocks as fit on an SM
    // at once. The persistent versions: one block per SM (its shared memory
    // padded so that no second one fits), each looping over its boxes.
    CUDA_CHECK(
        cudaFuncSetAttribute((const void*)tma_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const size_t smem_one = smem_for_one_block_per_sm((const void*)tma_copy, 32, smem);
    smem_for_one_block_per_sm((const void*)copy_ring<false>, 64, smem_one);
    smem_for_one_block_per_sm((const void*)copy_ring<true>, 64, smem_one);
    const uint32_t nboxes = (uint32_t)(words / COPY_BOX_WORDS),
                   share = (nboxes + sm_count() - 1) / sm_count();
    const Copy c = {s, nboxes, &src_map, &dst_map, dst, counter, smem, smem_one, src};
    CHECK_AND_TIME("copy_ldg", cli, s, dst, want, words, 2.0 * bytes,
                   copy_ldg<<<(unsigned)(bytes / 16 / THREADS), THREADS, 0, s>>>((const uint4*)src,
                                                                                 (uint4*)dst, bytes / 16));
    CHECK_AND_TIME("copy_tma", cli, s, dst, want, words, 2.0 * bytes,
                   launch_tma_copy(&c, SCHED_CHUNK, chunk, NULL));
    CHECK_AND_TIME("copy_tma_persistent", cli, s, dst, want, words, 2.0 * bytes,
                   launch_tma_copy(&c, SCHED_CHUNK, share, NULL));
    CHECK_AND_TIME("copy_tma_persistent_strided", cli, s, dst, want, words, 2.0 * bytes,
                   launch_tma_copy(&c, SCHED_STRIDED, 1, NULL));
    CHECK_AND_TIME("copy_tma_persistent_dynamic", cli, s, dst, want, words, 2.0 * bytes,
                   launch_tma_copy(&c, SCHED_DYNAMIC, COPY_UNIT, NULL));
    CHECK_AND_TIME("copy_tma_ring", cli, s, dst, want, words, 2.0 * bytes, launch_copy_ring<false>(&c));
    CHECK_AND_TIME("copy_bulk_ring", cli, s, dst, want, words, 2.0 * bytes, launch_copy_ring<true>(&c));
    finish_spread(&c, SCHED_CHUNK, share, "copy_tma_persistent");
    finish_spread(&c, SCHED_STRIDED, 1, "copy_tma_persistent_strided");
    finish_spread(&c, SCHED_DYNAMIC, COPY_UNIT, "copy_tma_persistent_dynamic");
    record_gpu_line(
        "copy_tma: one thread per block, %d stages of %d KiB, %d blocks per SM; persistent: 1 block per "
        "SM, %u boxes each (static) or units of %d boxes (dynamic, rings)",
        COPY_STAGES, COPY_BOX_WORDS * 4 >> 10, blocks_per_sm((const void*)tma_copy, 32, smem), share,
        COPY_UNIT);
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    CUDA_CHECK(cudaFree(counter));
    free(want);
}

// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_BULK, OPT_MIB, OPT_CHUNK, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--rows", "R", "rows of the part 1-2 matrix (uint32)", 1, 1 << 20, 3000, 3000},
    {"--cols", "C", "columns of the part 1-2 matrix (a row must be a multiple of 16 B)", 1, 1 << 20, 2000,
     2000},
    {"--bulk-bytes", "B", "bytes per 1D bulk store in part 4 (must divide 1 MiB)", 16, 65536, 32768, 32768},
    {"--mib", "N", "size of the part-5 copy in MiB", 1, 16384, 1024, 32},
    {"--chunk", "T", "16 KiB boxes per block in copy_tma (must divide 64 x --mib)", 1, 4096, 1, 1},
};
// Every rule before the GPU is touched, and the host memory.
static void check_arguments(const Cli* cli) {
    const uint64_t rows = (uint64_t)cli->value[OPT_ROWS], cols = (uint64_t)cli->value[OPT_COLS];
    const uint32_t bulk_bytes = (uint32_t)cli->value[OPT_BULK];
    char what[96], msg[256];
    snprintf(what, sizeof what, "--rows %llu --cols %llu", (unsigned long long)rows,
             (unsigned long long)cols);
    // The input's rows are cols * 4 bytes apart (the framed output's 32 B
    // more: a multiple of 16 exactly when the input's is), so the rule names --cols.
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, (const void*)256, rows, cols,
                                              cols * 4, BOX, BOX, CU_TENSOR_MAP_SWIZZLE_NONE);
    require_tensor_rules(&spec, what);
    const uint64_t tiles = (rows + BOX - 1) / BOX * ((cols + BOX - 1) / BOX);
    require_grid(what, tiles, "boxes");
    if (bulk_copy_rule_broken(bulk_bytes, msg, sizeof msg)) die_usage("--bulk-bytes %u: %s", bulk_bytes, msg);
    require_divisor("--bulk-bytes", bulk_bytes, 1u << 20, "bytes of the 1 MiB part-4 buffer");
    require_divisor("--chunk", cli->value[OPT_CHUNK], (size_t)cli->value[OPT_MIB] * 64,
                    "16 KiB boxes of the part-5 copy (64 per MiB)");
    // Parts 1-2 hold the framed matrix three times (staging, split, expected)
    // and the reloaded boxes twice; part 5 the copy's input and its readback.
    const size_t frame = (rows + 2 * FRAME) * (cols + 2 * FRAME) * 4, boxes = tiles * BOX * BOX * 4;
    const size_t copy = (size_t)cli->value[OPT_MIB] << 20;
    // Never both at once: each is checked alone and names its own options.
    require_host_memory(what, 3 * frame + 2 * boxes);
    snprintf(what, sizeof what, "--mib %lld", cli->value[OPT_MIB]);
    require_host_memory(what, 2 * copy);
}

static const CliSpec kCli = {
    "04_tma_store: TMA stores, the async-proxy fence, bulk groups, edge boxes and a TMA\n"
    "copy, each checked in full.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint64_t rows = (uint64_t)cli.value[OPT_ROWS], cols = (uint64_t)cli.value[OPT_COLS];
    const size_t copy_bytes = (size_t)cli.value[OPT_MIB] << 20;
    require_hopper();
    const size_t frame = (rows + 2 * FRAME) * (cols + 2 * FRAME), boxes = (rows + BOX) * (cols + BOX);
    require_device_memory("--rows, --cols", (rows * cols + frame + boxes) * 4);
    require_device_memory("--mib", 2 * copy_bytes);
    print_header("04_tma_store", "TMA stores: the async proxy, bulk groups, edges, a TMA copy");
    printf(
        "problem: parts 1-2 a %llu x %llu uint32 matrix in %d x %d boxes inside a %d-element guard frame; "
        "part 4 "
        "bulk stores of %lld B; part 5 a copy of %lld MiB, %lld boxes of 16 KiB per block\n",
        (unsigned long long)rows, (unsigned long long)cols, BOX, BOX, FRAME, cli.value[OPT_BULK],
        cli.value[OPT_MIB], cli.value[OPT_CHUNK]);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    part_add_one(rows, cols, s);
    part_fence_probe(s);
    part_bulk_store((uint32_t)cli.value[OPT_BULK], s);
    part_copy(copy_bytes, (uint32_t)cli.value[OPT_CHUNK], &cli, s);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
