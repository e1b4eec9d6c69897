// 03_tma_load: the Tensor Memory Accelerator, loading: tensor maps and mbarriers.
//
// One thread names a box of a tensor by its coordinates; the TMA copies the
// whole box into shared memory and counts its bytes on an mbarrier, which
// every thread waits on. Parts, one header each in 03_tma_load/parts/: a grid
// of boxes over a matrix whose sizes are not multiples of the box (tiling);
// one barrier and two barriers reused across loads, the phase parity (reuse);
// a box hanging over the edge (out-of-bounds fill) and a strided box
// (one_box); a 1D bulk copy (bulk); every tensor-map rule checked against the
// driver's encoder (rules); a sum over 1 GiB: 16-byte loads, a TMA pipeline,
// the Hopper pipeline (a producer warp, consumer warps, full/empty barriers),
// and the tensor maps' L2 promotion measured on the sums (sums).
// New since step 02: 03_tma_load/tensor_map.h (host: the map and its rules),
// 03_tma_load/mbarrier.cuh, 03_tma_load/tma_load.cuh, 03_tma_load/pipeline.cuh
// (warp roles, setmaxnreg, schedules). Lesson: 03_tma_load/README.md.
// Run: make run-03 [ARGS="--cols 1001"], make check-03, make sass-03.
#include "03_tma_load/parts/problem.cuh"
#include "03_tma_load/parts/tiling.cuh"
#include "03_tma_load/parts/reuse.cuh"
#include "03_tma_load/parts/one_box.cuh"
#include "03_tma_load/parts/bulk.cuh"
#include "03_tma_load/parts/rules.cuh"
#include "03_tma_load/parts/sums.cuh"
// ---------------------------------------------------------------------------
enum { OPT_ROWS, OPT_COLS, OPT_BOX_ROWS, OPT_BOX_COLS, OPT_BULK, OPT_MIB, OPT_CHUNK, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--rows", "R", "rows of the part-1/2 matrix (uint32)", 1, 1 << 20, 3000, 3000},
    {"--cols", "C", "columns of the part-1/2 matrix (a row must be a multiple of 16 B)", 1, 1 << 20, 2000,
     2000},
    {"--box-rows", "R", "rows of a part-1 box", 1, 256, 64, 64},
    {"--box-cols", "C", "columns of a part-1 box", 1, 256, 64, 64},
    {"--bulk-bytes", "B", "bytes per 1D bulk copy in part 4 (must divide 1 MiB)", 16, 65536, 32768, 32768},
    {"--mib", "N", "size of the part-7 sum in MiB", 1, 16384, 1024, 32},
    {"--chunk", "T", "16 KiB boxes per block in sum_tma (must divide 64 x --mib)", 1, 4096, 8, 8},
};
// Every rule before the GPU is touched (cudaMalloc's addresses are 256-byte
// aligned, so an aligned stand-in address is checked), and the host memory.
static void check_arguments(const Cli* cli) {
    const uint64_t rows = (uint64_t)cli->value[OPT_ROWS], cols = (uint64_t)cli->value[OPT_COLS];
    const uint32_t box_rows = (uint32_t)cli->value[OPT_BOX_ROWS],
                   box_cols = (uint32_t)cli->value[OPT_BOX_COLS];
    const uint32_t bulk_bytes = (uint32_t)cli->value[OPT_BULK];
    char what[160], msg[256];
    snprintf(what, sizeof what, "--rows %llu --cols %llu --box-rows %u --box-cols %u",
             (unsigned long long)rows, (unsigned long long)cols, box_rows, box_cols);
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, (const void*)256, rows, cols,
                                              cols * 4, box_rows, box_cols, CU_TENSOR_MAP_SWIZZLE_NONE);
    require_tensor_rules(&spec, what);
    if ((size_t)box_rows * box_cols * 4 > MAX_BOX_BYTES)
        die_usage(
            "a box of %u x %u x 4 B = %u KiB does not fit this program's %d KiB of shared memory per box",
            box_rows, box_cols, box_rows * box_cols * 4 >> 10, MAX_BOX_BYTES >> 10);
    const uint64_t tiles = (rows + box_rows - 1) / box_rows * ((cols + box_cols - 1) / box_cols);
    require_grid(what, tiles, "boxes");
    if (bulk_copy_rule_broken(bulk_bytes, msg, sizeof msg)) die_usage("--bulk-bytes %u: %s", bulk_bytes, msg);
    require_divisor("--bulk-bytes", bulk_bytes, 1u << 20, "bytes of the 1 MiB part-4 buffer");
    require_divisor("--chunk", cli->value[OPT_CHUNK], (size_t)cli->value[OPT_MIB] * 64,
                    "16 KiB boxes of the part-7 sum (64 per MiB)");
    // The host holds the matrix, the expected boxes and their readback (part
    // 1), or the sum's buffer (part 7), whichever is more.
    const size_t mat = rows * cols * 4, boxes = tiles * box_rows * box_cols * 4,
                 sum = (size_t)cli->value[OPT_MIB] << 20;
    require_host_memory(what, mat + 2 * boxes);  // never both at once: each names its own options
    snprintf(what, sizeof what, "--mib %lld", cli->value[OPT_MIB]);
    require_host_memory(what, sum);
}

static const CliSpec kCli = {
    "03_tma_load: TMA loads with tensor maps and mbarriers, out-of-bounds fill, strides,\n"
    "1D bulk copies and a TMA read pipeline, each checked in full.",
    CLI_REPS, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint64_t rows = (uint64_t)cli.value[OPT_ROWS], cols = (uint64_t)cli.value[OPT_COLS];
    const uint32_t box_rows = (uint32_t)cli.value[OPT_BOX_ROWS], box_cols = (uint32_t)cli.value[OPT_BOX_COLS];
    const size_t sum_bytes = (size_t)cli.value[OPT_MIB] << 20;
    require_hopper();
    const size_t boxes =
        (rows + box_rows - 1) / box_rows * box_rows * ((cols + box_cols - 1) / box_cols * box_cols);
    // The matrix stays allocated through the sums (part 6 encodes maps on it):
    // plus the sum's buffer and the memcpy reference's copy.
    require_device_memory("--rows, --cols, --box-rows, --box-cols, --mib",
                          (rows * cols + boxes) * 4 + 2 * sum_bytes);
    print_header("03_tma_load", "TMA loads: tensor maps, mbarriers, out-of-bounds fill, bulk copies");
    printf(
        "problem: parts 1-2 a %llu x %llu uint32 matrix, part-1 boxes of %u x %u; part 4 bulk copies of %lld "
        "B; "
        "part 7 a sum over %lld MiB\n",
        (unsigned long long)rows, (unsigned long long)cols, box_rows, box_cols, cli.value[OPT_BULK],
        cli.value[OPT_MIB]);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const Matrix m = small_matrix(rows, cols, s);  // "small": the part-1 sizes
    part_tiling(&m, box_rows, box_cols, s);
    part_reuse(&m, s);
    part_out_of_bounds(s);
    part_bulk((uint32_t)cli.value[OPT_BULK], s);
    part_strided(s);
    part_rules(m.dev);
    part_sums(sum_bytes, (uint32_t)cli.value[OPT_CHUNK], &cli, s);
    CUDA_CHECK(cudaFree(m.dev));
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
