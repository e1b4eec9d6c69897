// 02_cp_async: Ampere's asynchronous copies: groups, zero-fill, pipelines.
//
// cp.async copies global -> shared without passing through registers and
// without making the thread wait; the thread decides when to wait, and for
// which copies. Parts, one header each in 02_cp_async/parts/: staged.cuh, the
// staged copy of step 01 filled five ways (LDG+STS, cp.async .ca 4/8/16, .cg
// 16); groups.cuh, four groups consumed oldest first; tail.cuh, the tail of an
// array (zero-fill and ignore-src); pipelines.cuh, pipelines of 1, 2 and N
// stages for a copy and for real arithmetic (polynomial.cuh), plain loads as
// deep as N stages, and the N-stage copy with persistent blocks.
// New since step 01: 02_cp_async/cp_async.cuh (the cp.async wrappers, and
// smem_u32/gmem_u64, which every later PTX header uses). SASS: make sass-02.
// Lesson: 02_cp_async/README.md.
//
// Run: make run-02 [ARGS="--stages 3" | "--chunk 16"],
//      make check-02, make sanitize-02.
#include "02_cp_async/parts/problem.cuh"
#include "02_cp_async/parts/staged.cuh"
#include "02_cp_async/parts/groups.cuh"
#include "02_cp_async/parts/tail.cuh"
#include "02_cp_async/parts/pipelines.cuh"
// ---------------------------------------------------------------------------
enum { OPT_MIB, OPT_TAIL, OPT_DEGREE, OPT_STAGES, OPT_CHUNK, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--mib", "N", "size of the input and output buffers in MiB", 1, 16384, 1024, 32},
    {"--tail", "N", "length in floats of the tail part's array (any length)", 1, 1 << 26, 1000003, 1000003},
    {"--degree", "D", "fused multiply-adds per element in the poly_* kernels", 1, MAX_DEGREE, 48, 48},
    {"--stages", "N", "stages of the N-stage pipeline", 3, 4, 4, 4},
    {"--chunk", "T", "16 KiB tiles per block in the copy_*/poly_* kernels (must divide 64 x --mib)", 1, 4096,
     4, 4},
};
static void check_arguments(const Cli* cli) {
    const size_t bytes = (size_t)cli->value[OPT_MIB] << 20, ntiles = bytes / (TILE4 * sizeof(float4));
    require_divisor("--chunk", cli->value[OPT_CHUNK], ntiles, "16 KiB tiles of the buffers (64 per MiB)");
    char what[64];
    snprintf(what, sizeof what, "--mib %lld", cli->value[OPT_MIB]);
    require_host_memory(what, 3 * bytes);  // the input, the polynomial's reference, the readback buffer
}

static const CliSpec kCli = {
    "02_cp_async: cp.async staged copies, groups, zero-filled tails and pipelines,\n"
    "each checked in full and timed as a fraction of cudaMemcpy D2D.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const size_t bytes = (size_t)cli.value[OPT_MIB] << 20, ntiles = bytes / (TILE4 * sizeof(float4));
    require_hopper();
    require_device_memory("--mib, --tail",
                          2 * bytes + 2 * ((size_t)cli.value[OPT_TAIL] + 64) * sizeof(float));
    print_header("02_cp_async", "asynchronous copies: cp.async, groups, zero-fill, pipelines");
    printf(
        "problem: %zu float32 per buffer (%lld MiB); tail array of %lld floats; polynomial of %lld FMAs per "
        "element; %lld-stage pipeline, %lld tiles of 16 KiB per block; seed %u\n",
        bytes / sizeof(float), cli.value[OPT_MIB], cli.value[OPT_TAIL], cli.value[OPT_DEGREE],
        cli.value[OPT_STAGES], cli.value[OPT_CHUNK], cli.seed);

    float* h_in = (float*)xmalloc(bytes, "the input");
    fill_seeded_floats(h_in, bytes / sizeof(float), cli.seed);
    float4 *in = NULL, *out = NULL;
    CUDA_CHECK(cudaMalloc((void**)&in, bytes));
    CUDA_CHECK(cudaMalloc((void**)&out, bytes));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMemcpyAsync(in, h_in, bytes, cudaMemcpyHostToDevice, s));
    const Copy c = {&cli, s, bytes, ntiles, in, out, (const uint32_t*)h_in};
    measure_memcpy_reference(out, in, bytes, &cli, s);
    part_staged(&c);
    part_groups(&c);
    part_tail(&c, (size_t)cli.value[OPT_TAIL]);
    part_pipelines(&c, (size_t)cli.value[OPT_CHUNK], (int)cli.value[OPT_DEGREE], (int)cli.value[OPT_STAGES]);
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    free(h_in);
    return finish();
}
