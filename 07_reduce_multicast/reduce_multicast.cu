// 07_reduce_multicast: two things the TMA does that a load or a store cannot:
// reduce a tile INTO global memory (store-reduce), and write one load into the
// shared memory of every CTA of a cluster (multicast). Each part is checked on
// every element, then timed against cudaMemcpy; one header each in
// 07_reduce_multicast/parts/.
// Part A, store-reduce: 1 reduce_ops (the tensor form: every op on u32
// tiles), 2 bulk_reduce_ops (the 1D form), both in reduce_ops.cuh; 3 split_k
// (f32: many CTAs add partial tiles into one tile set; TMA reduce against the
// coalesced atomicAdd, red.global.add.v4.f32 and one CTA's load-add-store, at
// 1 to 64 contributors, and atomicAdd in a strided layout, a lesson about
// layout), in split_k.cuh.
// Part B, clusters: 4 broadcast (every CTA needs the same tiles: cluster 1 to
// 16, with and without .multicast::cluster), in broadcast.cuh; 5 dsmem_ring
// (a bulk copy into a peer CTA's shared memory, completing on the peer's
// barrier), in dsmem.cuh.
// New since step 06: 07_reduce_multicast/tma_reduce.cuh, 07_reduce_multicast/cluster.cuh.
// SASS: make sass-07. Counters: make profile-07. Lesson: 07_reduce_multicast/README.md.
//
// Run: make run-07 [ARGS="--quick"], make check-07.
#include "07_reduce_multicast/parts/problem.cuh"
#include "07_reduce_multicast/parts/reduce_ops.cuh"
#include "07_reduce_multicast/parts/split_k.cuh"
#include "07_reduce_multicast/parts/broadcast.cuh"
#include "07_reduce_multicast/parts/dsmem.cuh"
// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_TILES, OPT_CTAS, OPT_MIB, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--rows", "R", "rows of the split-K output (f32, a multiple of 64)", 64, 16384, 512, 256},
    {"--cols", "C", "columns of the split-K output (a multiple of 64)", 64, 16384, 512, 256},
    {"--tiles", "T", "tiles of 64 x 64 u32 in the broadcast matrix", 1, 16384, 256, 16},
    {"--ctas", "N", "CTAs that each read the whole broadcast matrix (a multiple of 16)", 16, 4096, 112, 32},
    {"--mib", "M", "MiB of the cudaMemcpy reference copy", 1, 4096, 256, 8},
};
// Every rule before the GPU is touched, and the host memory.
static void check_arguments(const Cli* cli) {
    const long long rows = cli->value[OPT_ROWS], cols = cli->value[OPT_COLS], ctas = cli->value[OPT_CTAS];
    if (rows % RT_ROWS || cols % RT_COLS)
        die_usage("--rows %lld --cols %lld: both must be multiples of 64, the split-K tile", rows, cols);
    if (ctas % MAX_CLUSTER)
        die_usage("--ctas %lld is not a multiple of 16: the grid must divide into clusters of up to 16",
                  ctas);
    char msg[256];
    if (reduce_rule_broken(SPLITK_OP, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, msg, sizeof msg))
        die_internal("split_k asks for a .%s reduction on its f32 map: %s", kReduceOpName[SPLITK_OP], msg);
    const size_t n = (size_t)rows * cols, sums = (size_t)ctas * cli->value[OPT_TILES] * BT_ROWS;
    require_host_memory("--rows, --cols, --tiles, --ctas", n * 24 + sums * 8);
}

static const CliSpec kCli = {
    "07_reduce_multicast: TMA store-reduce (every op, and split-K against atomics) and cluster\n"
    "multicast (a broadcast operand, cluster 1 to 16), each checked on every element.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

static void print_problem(const Cli* cli) {
    print_header("07_reduce_multicast", "TMA store-reduce and cluster multicast");
    printf(
        "problem: reduce ops on %d x %d u32 (%d contributors); split-K %lld x %lld f32 in 64 x 64 tiles, 1 "
        "to %u "
        "contributors; broadcast %lld tiles of 64 x 64 u32 to %lld CTAs\n",
        OPS_ROWS, OPS_COLS, OPS_K, cli->value[OPT_ROWS], cli->value[OPT_COLS], kContributors[SPLITK_RUNS - 1],
        cli->value[OPT_TILES], cli->value[OPT_CTAS]);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint32_t rows = (uint32_t)cli.value[OPT_ROWS], cols = (uint32_t)cli.value[OPT_COLS];
    const uint32_t tiles = (uint32_t)cli.value[OPT_TILES], ctas = (uint32_t)cli.value[OPT_CTAS];
    const size_t ref_bytes = (size_t)cli.value[OPT_MIB] << 20;
    require_hopper();
    require_device_memory(
        "--rows, --cols, --tiles, --ctas, --mib",
        (size_t)rows * cols * 8 + (size_t)tiles * BT_BYTES * (1 + ctas / BT_ROWS) + 2 * ref_bytes);
    print_problem(&cli);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *ref_src = NULL, *ref_dst = NULL;
    CUDA_CHECK(cudaMalloc(&ref_src, ref_bytes));
    CUDA_CHECK(cudaMalloc(&ref_dst, ref_bytes));
    measure_memcpy_reference(ref_dst, ref_src, ref_bytes, &cli, s);
    CUDA_CHECK(cudaFree(ref_src));
    CUDA_CHECK(cudaFree(ref_dst));
    part_reduce_ops(cli.seed, s);
    part_split_k(rows, cols, cli.seed, &cli, s);
    part_broadcast(tiles, ctas, cli.seed, &cli, s);
    part_dsmem(cli.seed, s);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
