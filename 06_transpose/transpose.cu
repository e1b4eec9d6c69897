// 06_transpose: out[c][r] = in[r][c] for an fp32 matrix, from the naive
// kernel to memory speed: what the TMA adds, what the swizzle adds, and what
// it takes to match cuBLAS. Parts, each checked on every word of a poisoned,
// guard-framed output, then timed against cudaMemcpy, one header each in
// 06_transpose/parts/: 1 naive and 2 smem_padded, the 32 x 33 tile
// (classic); 3 tma_naive, a box in, transposed in shared memory, a box out,
// and 4 tma_swizzle, 128B via 05_swizzle/swizzle.h (box_per_block); 5
// tma_swizzle_batched (batched); 6 tma_pipelined, a persistent ring, 4 x 4
// register blocks, tile order (pipelined); 6b ldg_blocked, part 6 with
// LDG/STG, no TMA (ldg_blocked); 7 cublas_sgeam (cublas). Each also runs on
// an edge matrix whose sizes are no multiple of any box (checked, not timed):
// run_parts lists them. The host's bank model: bank_model.cuh.
// New since step 05: 06_transpose/named_barrier.cuh (bar.sync for some warps).
// Part 7 links cuBLAS from the CUDA toolkit (06_transpose/check.py: build).
// SASS: make sass-06. Counters: make profile-06. Lesson: 06_transpose/README.md.
//
// Run: make run-06 [ARGS="--rows 4099 --cols 3001"], make check-06.
#include "06_transpose/parts/problem.cuh"
#include "06_transpose/parts/classic.cuh"
#include "06_transpose/parts/box_per_block.cuh"
#include "06_transpose/parts/batched.cuh"
#include "06_transpose/parts/pipelined.cuh"
#include "06_transpose/parts/ldg_blocked.cuh"
#include "06_transpose/parts/cublas.cuh"
#include "06_transpose/parts/bank_model.cuh"

// ---- Every part on one matrix ------------------------------------------------
static void run_parts(const Transpose* t, cublasHandle_t h, uint32_t band) {
    TRANSPOSE_PART("naive", t, false, launch_naive(t));
    TRANSPOSE_PART("smem_padded", t, false, launch_smem_padded(t));
    TRANSPOSE_PART("tma_naive", t, true, launch_box_per_block(t, false));
    TRANSPOSE_PART("tma_swizzle", t, true, launch_box_per_block(t, true));
    TRANSPOSE_PART("tma_swizzle_batched", t, true, launch_batched(t));
    TRANSPOSE_PART("ldg_blocked", t, false, launch_ldg_blocked(t, band));
    TRANSPOSE_PART("tma_pipelined", t, true, launch_pipelined(t, band));
    if (t->cli)  // the tile order's effect, timed: plain row-major order
        TRANSPOSE_PART("tma_pipelined_rowmajor", t, true, launch_pipelined(t, 1));
    TRANSPOSE_PART("cublas_sgeam", t, false, cublas_sgeam(t, h));
}

// One matrix: data, expected output, tensor maps, the parts.
static void part_matrix(const char* prefix, uint32_t rows, uint32_t cols, uint32_t ld_in, uint32_t band,
                        const Cli* cli, cudaStream_t s, cublasHandle_t h) {
    Transpose t;
    memset(&t, 0, sizeof t);
    t.cli = cli, t.prefix = prefix, t.s = s;
    t.rows = rows, t.cols = cols, t.ld_in = ld_in, t.ld_out = output_ld(rows);
    t.framed_words = (size_t)(cols + 2 * FRAME) * t.ld_out;
    const size_t in_words = (size_t)rows * ld_in;
    uint32_t* h_in = (uint32_t*)xmalloc(in_words * 4, "the input matrix");
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < ld_in; ++c)
            h_in[r * ld_in + c] = c < cols ? input_word(r * cols + c) : PAD_WORD;
    t.want = (uint32_t*)xmalloc(t.framed_words * 4, "the expected output");
    for (size_t k = 0; k < t.framed_words; ++k) t.want[k] = POISON_WORD;
    for (size_t c = 0; c < cols; ++c)
        for (size_t r = 0; r < rows; ++r)
            t.want[(FRAME + c) * t.ld_out + FRAME + r] = input_word(r * cols + c);
    float* in = NULL;
    CUDA_CHECK(cudaMalloc((void**)&in, in_words * 4));
    CUDA_CHECK(cudaMalloc((void**)&t.out, t.framed_words * 4));
    CUDA_CHECK(cudaMalloc((void**)&t.counter, sizeof *t.counter));
    CUDA_CHECK(cudaMemcpyAsync(in, h_in, in_words * 4, cudaMemcpyHostToDevice, s));
    t.in = in;
    t.interior = t.out + (size_t)FRAME * t.ld_out + FRAME;
    // Input map {cols, rows}, output map {rows, cols}: the store's
    // coordinates are the load's, swapped. Only the interior is described, so
    // a store clipped at the matrix's edge cannot reach the frame.
    const CUtensorMapDataType f32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    const CUtensorMapSwizzle none = CU_TENSOR_MAP_SWIZZLE_NONE, sw128 = CU_TENSOR_MAP_SWIZZLE_128B;
    TensorMapSpec in_spec = tensor_spec_2d(f32, in, rows, cols, (uint64_t)ld_in * 4, TILE, TILE, none);
    TensorMapSpec out_spec =
        tensor_spec_2d(f32, t.interior, cols, rows, (uint64_t)t.ld_out * 4, TILE, TILE, none);
    t.in_box = make_tensor_map(&in_spec, "the input (--rows, --cols, --ld)");
    t.out_box = make_tensor_map(&out_spec, "the framed output");
    in_spec.swizzle = out_spec.swizzle = sw128;
    t.in_swizzled = make_tensor_map(&in_spec, "the input, swizzled");
    t.out_swizzled = make_tensor_map(&out_spec, "the framed output, swizzled");
    in_spec.box[0] = PIPE_COLS, in_spec.box[1] = PIPE_ROWS;  // the pipelined kernel's tiles, one box each
    in_spec.swizzle = PIPE_IN_SWIZZLED ? sw128 : none;
    out_spec.box[0] = PIPE_ROWS, out_spec.box[1] = PIPE_COLS;
    out_spec.swizzle = PIPE_OUT_SWIZZLED ? sw128 : none;
    t.in_tile = make_tensor_map(&in_spec, "the input in PIPE_ROWS x PIPE_COLS tiles");
    t.out_tile = make_tensor_map(&out_spec, "the framed output in PIPE_COLS x PIPE_ROWS tiles");
    if (cli) measure_memcpy_reference(t.out, in, (size_t)rows * cols * 4, cli, s);
    run_parts(&t, h, band);
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(t.out));
    CUDA_CHECK(cudaFree(t.counter));
    free(h_in);
    free(t.want);
}

// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_LD, OPT_EDGE_ROWS, OPT_EDGE_COLS, OPT_BAND, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--rows", "R", "rows of the timed matrix (fp32)", 1, 32768, 16384, 1031},
    {"--cols", "C", "columns of the timed matrix", 1, 32768, 16384, 2053},
    {"--ld", "L", "elements from one input row to the next (0: --cols rounded up to 4, the 16-byte rule)", 0,
     65536, 0, 0},
    {"--edge-rows", "R", "rows of the edge matrix (checked, not timed)", 1, 32768, 4099, 259},
    {"--edge-cols", "C", "columns of the edge matrix", 1, 32768, 3001, 131},
    {"--band", "B", "tma_pipelined's and ldg_blocked's tile order: bands of B tile rows (1 = row-major)", 1,
     1024, 1024, 1024},
};
static uint32_t padded_ld(uint32_t cols) {
    return (cols + 3) / 4 * 4;
}

// Every rule before the GPU is touched, and the host memory.
static void check_arguments(const Cli* cli) {
    const uint32_t rows = (uint32_t)cli->value[OPT_ROWS], cols = (uint32_t)cli->value[OPT_COLS];
    const uint32_t ld = cli->value[OPT_LD] ? (uint32_t)cli->value[OPT_LD] : padded_ld(cols);
    char what[96];
    snprintf(what, sizeof what, "--rows %u --cols %u --ld %u", rows, cols, ld);
    if (ld < cols) die_usage("%s: --ld must be at least --cols, or one row would overlap the next", what);
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, (const void*)256, rows, cols,
                                              (uint64_t)ld * 4, TILE, TILE, CU_TENSOR_MAP_SWIZZLE_128B);
    require_tensor_rules(&spec, what);
    // The input, the expected output and the pinned readback of the larger matrix.
    const uint32_t er = (uint32_t)cli->value[OPT_EDGE_ROWS], ec = (uint32_t)cli->value[OPT_EDGE_COLS];
    const size_t big = (size_t)rows * ld + 2 * (size_t)(cols + 2 * FRAME) * output_ld(rows);
    const size_t edge = (size_t)er * padded_ld(ec) + 2 * (size_t)(ec + 2 * FRAME) * output_ld(er);
    require_host_memory(what, 4 * big);  // never both at once: each names its own options
    snprintf(what, sizeof what, "--edge-rows %u --edge-cols %u", er, ec);
    require_host_memory(what, 4 * edge);
}

static const CliSpec kCli = {
    "06_transpose: an fp32 matrix transpose, from the naive kernel through TMA, swizzle,\n"
    "batching and a pipeline to cuBLAS, each checked on every element.",
    CLI_REPS, kOptions, NUM_OPTS, check_arguments};

// Device memory one matrix takes: the input and the framed output.
static size_t matrix_bytes(uint32_t rows, uint32_t cols, uint32_t ld) {
    return 4 * ((size_t)rows * ld + (size_t)(cols + 2 * FRAME) * output_ld(rows));
}

// The deterministic preamble: header, problem line, the host-side checks.
static void print_problem(uint32_t rows, uint32_t cols, uint32_t ld, uint32_t er, uint32_t ec) {
    print_header("06_transpose", "an fp32 transpose, from naive to TMA + swizzle + pipeline, against cuBLAS");
    printf(
        "problem: timed %u x %u fp32 (row stride %u elements), edge %u x %u; boxes 32 x 32, pipelined tiles "
        "%d x %d\n",
        rows, cols, ld, er, ec, PIPE_ROWS, PIPE_COLS);
    check_writeup_index();
    print_bank_model();
}

static int kernel_registers(const void* kernel) {
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    return attr.numRegs;
}

// After the parts: how the pipeline and its plain twin launched.
static void report_pipeline(uint32_t band) {
    record_gpu_line("tma_pipelined: %d blocks per SM of %d threads, %d + %d stages of %d KiB, band %u",
                    blocks_per_sm((const void*)tma_pipelined, 32 + PIPE_CONSUMERS, pipelined_smem()),
                    32 + PIPE_CONSUMERS, PIPE_STAGES, PIPE_OUT_STAGES, PIPE_TILE_FLOATS * 4 >> 10, band);
    record_gpu_line(
        "ldg_blocked: %d blocks per SM (%d fit) of %d threads, %d regs, 2 x %d KiB in registers + %d KiB "
        "shared per block, band %u",
        LDG_BLOCKS_PER_SM, blocks_per_sm((const void*)ldg_blocked, LDG_THREADS, 0), LDG_THREADS,
        kernel_registers((const void*)ldg_blocked), PIPE_TILE_FLOATS * 4 >> 10, PIPE_TILE_FLOATS * 4 >> 10,
        band);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint32_t rows = (uint32_t)cli.value[OPT_ROWS], cols = (uint32_t)cli.value[OPT_COLS];
    const uint32_t ld = cli.value[OPT_LD] ? (uint32_t)cli.value[OPT_LD] : padded_ld(cols);
    const uint32_t er = (uint32_t)cli.value[OPT_EDGE_ROWS], ec = (uint32_t)cli.value[OPT_EDGE_COLS];
    const uint32_t band = (uint32_t)cli.value[OPT_BAND];
    require_hopper();
    require_device_memory("--rows, --cols, --ld", matrix_bytes(rows, cols, ld));
    require_device_memory("--edge-rows, --edge-cols", matrix_bytes(er, ec, padded_ld(ec)));
    print_problem(rows, cols, ld, er, ec);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, s));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)tma_pipelined, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)pipelined_smem()));
    part_matrix("edge_", er, ec, padded_ld(ec), band, NULL, s, h);
    part_matrix("", rows, cols, ld, band, &cli, s, h);
    report_pipeline(band);
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
