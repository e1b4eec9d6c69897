// 10_grouped_gemm: a mixture-of-experts GEMM, where tensor maps edited on the
// device pay: G experts, C_g = A_g B_g^T, bf16 in, fp32 out, the experts'
// rows of A back to back (the "contiguous" layout an MoE layer hands over).
// Parts, each checked bit for bit per expert, timed against dense cuBLAS here:
// 1 one launch per expert (cuBLAS, ours, cuBLAS from a CUDA graph), 2
// cublasGemmGroupedBatchedEx, 3 one persistent kernel over every expert's
// tiles: one map for all (masked stores), maps built on the host, maps built
// by a device kernel, maps edited in shared memory when a tile crosses an
// expert; 4 under CUDA graphs: captured on one batch, replayed on another.
// New since step 09: no PTX; 09's pipeline (09_gemm/parts/) over experts, its
// maps switched with 08's edits and fences. What it links and what its
// sanitizers watch: check.py's `build`.
// Run: make run-10 [ARGS="--experts 64 --rows 16384"], make check-10.
#include "10_grouped_gemm/parts/problem.cuh"
#include "10_grouped_gemm/parts/kernel.cuh"
#include "10_grouped_gemm/parts/cublas.cuh"
#include "10_grouped_gemm/parts/graphs.cuh"

// The pieces, in 10_grouped_gemm/parts/: the batches and their data
// (batch.cuh), which tile of which expert a unit is (schedule.cuh), where an
// expert's maps come from, four ways (maps.cuh), the grouped kernel, 09's
// pipeline over both (kernel.cuh), the harness (problem.cuh), the cuBLAS
// baselines (cublas.cuh), the graphs (graphs.cuh). This file: what bounds a
// grouped GEMM, the parts in order (part_problem), the command line.

// What bounds a grouped GEMM of batch 0, measured here. Its MMAs: the rows
// they cover (64 per warpgroup: an expert's rows rounded up to 64) at our
// dense kernel's rate. Its traffic: every byte it must move, once: all of
// A's rows and every B_g of an expert with rows read, all of C written,
// timed in this run by traffic_floor (16-byte loads and stores over the same
// bytes, nothing else). The slower of the two is the bound.
__global__ void __launch_bounds__(256)
    traffic_floor(const uint4* a, size_t a_vecs, const uint4* b, size_t b_vecs_per_expert,
                  const uint32_t* first_row, uint32_t experts, float4* c, size_t c_vecs, uint32_t* sink) {
    uint32_t fold = 0;  // every word loaded is folded in, so that no load is dropped
    const size_t stride = (size_t)gridDim.x * blockDim.x, t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i = t; i < a_vecs; i += stride) {
        const uint4 v = a[i];
        fold ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    for (size_t i = t; i < b_vecs_per_expert * experts; i += stride) {
        const uint32_t g = (uint32_t)(i / b_vecs_per_expert);
        if (first_row[g + 1] == first_row[g]) continue;  // no rows: its B_g is never read
        const uint4 v = b[i];
        fold ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    for (size_t i = t; i < c_vecs; i += stride) c[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (fold == 0x9E3779B9u) atomicAdd(sink, 1u);  // (almost) never: the folds only have to exist
}

static void report_bound(Problem* q) {
    const Batch* b = &q->host[BATCH_0];
    uint64_t mma_rows = 0, b_bytes = 0;
    for (uint32_t g = 0; g < q->experts; ++g) {
        const uint32_t m = b->first_row[g + 1] - b->first_row[g];
        mma_rows += (m + WG_M - 1) / WG_M * WG_M;
        b_bytes += m ? (uint64_t)q->n * q->ld_ab * 2 : 0;
    }
    const size_t a_bytes = (size_t)q->total * q->ld_ab * 2, c_bytes = (size_t)q->total * q->n * 4;
    const double bytes = (double)a_bytes + b_bytes + c_bytes;
    use_batch(q, BATCH_0);
    uint32_t* sink = NULL;
    CUDA_CHECK(cudaMalloc((void**)&sink, 4));
    const int threads = 256, blocks = 8 * persistent_grid((const void*)traffic_floor, threads, 0);
    Timer t;
    for (t = timer_begin(q->cli, q->s, NULL, 0); timer_next(&t);)
        traffic_floor<<<blocks, threads, 0, q->s>>>((const uint4*)q->a[0], a_bytes / 16, (const uint4*)q->b,
                                                    (size_t)q->n * q->ld_ab * 2 / 16, q->dev->first_row,
                                                    q->experts, (float4*)c_of(q, 1), c_bytes / 16, sink);
    CHECK_LAUNCH();
    CUDA_CHECK(cudaFree(sink));
    char name[64];
    snprintf(name, sizeof name, "%sdense", q->prefix);
    const double dense_ms = perf_ms(name), floor_ms = t.median_ms;
    snprintf(name, sizeof name, "%sdense_cublas", q->prefix);
    const double ref_ms = perf_ms(name), mma_ms = dense_ms * mma_rows / q->total;
    snprintf(name, sizeof name, "%sdevice_edit", q->prefix);
    const double edit_ms = perf_ms(name);
    snprintf(name, sizeof name, "%sdevice_edit_other_order", q->prefix);
    const double other_ms = perf_ms(name);
    if (dense_ms <= 0 || ref_ms <= 0 || edit_ms <= 0 || other_ms <= 0) return;  // a part failed: no bound
    const bool mixed = b->split < b->first_tile[q->experts];
    record_gpu_line(
        "%sbound: the MMAs cover %llu rows for %u (%.1f %% more), %.3f ms at dense's rate; A, every B_g and "
        "C "
        "moved once are %.2f GB, %.3f ms here (%.0f GB/s, a pass over them); so %.1f %% of dense_cublas at "
        "most, device_edit %.1f %% (%.1f %% of its traffic floor; %s; %s %.1f %%)",
        q->prefix, (unsigned long long)mma_rows, q->total, 100.0 * mma_rows / q->total - 100.0, mma_ms,
        bytes * 1e-9, floor_ms, bytes / (floor_ms * 1e-3) * 1e-9,
        100.0 * ref_ms / (mma_ms > floor_ms ? mma_ms : floor_ms), 100.0 * ref_ms / edit_ms,
        100.0 * floor_ms / edit_ms, mixed ? "the work mixed" : "in expert order",
        mixed ? "in expert order" : "mixed", 100.0 * ref_ms / other_ms);
    // Whole tiles: a tile of an expert's last tile row streams its whole slice of B_g however few of its
    // rows are real, so the experts' ragged last tile rows add tiles the dense problem does not have. A
    // model of this kernel, not a ceiling: the CTA with the most tiles, each at the dense problem's time
    // per tile (the dense kernel's time over its most tiles on one CTA).
    const uint32_t tiles = b->first_tile[q->experts], dense_tiles = q->host[DENSE].first_tile[1];
    const uint32_t grid = grid_for(q, tiles), dense_grid = grid_for(q, dense_tiles);
    const uint32_t per_cta = (tiles + grid - 1) / grid,
                   dense_per_cta = (dense_tiles + dense_grid - 1) / dense_grid;
    const double tiles_ms = dense_ms * per_cta / dense_per_cta;
    record_gpu_line(
        "%stiles (a model of this kernel, not a ceiling): %u tiles of %d x %d, %d more than the dense "
        "problem's %u (the experts' ragged last tile rows), at most %u on one of %u CTAs against its %u; at "
        "dense's time per tile %.3f ms, %.1f %% of dense_cublas",
        q->prefix, tiles, BM, BN, (int)tiles - (int)dense_tiles, dense_tiles, per_cta, grid, dense_per_cta,
        tiles_ms, 100.0 * ref_ms / tiles_ms);
}

// ---- One problem: its batches, references and parts ---------------------------
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    cublasHandle_t h;
    uint32_t n, band, grid;
} Session;

// How a batch's rows fall: deterministic (a check of the draw, in expected_output.txt).
static void print_batch(const Problem* q, int i, const char* name) {
    const Batch* b = &q->host[i];
    uint32_t lo = 0xFFFFFFFFu, hi = 0, empty = 0, one = 0, ragged = 0, small = 0;
    for (uint32_t g = 0; g < q->experts; ++g) {
        const uint32_t m = b->first_row[g + 1] - b->first_row[g];
        lo = min(lo, m), hi = max(hi, m), empty += m == 0, one += m == 1, ragged += m % BM != 0;
        small += m && m <= BM ? tiles_of(m, q->n) : 0;
    }
    printf(
        "%s%s: %u experts over %u rows (Zipf %.2f): %u to %u rows, %u with none, %u with one, %u no multiple "
        "of %d; %u tiles of %d x %d, %u of experts of one tile row: %s\n",
        q->prefix, name, q->experts, q->total, q->skew / 100.0, lo, hi, empty, one, ragged, BM,
        b->first_tile[q->experts], BM, BN, small,
        small == 0                             ? "no schedule to choose"
        : b->split < b->first_tile[q->experts] ? "mixed"
                                               : "in expert order");
}

static void part_problem(const char* prefix, uint32_t experts, uint32_t total, uint32_t k, uint32_t skew,
                         const Session* ses) {
    Problem q;
    memset(&q, 0, sizeof q);
    q.cli = ses->cli, q.prefix = prefix, q.s = ses->s, q.h = ses->h, q.band = ses->band, q.grid = ses->grid;
    q.experts = experts, q.total = total, q.n = ses->n, q.k = k, q.skew = skew;
    q.ld_ab = round_up(k, 8), q.ldc = output_ld(q.n);
    q.framed_words = (size_t)(total + 2 * FRAME) * q.ldc;
    const uint32_t seed = ses->cli->seed;
    CUDA_CHECK(cudaMalloc((void**)&q.b, (size_t)experts * q.n * q.ld_ab * 2));
    make_operand<<<1024, 256, 0, q.s>>>(q.b, (uint64_t)experts * q.n, k, q.ld_ab, seed ^ 0xB0Bu);
    for (int set = 0; set < 2; ++set) {
        CUDA_CHECK(cudaMalloc((void**)&q.a[set], (size_t)total * q.ld_ab * 2));
        make_operand<<<1024, 256, 0, q.s>>>(q.a[set], total, k, q.ld_ab, a_seed(&q, set));
        CUDA_CHECK(cudaMalloc((void**)&q.out[set], q.framed_words * 4));
        q.a_tmpl[set] = operand_map(&q, q.a[set], total, BM, "A (every expert's rows)");
        q.c_tmpl[set] = output_map(&q, c_of(&q, set), total, "C (every expert's rows)");
    }
    CHECK_LAUNCH();
    q.b_tmpl = operand_map(&q, q.b, q.n, BN, "B_0");
    q.b_all = operand_map(&q, q.b, experts * q.n, BN, "B (every expert's rows)");
    CUDA_CHECK(cudaMalloc((void**)&q.dev, sizeof(Batch)));
    CUDA_CHECK(cudaMallocHost((void**)&q.staged, sizeof(Batch)));
    CUDA_CHECK(cudaMalloc((void**)&q.maps, 3 * sizeof(CUtensorMap) * experts));
    CUDA_CHECK(cudaMemset(q.maps, 0, 3 * sizeof(CUtensorMap) * experts));
    CUDA_CHECK(cudaMallocHost((void**)&q.host_maps, 3 * sizeof(CUtensorMap) * experts));
    memset(q.host_maps, 0, 3 * sizeof(CUtensorMap) * experts);
    CUDA_CHECK(cudaMalloc((void**)&q.slots, 6 * sizeof(CUtensorMap) * q.grid));
    {  // every CTA's slots start as valid maps (the templates), whatever its first retarget does
        CUtensorMap* start = (CUtensorMap*)xmalloc(6 * sizeof(CUtensorMap) * q.grid, "the slots' first maps");
        for (uint32_t i = 0; i < 6 * q.grid; ++i)
            start[i] = i % 6 < 4 ? (i % 2 ? q.b_tmpl : q.a_tmpl[0]) : q.c_tmpl[0];
        CUDA_CHECK(cudaMemcpy(q.slots, start, 6 * sizeof(CUtensorMap) * q.grid, cudaMemcpyHostToDevice));
        free(start);
    }
    // The batches: 0 and 1 (another draw of the same law, the other buffers), the dense one.
    uint32_t rows[MAX_EXPERTS];
    for (int i = 0; i < NUM_BATCHES; ++i) {
        const int set = set_of(i);
        if (i == DENSE)
            rows[0] = total, q.experts_of[i] = 1;
        else
            expert_rows(rows, experts, total, skew / 100.0, seed + 1000u * (uint32_t)i),
                q.experts_of[i] = experts;
        fill_batch(&q.host[i], rows, q.experts_of[i], q.n, false);
        q.host[i].a = q.a[set], q.host[i].c = c_of(&q, set);
    }
    print_batch(&q, BATCH_0, "batch");
    print_batch(&q, BATCH_1, "new_batch");
    run_reference(&q, DENSE, "dense_reference_vs_cpu");
    run_reference(&q, BATCH_0, "reference_vs_cpu");
    run_reference(&q, BATCH_1, "new_batch_reference_vs_cpu");

    // 1. The reference (cuBLAS, dense: one expert of every row) and ours on it.
    use_batch(&q, DENSE);
    GROUP_PART(&q, "dense_cublas", cublas_loop(&q));
    GROUP_PART(&q, "dense", run_grouped<EDIT>(&q));

    // 2. Batch 0: one launch per expert, cuBLAS's grouped call, one grouped kernel four ways.
    use_batch(&q, BATCH_0);
    GROUP_PART(&q, "cublas_loop", cublas_loop(&q));
    const Graph loop_graph = capture(&q, cublas_loop);
    GROUP_PART(&q, "cublas_loop_graph", CUDA_CHECK(cudaGraphLaunch(loop_graph.exec, q.s)));
    encode_host_maps(&q, BATCH_0, q.host_maps);
    CUDA_CHECK(
        cudaMemcpyAsync(q.maps, q.host_maps, 3 * sizeof(CUtensorMap) * experts, cudaMemcpyHostToDevice, q.s));
    Batch* loop_batches;  // expert g alone, for ours_loop
    CUDA_CHECK(cudaMalloc((void**)&loop_batches, sizeof(Batch) * experts));
    Batch* staged_loop = (Batch*)xmalloc(sizeof(Batch) * experts, "the per-expert batches");
    for (uint32_t g = 0; g < experts; ++g) {
        const Batch* b = &q.host[BATCH_0];
        const uint32_t m = b->first_row[g + 1] - b->first_row[g];
        fill_batch(&staged_loop[g], &m, 1, q.n, false);
        staged_loop[g].a = b->a + (size_t)b->first_row[g] * q.ld_ab;
        staged_loop[g].c = b->c + (size_t)b->first_row[g] * q.ldc;
    }
    CUDA_CHECK(cudaMemcpy(loop_batches, staged_loop, sizeof(Batch) * experts, cudaMemcpyHostToDevice));
    GROUP_PART(&q, "loop_ours", ours_loop(&q, loop_batches));
    grouped_batched_part(&q);
    GROUP_PART(&q, "one_map", run_grouped<ONE_MAP>(&q));
    GROUP_PART(&q, "host_maps", run_host_maps(&q));
    GROUP_PART(&q, "device_maps", run_grouped<DEVICE_MAPS>(&q));
    GROUP_PART(&q, "device_edit", run_grouped<EDIT>(&q));
    plan_batch(&q, BATCH_0, true);  // the ablation: the same kernel, the schedule the plan did not pick
    GROUP_PART(&q, "device_edit_other_order", run_grouped<EDIT>(&q));
    plan_batch(&q, BATCH_0, false);

    // 3. Graphs captured on batch 0, replayed on batch 1 (after the same kernel launched on it).
    const Graph one_map = capture(&q, one_map_work), host_maps = capture(&q, host_maps_work);
    const Graph device_maps = capture(&q, device_maps_work), device_edit = capture(&q, device_edit_work);
    use_batch(&q, BATCH_1);
    GROUP_PART(&q, "new_batch_device_edit", run_grouped<EDIT>(&q));
    GRAPH_PART(&q, "graph_one_map", one_map, update_one_map_node(&q, &one_map));
    GRAPH_PART(&q, "graph_host_maps", host_maps, encode_host_maps(&q, BATCH_1, q.host_maps));
    GRAPH_PART(&q, "graph_device_maps", device_maps, (void)0);
    GRAPH_PART(&q, "graph_device_edit", device_edit, (void)0);
    if (timing_wanted(q.cli)) {
        report_host_costs(&q, &one_map, &device_edit);
        report_bound(&q);
    }

    const Graph graphs[] = {loop_graph, one_map, host_maps, device_maps, device_edit};
    for (const Graph& gr : graphs) {
        CUDA_CHECK(cudaGraphExecDestroy(gr.exec));
        CUDA_CHECK(cudaGraphDestroy(gr.graph));
    }
    CUDA_CHECK(cudaStreamSynchronize(q.s));
    free(staged_loop);
    CUDA_CHECK(cudaFree(loop_batches));
    CUDA_CHECK(cudaFree(q.slots));
    CUDA_CHECK(cudaFreeHost(q.host_maps));
    CUDA_CHECK(cudaFree(q.maps));
    CUDA_CHECK(cudaFreeHost(q.staged));
    CUDA_CHECK(cudaFree(q.dev));
    for (int set = 0; set < 2; ++set) {
        CUDA_CHECK(cudaFree(q.a[set]));
        CUDA_CHECK(cudaFree(q.out[set]));
    }
    CUDA_CHECK(cudaFree(q.b));
    for (int i = 0; i < NUM_BATCHES; ++i) free(q.want[i]);
}

// ---- The output: PERF lines as TFLOP/s and a fraction of the dense cuBLAS GEMM ----
// Every part does 2 sum(M_g) N K flops: the reference is cuBLAS on the dense
// problem of the same total size (dense_cublas, 100 %): what grouping costs.
static double dense_reference_ms(const MachineLine* l) {
    const bool many = !strncmp(l->text, "many_", 5);
    return perf_ms(many ? "many_dense_cublas" : "dense_cublas");
}

// ---------------------------------------------------------------------------
enum {
    OPT_EXPERTS,
    OPT_ROWS,
    OPT_K,
    OPT_SKEW,
    OPT_MANY_EXPERTS,
    OPT_MANY_ROWS,
    OPT_MANY_K,
    OPT_MANY_SKEW,
    OPT_N,
    OPT_BAND,
    OPT_CTAS,
    NUM_OPTS
};
static const IntOption kOptions[NUM_OPTS] = {
    {"--experts", "G", "experts of the first problem", 1, MAX_EXPERTS, 64, 8},
    {"--rows", "T", "rows of A (tokens) over all its experts", 1, 1 << 20, 16384, 1000},
    {"--k", "K", "its inner dimension (exact sums need K <= 2^20)", 1, MAX_K, 4096, 200},
    {"--skew", "S", "its Zipf exponent, in hundredths (100: expert i gets 1 / (i + 1) of the share)", 0, 400,
     100, 100},
    // The second problem: many small experts, a K that is no multiple of 64 under --quick.
    {"--many-experts", "G", "experts of the second problem", 1, MAX_EXPERTS, 128, 16},
    {"--many-rows", "T", "its rows over all experts", 1, 1 << 20, 8192, 700},
    {"--many-k", "K", "its inner dimension", 1, MAX_K, 7168, 72},
    {"--many-skew", "S", "its Zipf exponent, in hundredths", 0, 400, 120, 120},
    {"--n", "N", "columns of C, rows of each B_g (both problems; a multiple of 4)", 4, 32768, 4096, 264},
    {"--band", "B", "raster: bands of B tile rows within an expert (1 = row-major)", 1, 1024, 8, 8},
    // --quick: 8 CTAs, so that each goes from expert to expert with loads in flight, as at full size (the
    // sanitizers and the shadow build see the retarget and its waits).
    {"--ctas", "C", "CTAs of the persistent kernels (0: as many as run at once, one per SM)", 0, 1024, 0, 8},
};

// Host bytes: the expected outputs (3 batches) and the pinned readback.
static size_t host_bytes(uint32_t total, uint32_t n) {
    return 4 * 4 * (size_t)(total + 2 * FRAME) * output_ld(n);
}
// Device bytes: B (G N rows), two buffer sets of A and C.
static size_t device_bytes(uint32_t experts, uint32_t total, uint32_t n, uint32_t k) {
    return (size_t)experts * n * round_up(k, 8) * 2 + 2 * (size_t)total * round_up(k, 8) * 2 +
           2 * 4 * (size_t)(total + 2 * FRAME) * output_ld(n);
}

// Every rule before the GPU is touched.
static void check_problem(const char* opts, uint32_t experts, uint32_t total, uint32_t n, uint32_t k) {
    char what[128];
    snprintf(what, sizeof what, "%s: %u experts over %u rows, N %u, K %u", opts, experts, total, n, k);
    const TensorMapSpec a = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (const void*)256, total, k,
                                           (uint64_t)round_up(k, 8) * 2, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    require_tensor_rules(&a, what);
    const TensorMapSpec b =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (const void*)256, (uint64_t)experts * n, k,
                       (uint64_t)round_up(k, 8) * 2, BN, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    require_tensor_rules(&b, what);
    if ((uint64_t)total * n >= (1ull << 32))
        die_usage("%s: C has 2^32 elements or more; rows x N must stay below", what);
    require_host_memory(what, host_bytes(total, n));
}

static void check_arguments(const Cli* cli) {
    const long long* v = cli->value;
    if (v[OPT_N] % 4)
        die_usage(
            "--n %lld is not a multiple of 4: C's rows leave through the TMA store in 16-byte chunks, and a "
            "row of C_g that ends inside one would have the chunk's rest written past it",
            v[OPT_N]);
    check_problem("--experts --rows --n --k", (uint32_t)v[OPT_EXPERTS], (uint32_t)v[OPT_ROWS],
                  (uint32_t)v[OPT_N], (uint32_t)v[OPT_K]);
    check_problem("--many-experts --many-rows --n --many-k", (uint32_t)v[OPT_MANY_EXPERTS],
                  (uint32_t)v[OPT_MANY_ROWS], (uint32_t)v[OPT_N], (uint32_t)v[OPT_MANY_K]);
}

static const CliSpec kCli = {
    "10_grouped_gemm: a mixture-of-experts GEMM (C_g = A_g B_g^T, bf16 in, fp32 out) on Hopper,\n"
    "one launch per expert against one grouped kernel whose tensor maps come from the host or the device,\n"
    "plain and under CUDA graphs; every expert checked bit for bit, timed against the dense cuBLAS GEMM.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

static void print_problem(const Cli* cli) {
    const long long* v = cli->value;
    print_header("10_grouped_gemm", "a mixture-of-experts GEMM, where tensor maps edited on the device pay");
    printf(
        "problem: C_g = A_g B_g^T per expert, A_g M_g x K (every expert's rows back to back), B_g N x K, "
        "bf16 in, "
        "fp32 out; %lld experts over %lld rows, K %lld; many: %lld experts over %lld rows, K %lld; N %lld; "
        "tiles "
        "%d x %d x %d\n",
        v[OPT_EXPERTS], v[OPT_ROWS], v[OPT_K], v[OPT_MANY_EXPERTS], v[OPT_MANY_ROWS], v[OPT_MANY_K], v[OPT_N],
        BM, BN, BK);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const long long* v = cli.value;
    require_hopper();
    require_device_memory("--experts --rows --n --k",
                          device_bytes((uint32_t)v[OPT_EXPERTS], (uint32_t)v[OPT_ROWS], (uint32_t)v[OPT_N],
                                       (uint32_t)v[OPT_K]));
    require_device_memory("--many-experts --many-rows --n --many-k",
                          device_bytes((uint32_t)v[OPT_MANY_EXPERTS], (uint32_t)v[OPT_MANY_ROWS],
                                       (uint32_t)v[OPT_N], (uint32_t)v[OPT_MANY_K]));
    print_problem(&cli);
    Session ses = {&cli, NULL, NULL, (uint32_t)v[OPT_N], (uint32_t)v[OPT_BAND], 0};
    CUDA_CHECK(cudaStreamCreateWithFlags(&ses.s, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&ses.h));
    CUBLAS_CHECK(cublasSetStream(ses.h, ses.s));
    allow_shared_memory<ONE_MAP>(), allow_shared_memory<HOST_MAPS>(), allow_shared_memory<DEVICE_MAPS>();
    allow_shared_memory<EDIT>();
    const uint32_t resident = (uint32_t)persistent_grid((const void*)grouped_gemm<EDIT>,
                                                        Grouped<EDIT>::Threads, Grouped<EDIT>::SmemBytes);
    ses.grid = v[OPT_CTAS] && v[OPT_CTAS] < resident ? (uint32_t)v[OPT_CTAS] : resident;
    part_problem("", (uint32_t)v[OPT_EXPERTS], (uint32_t)v[OPT_ROWS], (uint32_t)v[OPT_K],
                 (uint32_t)v[OPT_SKEW], &ses);
    part_problem("many_", (uint32_t)v[OPT_MANY_EXPERTS], (uint32_t)v[OPT_MANY_ROWS], (uint32_t)v[OPT_MANY_K],
                 (uint32_t)v[OPT_MANY_SKEW], &ses);
    record_gpu_line(
        "grouped_gemm: %u CTAs of %d threads, %d stages of %d KiB, %d x %d tiles, band of %u tile rows",
        ses.grid, Grouped<EDIT>::Threads, STAGES, Grouped<EDIT>::StageBytes >> 10, BM, BN, ses.band);
    CUBLAS_CHECK(cublasDestroy(ses.h));
    CUDA_CHECK(cudaStreamDestroy(ses.s));
    return finish_against(dense_reference_ms, "TFLOP/s", 1e12, "cublas");
}
