// 08_descriptor_update: tensor maps edited on the device, and the fences that
// make the TMA see the edit, each part checked on every element. Parts, one
// header each in 08_descriptor_update/parts/: 1 fields (every field this step
// replaces, edited on the device and loaded through, against the host
// encoder's map with the same change), in fields.cuh; in grouped_copy.cuh, 2
// grouped_copy (64+ groups of different shapes, a persistent kernel that
// retargets its two maps in shared memory per group: cp_fenceproxy + acquire),
// 3 grouped_copy_global (the maps edited in place in global memory: release +
// acquire), 4 array_copy (same shape, a new base address per batch) and 6
// host_maps (maps written by the host: acquire at .sys); 5 cross_cta (one CTA
// builds a map, another uses it: st.release / ld.acquire + the proxy
// acquire), in cross_cta.cuh; 7 cost (an update on the device against the
// host's round trip), in cost.cuh. The groups themselves: problem.cuh.
// New since step 07: 08_descriptor_update/tensormap_edit.cuh.
// SASS: make sass-08. Lesson: 08_descriptor_update/README.md.
//
// Run: make run-08 [ARGS="--quick"], make check-08.
#include "08_descriptor_update/parts/fields.cuh"
#include "08_descriptor_update/parts/problem.cuh"
#include "08_descriptor_update/parts/grouped_copy.cuh"
#include "08_descriptor_update/parts/cross_cta.cuh"
#include "08_descriptor_update/parts/cost.cuh"
// ---------------------------------------------------------------------------
enum { OPT_GROUPS, OPT_ROWS, OPT_COLS, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--groups", "G",
     "groups in the grouped copy (each its own shape; cross_cta runs 2 CTAs per group at once)", 2, 192, 64,
     8},
    {"--rows", "R", "largest group's rows (f32)", 2, 8192, 2048, 200},
    {"--cols", "C", "largest group's columns (a multiple of 4)", 4, 8192, 2048, 256},
};
static void check_arguments(const Cli* cli) {
    const long long cols = cli->value[OPT_COLS], rows = cli->value[OPT_ROWS], groups = cli->value[OPT_GROUPS];
    if (cols % 4)
        die_usage(
            "--cols %lld is not a multiple of 4: a group's rows must be whole 16-byte chunks (a TMA store "
            "writes whole chunks)",
            cols);
    // The largest group, and the row stride it gets, must keep the TMA's rules.
    const TensorMapSpec s =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, (const void*)256, (uint64_t)rows, (uint64_t)cols,
                       (uint64_t)(cols + 32) * 4, BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    require_tensor_rules(&s, "--rows, --cols");
    require_host_memory("--groups, --rows, --cols", (size_t)groups * rows * (cols + 96) * 4 * 3);
}

static const CliSpec kCli = {
    "08_descriptor_update: tensor maps edited on the device (every field, the smem and the global\n"
    "path, a grouped copy, across CTAs, from the host), with the fences that make the TMA see them.",
    CLI_REPS, kOptions, NUM_OPTS, check_arguments};

static void print_problem(const GroupSet* gs, const GroupSet* as) {
    print_header("08_descriptor_update", "tensor maps edited on the device, and their fences");
    printf(
        "problem: %u groups, %llu MiB of elements, %u items of up to %d boxes of 32 x 128 f32; array case %u "
        "batches of %u x %u\n",
        gs->ngroups, (unsigned long long)(gs->data_bytes >> 20), gs->nitems, ITEM_BOXES, as->ngroups,
        as->groups[0].rows, as->groups[0].cols);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const uint32_t ng = (uint32_t)cli.value[OPT_GROUPS], rows = (uint32_t)cli.value[OPT_ROWS];
    const uint32_t cols = (uint32_t)cli.value[OPT_COLS];
    require_hopper();
    require_cross_cta_fits(ng);
    GroupSet gs, as;
    make_groups(&gs, ng, rows, cols, 1, false);
    make_groups(&as, ng, rows / 2, cols / 2 / 4 * 4, 2, true);
    // The reference copies as many bytes as the grouped copy moves: a smaller
    // cudaMemcpy runs at a lower rate and would flatter every fraction.
    const size_t ref_bytes = gs.data_bytes;
    require_device_memory("--groups, --rows, --cols", 8 * (gs.pool_words + as.pool_words) + 2 * ref_bytes);
    print_problem(&gs, &as);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    memcpy_reference_of(ref_bytes, &cli, s);
    part_fields(s);
    Copy c, a;
    copy_setup(&c, &gs, s);
    part_grouped(&c, &cli);
    part_cross_cta(&c);
    part_cost(&c);
    copy_free(&c);
    copy_setup(&a, &as, s);
    COPY_PART("array_copy_ldg", &a, &cli, launch_copy(&a, PATH_LDG, 1));
    COPY_PART("array_copy", &a, &cli, launch_copy(&a, PATH_SMEM, 1));
    copy_free(&a);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
