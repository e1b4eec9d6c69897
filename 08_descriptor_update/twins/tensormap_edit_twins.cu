// 08_descriptor_update/twins: step 08's retarget of a tensor map through
// CCCL's cuda::ptx. Thread 0 copies a map into shared memory and
// replaces its address, dimension 0 and row stride, the warp copies it to
// global memory with the release fence built in, and a reader acquires it.
// This program retargets a map of one matrix to another of a different
// width, then loads every box of the new matrix through the edited map and
// checks every element; make test compiles it for sm_90a and compares the
// two kernels' SASS, registers aside (tests/test_twins.py).
// Lesson: 08_descriptor_update/twins/README.md.
//
// Run: make check-08 (the step and its twins).

// The step's headers first: tensor_map.h includes <cuda.h> before
// <cudaTypedefs.h>, which declares the encoder's type only after cuda.h.
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"

#include <cuda/ptx>

#define BOX_ROWS 32
#define BOX_COLS 32
#define BOX_WORDS (BOX_ROWS * BOX_COLS)

// The PTX: tensormap.replace (address, global_dim 0, global_stride 0),
// tensormap.cp_fenceproxy (copy + release, .sync.aligned: the whole warp),
// fence.proxy.tensormap::generic.acquire.gpu.
__global__ void retarget_ptx(const __grid_constant__ CUtensorMap src, CUtensorMap* slot, const float* base,
                             uint32_t cols, uint64_t row_bytes) {
    __shared__ alignas(128) CUtensorMap edit;
    if (threadIdx.x == 0) edit = src;
    __syncwarp();
    if (threadIdx.x == 0) {
        tmap_replace_address(&edit, base);
        tmap_replace_dim<0>(&edit, cols);
        tmap_replace_stride<0>(&edit, row_bytes);
    }
    __syncwarp();
    tmap_cp_fenceproxy(slot, &edit);
    tmap_acquire_gpu(slot);
}

// cuda::ptx: tensormap_replace_global_address / _global_dim / _global_stride
// (space_shared, the ordinal as n32_t), tensormap_cp_fenceproxy(sem_release,
// scope_gpu, ...), fence_proxy_tensormap_generic(sem_acquire, scope_gpu, ...).
__global__ void retarget_cuda_ptx(const __grid_constant__ CUtensorMap src, CUtensorMap* slot,
                                  const float* base, uint32_t cols, uint64_t row_bytes) {
    __shared__ alignas(128) CUtensorMap edit;
    if (threadIdx.x == 0) edit = src;
    __syncwarp();
    if (threadIdx.x == 0) {
        cuda::ptx::tensormap_replace_global_address(cuda::ptx::space_shared, &edit, (uint64_t)base);
        cuda::ptx::tensormap_replace_global_dim(cuda::ptx::space_shared, &edit, cuda::ptx::n32_t<0>(), cols);
        cuda::ptx::tensormap_replace_global_stride(cuda::ptx::space_shared, &edit, cuda::ptx::n32_t<0>(),
                                                   row_bytes);
    }
    __syncwarp();
    cuda::ptx::tensormap_cp_fenceproxy(cuda::ptx::sem_release, cuda::ptx::scope_gpu, slot, &edit,
                                       cuda::ptx::n32_t<128>());
    cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_acquire, cuda::ptx::scope_gpu, slot,
                                             cuda::ptx::n32_t<128>());
}

// The reader: block b loads box b of whatever matrix the map in global
// memory now describes (the edit was published by the kernel before, so the
// launch boundary orders it), and writes it out box after box.
__global__ void load_through(const CUtensorMap* map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, sizeof box);
        tma_load_2d(box, map, BOX_COLS * blockIdx.x, 0, &bar);
    }
    MBAR_WAIT(&bar, 0);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
}

// ---- The run: a map of matrix A (32 x 96 words) retargeted to matrix B (32 x
// 32 * --boxes words, another address and row stride), then B read through it.
typedef void (*RetargetKernel)(CUtensorMap, CUtensorMap*, const float*, uint32_t, uint64_t);

enum { OPT_BOXES, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--boxes", "N", "32 x 32 boxes in the retargeted matrix (at least 4: wider than the first)", 4, 1 << 20,
     65536, 256},
};
static void check_arguments(const Cli* cli) {
    require_host_memory("--boxes", 2 * (size_t)cli->value[OPT_BOXES] * BOX_WORDS * 4);
}
static const CliSpec kCli = {
    "08_descriptor_update/twins: step 08's device-side tensor-map edit written with cuda::ptx;\n"
    "the edited map is used and every element it loads checked (the SASS comparison is make test's).",
    CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);
    const uint64_t blocks = (uint64_t)cli.value[OPT_BOXES], cols = blocks * BOX_COLS,
                   words = blocks * BOX_WORDS;
    require_hopper();
    require_device_memory("--boxes", (2 * words + 3 * BOX_WORDS) * 4 + sizeof(CUtensorMap));
    print_header("08_descriptor_update/twins", "the device-side tensor-map edit through cuda::ptx");
    printf(
        "problem: a map of a 32 x 96 uint32 matrix retargeted to a 32 x %llu one, then its %llu boxes "
        "loaded through it\n",
        (unsigned long long)cols, (unsigned long long)blocks);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    uint32_t* host = (uint32_t*)xmalloc(2 * words * 4, "matrix B and its boxes");
    uint32_t* want = host + words;
    fill_seeded_words(host, words, cli.seed);
    for (uint64_t b = 0; b < blocks; ++b)
        for (uint32_t r = 0; r < BOX_ROWS; ++r)
            for (uint32_t c = 0; c < BOX_COLS; ++c)
                want[(b * BOX_ROWS + r) * BOX_COLS + c] = host[r * cols + b * BOX_COLS + c];
    uint32_t *a, *b, *out;
    CUtensorMap* slot;
    CUDA_CHECK(cudaMalloc(&a, 3 * BOX_WORDS * 4));
    CUDA_CHECK(cudaMalloc(&b, words * 4));
    CUDA_CHECK(cudaMalloc(&out, words * 4));
    CUDA_CHECK(cudaMalloc(&slot, sizeof *slot));
    CUDA_CHECK(cudaMemset(a, 0, 3 * BOX_WORDS * 4));  // A is never what the check wants
    CUDA_CHECK(cudaMemcpy(b, host, words * 4, cudaMemcpyHostToDevice));
    const TensorMapSpec spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, a, BOX_ROWS, 3 * BOX_COLS, 3 * BOX_COLS * 4, BOX_ROWS,
                       BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map_a = make_tensor_map(&spec, "matrix A");
    const struct {
        const char* name;
        RetargetKernel kernel;
    } edits[] = {{"retarget_ptx", retarget_ptx}, {"retarget_cuda_ptx", retarget_cuda_ptx}};
    for (const auto& t : edits) {
        CUDA_CHECK(cudaMemcpyAsync(slot, &map_a, sizeof map_a, cudaMemcpyHostToDevice, s));
        CHECK_AND_TIME(t.name, NULL, s, out, want, words, 0,
                       t.kernel<<<1, 32, 0, s>>>(map_a, slot, (const float*)b, (uint32_t)cols, cols * 4),
                       load_through<<<(unsigned)blocks, BOX_WORDS, 0, s>>>(slot, out));
    }
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(slot));
    free(host);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
