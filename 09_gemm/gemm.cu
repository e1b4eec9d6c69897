// 09_gemm: a BF16 GEMM on Hopper's tensor cores, fed by the TMA, from one
// synchronous loop to cuBLAS's speed: the capstone that uses every step.
// C = A B^T (A M x K, B N x K, row-major bf16: cuBLAS's "TN"), C M x N fp32.
// Parts, each checked bit for bit and timed against cuBLAS in this process:
// 1 wgmma_sync, 2 ring (+ setmaxnreg), 3 cooperative, pingpong, 4 multicast,
// 5 persistent (+ a TMA-store epilogue), the ablation, 6 split-K, 7 cuBLAS.
// New since step 08: 09_gemm/wgmma.cuh (wgmma and its shared-memory matrix
// descriptor), 09_gemm/reference.cuh (the plain GEMM every part is checked
// against). This file: the problems and the parts in order; the pieces, in
// 09_gemm/parts/, which step 10 reuses (its loader, consumers, epilogues).
// What it links and what its sanitizers watch: check.py's `build`.
// Run: make run-09 [ARGS="--m 4096 --n 4096 --k 4096"], make check-09.
#include "09_gemm/parts/problem.cuh"
#include "09_gemm/parts/cublas.cuh"
#include "09_gemm/parts/wgmma_sync.cuh"
#include "09_gemm/parts/kernel.cuh"

// The parts, in order (the pieces in 09_gemm/parts/). 1 wgmma_sync
// (wgmma_sync.cuh): TMA + wgmma, one buffer, nothing overlaps. 2-6: one
// kernel, gemm_ws (kernel.cuh), its mechanisms as knobs (config.cuh), the
// ring's producer (loader.cuh) and consumers (consume.cuh) over a schedule of
// units (schedule.cuh), C written by an epilogue (epilogue.cuh); the harness
// in problem.cuh and cublas.cuh. 2 ring, ring_setmaxnreg: a producer
// warpgroup, two consumer warpgroups, a full/empty mbarrier ring. 3
// cooperative, pingpong (persistent: two warpgroups on one tile, or on
// alternating tiles). 4 multicast_2x1, multicast_1x2: clusters of 2 sharing B
// or A by TMA multicast. 5 persistent (+ a banded tile order),
// persistent_tma_store (the epilogue through shared memory and the TMA); the
// ablation: the best kernel with one mechanism off at a time. 6 split-K on a
// K-heavy problem, its pieces added by TMA store-reduce, red.global.add.v4.f32
// or coalesced atomicAdd. 7 cuBLAS at its best (cublasLt's fastest heuristic
// candidate: the reference of every PERF line, timed interleaved with each
// part) and cublas_gemmex (the plain call). Each is also checked on an edge
// problem whose sizes are no multiple of a tile (a K tail from the TMA's zero
// fill, an odd K with a NaN-padded row, a cluster's padding CTA, clipped
// stores). The check: inputs are small nonzero integers, so every product and
// every fp32 sum is exact (|sum| <= 16 K <= 2^24) in any order: every method's
// output must equal a plain GPU GEMM's bit for bit, and that one is checked
// against the CPU on a sample of rows.
// make sanitize-09 checks this program's own kernels (not cuBLAS's, which we
// can neither read nor fix) with memcheck and synccheck. racecheck is left
// out: on the H100 it stops with an internal error ("failed to handle a
// hardware exception") once a cluster kernel runs, instrumented or not.

// ---- Every part on one problem ------------------------------------------------
typedef enum { SHAPE_MAIN, SHAPE_EDGE, SHAPE_SPLIT_K } ShapeKind;

static void run_parts(const Gemm* g, ShapeKind kind) {
    GEMM_REFERENCE(g);  // cuBLAS at its best
    GEMM_PART("cublas_gemmex", g, true, TAIL_NONE, cublas_gemm(g));
    if (kind == SHAPE_SPLIT_K) {  // part 6: a K-heavy problem, K split into g->splits pieces per tile
        GEMM_PART("no_split", g, true, TAIL_NONE, launch_gemm<Best>(g, true, g->band, 1));
        GEMM_PART("tma_reduce", g, true, TAIL_REDUCE, launch_split_k<Best::WithEpilogue<EPI_TMA_REDUCE>>(g));
        GEMM_PART("red_v4", g, true, TAIL_NONE, launch_split_k<Best::WithEpilogue<EPI_RED_V4>>(g));
        GEMM_PART("atomic_add", g, true, TAIL_NONE, launch_split_k<Best::WithEpilogue<EPI_ATOMIC>>(g));
        return;
    }
    const bool all = kind == SHAPE_MAIN;  // the edge shape: every part checked; cuBLAS and the best timed
    const uint32_t band = g->band;
    GEMM_PART("wgmma_sync", g, all, TAIL_NONE, launch_wgmma_sync(g));
    GEMM_PART("ring", g, all, TAIL_NONE, launch_gemm<Ring>(g, false, 1, 1));
    GEMM_PART("ring_setmaxnreg", g, all, TAIL_NONE, launch_gemm<RingRegs>(g, false, 1, 1));
    GEMM_PART("cooperative", g, all, TAIL_NONE, launch_gemm<RingRegs>(g, true, 1, 1));
    // Ping-pong's units are 64 x 256: twice as many tiles, each reading all of
    // B's tile for half the rows, so without the banded raster its operands
    // miss L2 (pingpong_rowmajor); with it, it is measured as it can be.
    GEMM_PART("pingpong", g, all, TAIL_NONE, launch_gemm<Pingpong>(g, true, band, 1));
    GEMM_PART("pingpong_rowmajor", g, all, TAIL_NONE, launch_gemm<Pingpong>(g, true, 1, 1));
    GEMM_PART("multicast_2x1", g, all, TAIL_NONE, launch_gemm<Best>(g, true, 1, 1));
    GEMM_PART("multicast_1x2", g, all, TAIL_NONE, launch_gemm<Multicast1x2>(g, true, 1, 1));
    GEMM_PART("persistent", g, true, TAIL_NONE, launch_gemm<Best>(g, true, band, 1));
    GEMM_PART("persistent_tma_store", g, all, TAIL_STORE,
              launch_gemm<Best::WithEpilogue<EPI_TMA_STORE>>(g, true, band, 1));
    // Stream-K's tail (stream_k.cuh): the last round's tiles cut along K, so
    // that no cluster idles through a partly empty round; with either epilogue.
    GEMM_PART("stream_k", g, all, TAIL_NONE, launch_stream_k<Best>(g, band));
    GEMM_PART("stream_k_tma_store", g, true, TAIL_STORE,
              launch_stream_k<Best::WithEpilogue<EPI_TMA_STORE>>(g, band));
    // The ablation: the best kernel with one mechanism off at a time.
    GEMM_PART("ablate_no_multicast", g, all, TAIL_NONE, launch_gemm<Best::NoMulticast>(g, true, band, 1));
    GEMM_PART("ablate_no_setmaxnreg", g, all, TAIL_NONE, launch_gemm<Best::NoSetmaxnreg>(g, true, band, 1));
    GEMM_PART("ablate_no_warp_special", g, all, TAIL_NONE,
              launch_gemm<Best::NoSpecialization>(g, true, band, 1));
    GEMM_PART("ablate_stages_2", g, all, TAIL_NONE, launch_gemm<Best::WithStages<2>>(g, true, band, 1));
    GEMM_PART("ablate_rowmajor_raster", g, all, TAIL_NONE, launch_gemm<Best>(g, true, 1, 1));
}

// What every problem shares: the stream, the libraries, the options.
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    cublasHandle_t h;
    cublasLtHandle_t lt;
    void* workspace;  // LT_WORKSPACE bytes for cublasLt
    uint32_t splits, band;
} Session;

// One problem: data, reference, tensor maps, cuBLAS's best candidate, the parts.
static void part_problem(const char* prefix, uint32_t m, uint32_t n, uint32_t k, ShapeKind kind,
                         const Session* ses) {
    Gemm g;
    memset(&g, 0, sizeof g);
    const cudaStream_t s = ses->s;
    g.cli = ses->cli, g.prefix = prefix, g.s = s, g.h = ses->h, g.splits = ses->splits, g.band = ses->band;
    const uint32_t seed = ses->cli->seed;
    g.m = m, g.n = n, g.k = k, g.ld_ab = round_up(k, 8), g.ldc = output_ld(n);
    g.framed_words = (size_t)(m + 2 * FRAME) * g.ldc;
    g.a = make_operand(seed, m, k, g.ld_ab, &g.host_a, s);
    g.b = make_operand(seed ^ 0xB0Bu, n, k, g.ld_ab, &g.host_b, s);
    CUDA_CHECK(cudaMalloc((void**)&g.out, g.framed_words * 4));
    g.c = g.out + (size_t)FRAME * g.ldc + FRAME;
    g.want = (uint32_t*)xmalloc(g.framed_words * 4, "the expected output");
    // One flag per consumer warpgroup of every CTA tile a stream-K tail can hold (at most all of them).
    const size_t flag_words = ((size_t)(m + 63) / 64 + 4) * ((n + BN - 1) / BN + 2) * 2;
    CUDA_CHECK(cudaMalloc((void**)&g.flags, flag_words * 4));
    CUDA_CHECK(cudaMemsetAsync(g.flags, 0, flag_words * 4, s));
    g.a_box[0] = operand_map(g.a, m, &g, 128, "A in boxes of 64 x 128");
    g.a_box[1] = operand_map(g.a, m, &g, 64, "A in boxes of 64 x 64");
    g.a_box[2] = operand_map(g.a, m, &g, 32, "A in boxes of 64 x 32");
    g.b_box[0] = operand_map(g.b, n, &g, 256, "B in boxes of 64 x 256");
    g.b_box[1] = operand_map(g.b, n, &g, 128, "B in boxes of 64 x 128");
    const TensorMapSpec c_spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, g.c, m, n, (uint64_t)g.ldc * 4, WG_M, EPI_COLS,
                       CU_TENSOR_MAP_SWIZZLE_128B);
    g.c_box = make_tensor_map(&c_spec, "C in boxes of 32 x 64");
    run_reference(&g);
    LtBest best;
    choose_cublas_best(&g, &best, ses->lt, ses->workspace);
    run_parts(&g, kind);
    release_cublas_best(&best);
    CUDA_CHECK(cudaFree((void*)g.a));
    CUDA_CHECK(cudaFree((void*)g.b));
    CUDA_CHECK(cudaFree(g.out));
    CUDA_CHECK(cudaFree(g.flags));
    free(g.want);
    free(g.host_a);
    free(g.host_b);
}

// After the parts: how the kernels launched (machine-dependent: GPU lines).
static int kernel_registers(const void* kernel) {
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    return attr.numRegs;
}

// The main problem's waves and the tensor cores' peak. A persistent kernel
// deals cluster tiles to its resident clusters in rounds; the last round is
// partly idle (wave quantization). The peak: every SM's tensor cores doing
// 4096 flops (2048 bf16 FMAs) per clock, dense, at the SM clock's maximum:
// under sustained load the clock runs lower, so a fraction of it is a floor
// of how near the tensor cores' limit a kernel runs.
#define DENSE_BF16_FLOP_PER_CLOCK_SM 4096
static void report_waves_and_peak(uint32_t m, uint32_t n, uint32_t k) {
    const uint32_t ctiles = (((m + Best::BM - 1) / Best::BM + Best::ClusterM - 1) / Best::ClusterM) *
                            (((n + BN - 1) / BN + Best::ClusterN - 1) / Best::ClusterN);
    const uint32_t clusters = (uint32_t)resident_clusters<Best>(),
                   rounds = (ctiles + clusters - 1) / clusters;
    record_gpu_line(
        "waves: %u cluster tiles of %d x %d over %u clusters, %.2f each: %u rounds, %.1f %% of the "
        "cluster-rounds busy",
        ctiles, Best::BM * Best::ClusterM, BN * Best::ClusterN, clusters, (double)ctiles / clusters, rounds,
        100.0 * ctiles / ((double)rounds * clusters));
    int sms = 0, khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    const double peak = (double)sms * DENSE_BF16_FLOP_PER_CLOCK_SM * khz * 1e3, flops = 2.0 * m * n * k;
    const double ms_cublas = perf_ms("cublas"), ms_ours = perf_ms("persistent");
    record_gpu_line(
        "peak: %d SMs x %d flop per clock (dense bf16) x %d MHz (the SM clock's maximum) = %.1f TFLOP/s; "
        "cublas reached %.1f %% of it, persistent %.1f %%",
        sms, DENSE_BF16_FLOP_PER_CLOCK_SM, khz / 1000, peak / 1e12,
        ms_cublas > 0 ? 100.0 * flops / (ms_cublas * 1e-3) / peak : 0.0,
        ms_ours > 0 ? 100.0 * flops / (ms_ours * 1e-3) / peak : 0.0);
}

static void report_launches(uint32_t band) {
    record_gpu_line(
        "persistent: %d clusters of %d x %d CTAs of %d threads, %d stages of %d KiB, %d registers per thread "
        "at "
        "launch, setmaxnreg %d (producer) / %d (consumers), band of %u cluster-tile rows",
        resident_clusters<Best>(), Best::ClusterM, Best::ClusterN, Best::Threads, Best::Stages,
        Best::StageBytes >> 10, kernel_registers((const void*)gemm_ws<Best>), PRODUCER_REGS, CONSUMER_REGS,
        band);
    record_gpu_line(
        "registers at launch: wgmma_sync %d, ring %d, pingpong %d, no_warp_special %d, no_setmaxnreg %d",
        kernel_registers((const void*)wgmma_sync), kernel_registers((const void*)gemm_ws<Ring>),
        kernel_registers((const void*)gemm_ws<Pingpong>),
        kernel_registers((const void*)gemm_ws<Best::NoSpecialization>),
        kernel_registers((const void*)gemm_ws<Best::NoSetmaxnreg>));
}

// ---------------------------------------------------------------------------
enum {
    OPT_M,
    OPT_N,
    OPT_K,
    OPT_EDGE_M,
    OPT_EDGE_N,
    OPT_EDGE_K,
    OPT_SPLIT_M,
    OPT_SPLIT_N,
    OPT_SPLIT_K,
    OPT_SPLITS,
    OPT_BAND,
    NUM_OPTS
};
static const IntOption kOptions[NUM_OPTS] = {
    {"--m", "M", "rows of A and C of the timed problem", 1, 32768, 8192, 1024},
    {"--n", "N", "rows of B, columns of C", 1, 32768, 8192, 1024},
    {"--k", "K", "the inner dimension (exact sums need K <= 2^20)", 1, MAX_K, 8192, 1024},
    // The edge problem, full and --quick (the sanitizers' run): no size a multiple of a tile; an odd number
    // of 128-row tiles (63, 9) whose last holds under 64 rows, so a cluster of 2 runs a padding CTA and a
    // warpgroup a padding tile; an odd K (a K tail from the TMA's zero fill, and a row padded to 16 bytes
    // with NaNs that only a load past K would read); C's rows (4097, 777 floats) no multiple of 16 bytes.
    {"--edge-m", "M", "M of the edge problem (every part checked; cuBLAS and the best timed)", 1, 32768, 7990,
     1050},
    {"--edge-n", "N", "N of the edge problem", 1, 32768, 4097, 777},
    {"--edge-k", "K", "K of the edge problem", 1, MAX_K, 3001, 1001},
    {"--splitk-m", "M", "M of the K-heavy split-K problem", 1, 32768, 1024, 256},
    {"--splitk-n", "N", "N of the split-K problem", 1, 32768, 1024, 256},
    {"--splitk-k", "K", "K of the split-K problem", 1, MAX_K, 65536, 8192},
    {"--splits", "S", "pieces of K per tile in the split-K parts", 1, 64, 4, 4},
    {"--band", "B", "raster: bands of B cluster-tile rows (1 = row-major)", 1, 1024, 8, 8},
};

// Host bytes of one problem: elements (int8), a bf16 staging copy of the
// larger operand, the expected output and the pinned readback.
static size_t host_bytes(uint32_t m, uint32_t n, uint32_t k) {
    const uint32_t big = m > n ? m : n;
    return (size_t)(m + n) * k + (size_t)big * round_up(k, 8) * 2 +
           2 * 4 * (size_t)(m + 2 * FRAME) * output_ld(n);
}

// One problem's operands and framed output, and cublasLt's workspace (problems run one at a time).
static size_t device_bytes(uint32_t m, uint32_t n, uint32_t k) {
    return (size_t)(m + n) * round_up(k, 8) * 2 + 4 * (size_t)(m + 2 * FRAME) * output_ld(n) + LT_WORKSPACE;
}

// Every rule before the GPU is touched: the tensor maps' (the rows of A and B
// are padded to 16 bytes, so only sizes can break one) and host memory.
static void check_problem(const char* opts, uint32_t m, uint32_t n, uint32_t k) {
    char what[96];
    snprintf(what, sizeof what, "%s %u x %u x %u", opts, m, n, k);
    const TensorMapSpec a =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (const void*)256, m, k, (uint64_t)round_up(k, 8) * 2,
                       SYNC_M, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    require_tensor_rules(&a, what);
    require_host_memory(what, host_bytes(m, n, k));
}

static void check_arguments(const Cli* cli) {
    const long long* v = cli->value;
    check_problem("--m --n --k", (uint32_t)v[OPT_M], (uint32_t)v[OPT_N], (uint32_t)v[OPT_K]);
    check_problem("--edge-m --edge-n --edge-k", (uint32_t)v[OPT_EDGE_M], (uint32_t)v[OPT_EDGE_N],
                  (uint32_t)v[OPT_EDGE_K]);
    check_problem("--splitk-m --splitk-n --splitk-k", (uint32_t)v[OPT_SPLIT_M], (uint32_t)v[OPT_SPLIT_N],
                  (uint32_t)v[OPT_SPLIT_K]);
    const long long kblocks = (v[OPT_SPLIT_K] + BK - 1) / BK;
    if (v[OPT_SPLITS] > kblocks)
        die_usage("--splits %lld: --splitk-k %lld has only %lld k-blocks of %d, and every piece needs one",
                  v[OPT_SPLITS], v[OPT_SPLIT_K], kblocks, BK);
}

static const CliSpec kCli = {
    "09_gemm: C = A B^T in bf16 with fp32 accumulation on Hopper's tensor cores (wgmma + TMA),\n"
    "each method checked bit for bit and timed against cuBLAS.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

static void print_problem(const Cli* cli) {
    const long long* v = cli->value;
    print_header("09_gemm", "a bf16 GEMM with wgmma and TMA, from one synchronous loop to cuBLAS");
    printf(
        "problem: C = A B^T, A M x K and B N x K row-major bf16 (K-major: TN), C M x N row-major fp32; "
        "timed %lld x %lld x %lld, edge %lld x %lld x %lld, split-K %lld x %lld x %lld in %lld pieces; "
        "tiles %d x %d x %d\n",
        v[OPT_M], v[OPT_N], v[OPT_K], v[OPT_EDGE_M], v[OPT_EDGE_N], v[OPT_EDGE_K], v[OPT_SPLIT_M],
        v[OPT_SPLIT_N], v[OPT_SPLIT_K], v[OPT_SPLITS], 2 * WG_M, BN, BK);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const long long* v = cli.value;
    require_hopper();
    require_device_memory("--m --n --k",
                          device_bytes((uint32_t)v[OPT_M], (uint32_t)v[OPT_N], (uint32_t)v[OPT_K]));
    require_device_memory(
        "--edge-m --edge-n --edge-k",
        device_bytes((uint32_t)v[OPT_EDGE_M], (uint32_t)v[OPT_EDGE_N], (uint32_t)v[OPT_EDGE_K]));
    require_device_memory(
        "--splitk-m --splitk-n --splitk-k",
        device_bytes((uint32_t)v[OPT_SPLIT_M], (uint32_t)v[OPT_SPLIT_N], (uint32_t)v[OPT_SPLIT_K]));
    print_problem(&cli);
    Session ses = {&cli, NULL, NULL, NULL, NULL, (uint32_t)v[OPT_SPLITS], (uint32_t)v[OPT_BAND]};
    CUDA_CHECK(cudaStreamCreateWithFlags(&ses.s, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&ses.h));
    CUBLAS_CHECK(cublasSetStream(ses.h, ses.s));
    CUBLAS_CHECK(cublasLtCreate(&ses.lt));
    CUDA_CHECK(cudaMalloc(&ses.workspace, LT_WORKSPACE));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)wgmma_sync, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)tma_smem_bytes(SYNC_STAGE_BYTES, 1024)));
    part_problem("edge_", (uint32_t)v[OPT_EDGE_M], (uint32_t)v[OPT_EDGE_N], (uint32_t)v[OPT_EDGE_K],
                 SHAPE_EDGE, &ses);
    part_problem("", (uint32_t)v[OPT_M], (uint32_t)v[OPT_N], (uint32_t)v[OPT_K], SHAPE_MAIN, &ses);
    part_problem("splitk_", (uint32_t)v[OPT_SPLIT_M], (uint32_t)v[OPT_SPLIT_N], (uint32_t)v[OPT_SPLIT_K],
                 SHAPE_SPLIT_K, &ses);
    report_launches(ses.band);
    report_waves_and_peak((uint32_t)v[OPT_M], (uint32_t)v[OPT_N], (uint32_t)v[OPT_K]);
    CUDA_CHECK(cudaFree(ses.workspace));
    CUBLAS_CHECK(cublasLtDestroy(ses.lt));
    CUBLAS_CHECK(cublasDestroy(ses.h));
    CUDA_CHECK(cudaStreamDestroy(ses.s));
    return finish_against(cublas_reference_ms, "TFLOP/s", 1e12, "cublas");
}
