// 04_tma_store: the Tensor Memory Accelerator, storing: the async proxy,
// bulk groups, and a TMA copy at memory speed.
//
// What it teaches
//   A TMA store reads shared memory through the ASYNC proxy. Data that threads
//   wrote with ordinary stores (the generic proxy) is not guaranteed to be
//   seen by it unless every writing thread runs fence.proxy.async before the
//   barrier that hands the buffer over. Stores are tracked in bulk groups:
//   wait_group.read N says the shared source may be reused, wait_group N says
//   the global writes are done and visible. Parts:
//     1. add_one     load a box, add 1 to every element in shared memory,
//                    fence, barrier, store; then the block reloads what it
//                    stored (after the full wait) and checks it
//     2. edges       the matrix sits inside a guard frame; boxes that cross
//                    its edge write only inside, the frame stays untouched
//     3. bulk_store  cp.async.bulk shared -> global, no tensor map
//     4. copy_tma_*  a copy of 1 GiB: loads ahead, stores draining behind,
//                    wait_group.read before a stage is reloaded
//
// New since step 03: tma_store_2d, bulk_store, bulk_commit_group,
// bulk_wait_group<N>, bulk_wait_group_read<N> (common/tma.cuh).
// SASS: UTMASTG.2D, UBLKCP.G.S, UTMACMDFLUSH, DEPBAR.LE, FENCE.VIEW.ASYNC.S
// (`make sass-04`).
//
// Run
//   make run-04
//   make run-04 ARGS="--bug 1"   exercise: no fence.proxy.async before the store
//   make check-04
#include "mbarrier.cuh"
#include "tensor_map.h"
#include "tma.cuh"

#define THREADS 256
#define BOX 64            // part 1-2 boxes: 64 x 64 uint32 = 16 KiB
#define GUARD_WORD 0xDEADBEEFu
#define FRAME 4           // guard columns (16 B) and rows around the part-2 matrix

// ---------------------------------------------------------------------------
// CPU reference
// ---------------------------------------------------------------------------
// Inputs are position-coded as in step 03: element (r, c) is r * cols + c.
// After add_one, every in-bounds output element is that plus one; everything
// outside the matrix (the guard frame) keeps GUARD_WORD.

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------
// ---- Parts 1-2: load, add one, store, reload --------------------------------
// bug 1: skip fence.proxy.async. The barrier still orders the threads, but
//        not the generic-proxy writes before the async-proxy read: the store
//        may send the box as it was before the additions.
__global__ void __launch_bounds__(THREADS) add_one(const __grid_constant__ CUtensorMap in_map,
                                                   const __grid_constant__ CUtensorMap out_map, uint64_t rows,
                                                   uint64_t cols, int bug, unsigned long long* wrong) {
    uint32_t* box = (uint32_t*)tma_smem_base();  // [BOX][BOX] uint32, 128-byte aligned
    __shared__ __align__(8) uint64_t bar;
    const uint32_t bytes = BOX * BOX * 4;
    const int32_t col0 = (int32_t)(blockIdx.x * BOX), row0 = (int32_t)(blockIdx.y * BOX);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, bytes);
        tma_load_2d(box, &in_map, col0, row0, &bar);
    }
    mbar_wait(&bar, 0, "add_one's load barrier", bytes);  // phase 0
    for (uint32_t i = threadIdx.x; i < BOX * BOX; i += blockDim.x) box[i] += 1;  // generic-proxy writes
    if (bug != 1) fence_proxy_async_shared();  // EVERY writing thread, before the barrier
    __syncthreads();                           // the box is complete; hand it to thread 0
    if (threadIdx.x == 0) {
        tma_store_2d(&out_map, col0, row0, box);  // only the in-bounds part is written
        bulk_commit_group();
        bulk_wait_group<0>();  // the FULL wait: the writes are done and visible in global memory
        // (.read would only say that `box` may be overwritten, which is all a
        // kernel that does not read the output back would need.)
        mbar_arrive_expect_tx(&bar, bytes);  // phase 1: reload what was just stored
        tma_load_2d(box, &out_map, col0, row0, &bar);
    }
    mbar_wait(&bar, 1, "add_one's reload barrier", bytes);
    uint32_t w = 0;
    for (uint32_t i = threadIdx.x; i < BOX * BOX; i += blockDim.x) {
        const uint64_t r = (uint64_t)row0 + i / BOX, c = (uint64_t)col0 + i % BOX;
        const uint32_t want = (r < rows && c < cols) ? (uint32_t)(r * cols + c) + 1u : 0u;  // outside: zero fill
        w += box[i] != want;
    }
    if (w) atomicAdd(wrong, w);
}

// ---- Part 3: 1D bulk store --------------------------------------------------
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

// ---- Part 4: a TMA copy -------------------------------------------------------
// The buffer as rows of COPY_COLS words, boxes of COPY_BOX_ROWS rows (16 KiB;
// -DCOPY_BOX_ROWS and -DCOPY_STAGES change the shape for experiments).
// One thread does everything: the data never passes through registers, and
// both sides of the copy are the async proxy, so no fence is needed between
// a load's completion (the mbarrier wait) and the store that reads the box.
// Box i is loaded into stage i % STAGES. After store i is committed,
// wait_group.read 1 says store i - 1 has read its stage, which is then
// reloaded with box i - 1 + STAGES.
#define COPY_COLS 256
#ifndef COPY_BOX_ROWS
#define COPY_BOX_ROWS 16
#endif
#ifndef COPY_STAGES
#define COPY_STAGES 4
#endif
#define COPY_BOX_WORDS (COPY_COLS * COPY_BOX_ROWS)

__global__ void __launch_bounds__(32) tma_copy(const __grid_constant__ CUtensorMap in_map,
                                               const __grid_constant__ CUtensorMap out_map, uint32_t nboxes,
                                               uint32_t chunk) {
    uint32_t* stage = (uint32_t*)tma_smem_base();  // [COPY_STAGES][COPY_BOX_ROWS][COPY_COLS] uint32
    __shared__ __align__(8) uint64_t full[COPY_STAGES];
    if (threadIdx.x != 0) return;  // one thread drives the copy engine
    const uint32_t bytes = COPY_BOX_WORDS * 4, first = blockIdx.x * chunk;
    const uint32_t mine = first < nboxes ? min(chunk, nboxes - first) : 0;
    for (int s = 0; s < COPY_STAGES; ++s) mbar_init(&full[s], 1);
    mbar_fence_init();  // one thread inits and uses the barriers: no __syncthreads() needed
    for (uint32_t s = 0; s < COPY_STAGES && s < mine; ++s) {
        mbar_arrive_expect_tx(&full[s], bytes);
        tma_load_2d(stage + s * COPY_BOX_WORDS, &in_map, 0, (int32_t)((first + s) * COPY_BOX_ROWS), &full[s]);
    }
    for (uint32_t i = 0; i < mine; ++i) {
        const uint32_t s = i % COPY_STAGES;
        mbar_wait(&full[s], (i / COPY_STAGES) & 1, "tma_copy's stage barrier", bytes);
        tma_store_2d(&out_map, 0, (int32_t)((first + i) * COPY_BOX_ROWS), stage + s * COPY_BOX_WORDS);
        bulk_commit_group();
        if (i >= 1 && i - 1 + COPY_STAGES < mine) {
            const uint32_t r = (i - 1) % COPY_STAGES;
            bulk_wait_group_read<1>();  // store i - 1 has read stage r
            mbar_arrive_expect_tx(&full[r], bytes);
            tma_load_2d(stage + r * COPY_BOX_WORDS, &in_map, 0, (int32_t)((first + i - 1 + COPY_STAGES) * COPY_BOX_ROWS),
                        &full[r]);
        }
    }
    bulk_wait_group<0>();  // every store done before the block (and its shared memory) goes away
}

// ---------------------------------------------------------------------------
// Host launchers
// ---------------------------------------------------------------------------
typedef struct {
    const CUtensorMap* in;
    const CUtensorMap* out;
    uint32_t nboxes, chunk;
    size_t smem;
} CopyJob;

static void enqueue_copy(void* ctx, cudaStream_t s) {
    const CopyJob* j = (const CopyJob*)ctx;
    tma_copy<<<(j->nboxes + j->chunk - 1) / j->chunk, 32, j->smem, s>>>(*j->in, *j->out, j->nboxes, j->chunk);
    CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_BULK, OPT_MIB, OPT_CHUNK, OPT_BUG, NUM_OPTS };

int main(int argc, char** argv) {
    const IntOption opts[NUM_OPTS] = {
        {"--rows", "R", "rows of the part 1-2 matrix (uint32)", 1, 1 << 20, 3000, 3000},
        {"--cols", "C", "columns of the part 1-2 matrix (rows must be a multiple of 16 B)", 1, 1 << 20, 2000, 2000},
        {"--bulk-bytes", "B", "bytes per 1D bulk store in part 3", 1, 65536, 32768, 32768},
        {"--mib", "N", "size of the part-4 copy in MiB", 1, 16384, 1024, 32},
        {"--chunk", "T", "boxes per block in copy_tma (must divide the box count)", 1, 4096, 1, 1},
        {"--bug", "B", "exercise: 1 = no fence.proxy.async before the store", 0, 1, 0, 0},
    };
    Cli cli = parse_cli(argc, argv,
                        "04_tma_store: TMA stores, the async-proxy fence, bulk groups, edge boxes and a TMA copy,\n"
                        "each checked in full.",
                        opts, NUM_OPTS);
    const uint64_t rows = (uint64_t)cli.value[OPT_ROWS], cols = (uint64_t)cli.value[OPT_COLS];
    const uint32_t bulk_bytes = (uint32_t)cli.value[OPT_BULK], chunk = (uint32_t)cli.value[OPT_CHUNK];
    const long long mib = cli.value[OPT_MIB];
    const int bug = (int)cli.value[OPT_BUG];
    const size_t copy_bytes = (size_t)mib << 20, copy_words = copy_bytes / 4;
    const uint32_t nboxes = (uint32_t)(copy_words / COPY_BOX_WORDS);
    const uint64_t pitch = cols + 2 * FRAME;  // guard frame: FRAME columns each side, FRAME rows above and below
    {
        char msg[256];
        TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, (const void*)256, rows, cols, pitch * 4,
                                            BOX, BOX, CU_TENSOR_MAP_SWIZZLE_NONE);
        if (tensor_map_rule_broken(&spec, msg, sizeof msg)) die_usage("%s", msg);
        if (bulk_copy_rule_broken(bulk_bytes, msg, sizeof msg)) die_usage("%s", msg);
        require_divisor("--bulk-bytes", bulk_bytes, 1u << 20, "bytes of the 1 MiB part-3 buffer");
        require_divisor("--chunk", chunk, nboxes, "16 KiB boxes of the part-4 copy (64 per MiB)");
    }

    require_hopper();

    print_header("04_tma_store", "TMA stores: the async proxy, bulk groups, edges, a TMA copy");
    printf("problem: parts 1-2 a %llu x %llu uint32 matrix in %d x %d boxes inside a %d-element guard frame; part 3 "
           "bulk stores of %u B; part 4 a copy of %lld MiB, %u boxes of 16 KiB per block%s\n",
           (unsigned long long)rows, (unsigned long long)cols, BOX, BOX, FRAME, bulk_bytes, mib, chunk,
           bug == 1 ? "; BUG 1: no fence.proxy.async" : "");

    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // --- 1-2. add one, edges --------------------------------------------------------
    const size_t n = rows * cols, framed = (rows + 2 * FRAME) * pitch;
    uint32_t *h_in = (uint32_t*)malloc(n * 4), *h_out = (uint32_t*)malloc(framed * 4);
    if (!h_in || !h_out) die_usage("cannot allocate the matrix on the host");
    for (size_t i = 0; i < n; ++i) h_in[i] = (uint32_t)i;
    uint32_t *d_in = NULL, *d_framed = NULL;
    unsigned long long* d_wrong = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_in, n * 4));
    CUDA_CHECK(cudaMalloc((void**)&d_framed, framed * 4));
    CUDA_CHECK(cudaMalloc((void**)&d_wrong, sizeof *d_wrong));
    CUDA_CHECK(cudaMemcpyAsync(d_in, h_in, n * 4, cudaMemcpyHostToDevice, s));
    for (size_t i = 0; i < framed; ++i) h_out[i] = GUARD_WORD;
    CUDA_CHECK(cudaMemcpyAsync(d_framed, h_out, framed * 4, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaMemsetAsync(d_wrong, 0, sizeof *d_wrong, s));
    // The output map describes only the interior: its address is FRAME rows and
    // FRAME columns (16 B) into the framed buffer, its row stride the framed pitch.
    uint32_t* d_interior = d_framed + FRAME * pitch + FRAME;
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d_in, rows, cols, cols * 4, BOX, BOX,
                                        CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap in_map = make_tensor_map(&spec);
    spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d_interior, rows, cols, pitch * 4, BOX, BOX,
                          CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap out_map = make_tensor_map(&spec);
    const dim3 grid((unsigned)((cols + BOX - 1) / BOX), (unsigned)((rows + BOX - 1) / BOX));
    add_one<<<grid, THREADS, tma_smem_bytes(BOX * BOX * 4), s>>>(in_map, out_map, rows, cols, bug, d_wrong);
    CHECK_LAUNCH();
    unsigned long long reload_wrong = 0;
    CUDA_CHECK(cudaMemcpyAsync(&reload_wrong, d_wrong, sizeof reload_wrong, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(h_out, d_framed, framed * 4, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    mbar_check_timeouts();
    print_check_line("add_one_reloaded", (size_t)reload_wrong, (size_t)grid.x * grid.y * BOX * BOX);
    {
        size_t in_wrong = 0, guard_wrong = 0;
        for (uint64_t r = 0; r < rows + 2 * FRAME; ++r)
            for (uint64_t c = 0; c < pitch; ++c) {
                const uint32_t got = h_out[r * pitch + c];
                const int inside = r >= FRAME && r < rows + FRAME && c >= FRAME && c < cols + FRAME;
                if (inside)
                    in_wrong += got != (uint32_t)((r - FRAME) * cols + (c - FRAME)) + 1u;
                else
                    guard_wrong += got != GUARD_WORD;
            }
        print_check_line("add_one_stored", in_wrong, n);
        print_check_line("edges_guard_untouched", guard_wrong, framed - n);
    }

    // --- 3. bulk store ------------------------------------------------------------------
    {
        const size_t bytes = 1u << 20, words = bytes / 4;
        uint32_t *d_out = NULL, *h_bulk = (uint32_t*)malloc(bytes), *want = (uint32_t*)malloc(bytes);
        for (size_t i = 0; i < words; ++i) want[i] = (uint32_t)i;
        CUDA_CHECK(cudaMalloc((void**)&d_out, bytes));
        poison_device(d_out, bytes, s);
        CUDA_CHECK(cudaFuncSetAttribute((const void*)bulk_store_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)tma_smem_bytes(65536)));
        bulk_store_kernel<<<(unsigned)(bytes / bulk_bytes), THREADS, tma_smem_bytes(bulk_bytes), s>>>(d_out, bulk_bytes);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(h_bulk, d_out, bytes, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        check_words("bulk_store", h_bulk, want, words);
        CUDA_CHECK(cudaFree(d_out));
        free(h_bulk);
        free(want);
    }

    // --- 4. TMA copy ----------------------------------------------------------------------
    uint32_t *h_src = (uint32_t*)malloc(copy_bytes), *readback = NULL, *d_src = NULL, *d_dst = NULL;
    if (!h_src) die_usage("--mib %lld: cannot allocate the host buffer", mib);
    CUDA_CHECK(cudaMallocHost((void**)&readback, copy_bytes));
    fill_seeded_words(h_src, copy_words, cli.seed);
    CUDA_CHECK(cudaMalloc((void**)&d_src, copy_bytes));
    CUDA_CHECK(cudaMalloc((void**)&d_dst, copy_bytes));
    CUDA_CHECK(cudaMemcpyAsync(d_src, h_src, copy_bytes, cudaMemcpyHostToDevice, s));
    spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, d_src, copy_words / COPY_COLS, COPY_COLS, COPY_COLS * 4,
                          COPY_BOX_ROWS, COPY_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap src_map = make_tensor_map(&spec);
    spec.address = d_dst;
    const CUtensorMap dst_map = make_tensor_map(&spec);
    const size_t copy_smem = tma_smem_bytes((size_t)COPY_STAGES * COPY_BOX_WORDS * 4);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)tma_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)copy_smem));
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int per_sm = blocks_per_sm((const void*)tma_copy, 32, copy_smem);
    const uint32_t chunk_p = (nboxes + (uint32_t)(sms * per_sm) - 1) / (uint32_t)(sms * per_sm);
    CopyJob jobs[2] = {{&src_map, &dst_map, nboxes, chunk, copy_smem}, {&src_map, &dst_map, nboxes, chunk_p, copy_smem}};
    const char* names[2] = {"copy_tma", "copy_tma_persistent"};
    for (int k = 0; k < 2; ++k) {
        poison_device(d_dst, copy_bytes, s);
        enqueue_copy(&jobs[k], s);
        CUDA_CHECK(cudaMemcpyAsync(readback, d_dst, copy_bytes, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        check_words(names[k], readback, h_src, copy_words);
    }

    mbar_check_timeouts();

    // --- timing -------------------------------------------------------------------------------
    print_gpu();
    printf("GPU    copy_tma: one thread per block, %d stages of %d KiB, %d blocks per SM; %u boxes per block, "
           "persistent %u\n", COPY_STAGES, COPY_BOX_WORDS * 4 >> 10, per_sm, chunk, chunk_p);
    measure_memcpy_reference(d_dst, d_src, copy_bytes, &cli);
    for (int k = 0; k < 2; ++k) print_perf(names[k], time_median_ms(enqueue_copy, &jobs[k], s, &cli), 2.0 * copy_bytes);
    mbar_check_timeouts();  // the timed runs waited too

    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_framed));
    CUDA_CHECK(cudaFree(d_wrong));
    CUDA_CHECK(cudaFree(d_src));
    CUDA_CHECK(cudaFree(d_dst));
    CUDA_CHECK(cudaFreeHost(readback));
    free(h_in);
    free(h_out);
    free(h_src);
    return finish();
}
