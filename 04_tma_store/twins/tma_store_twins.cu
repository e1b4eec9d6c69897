// 04_tma_store/twins: step 04's TMA store through the C++ APIs a learner will
// write next: CCCL's cuda::ptx and cuda::device::experimental, and CuTe's
// SM90_TMA_STORE atom with its commit and wait. Each block writes one 32 x 32 box of a matrix; this
// program checks every element; make test compiles it for sm_90a and
// compares each twin's SASS with the PTX kernel's, registers aside
// (tests/test_twins.py). Lesson: 04_tma_store/twins/README.md.
//
// Run: make check-04 (the step and its twins).

// The step's headers first: tensor_map.h includes <cuda.h> before
// <cudaTypedefs.h>, which declares the encoder's type only after cuda.h.
#include "03_tma_load/tensor_map.h"
#include "04_tma_store/tma_store.cuh"

#include <cuda/barrier>
#include <cuda/ptx>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>

#define BOX_ROWS 32
#define BOX_COLS 32
#define BOX_WORDS (BOX_ROWS * BOX_COLS)

// The PTX: the threads write the box, each fences its generic writes before
// the async proxy reads them, the block syncs, and one thread stores the box
// (cp.async.bulk.tensor.2d.global.shared::cta), commits the bulk group and
// waits until the store has read shared memory.
__global__ void store_ptx(const __grid_constant__ CUtensorMap map, uint32_t seed) {
    __shared__ alignas(128) uint32_t box[BOX_WORDS];
    for (uint32_t i = threadIdx.x; i < BOX_WORDS; i += blockDim.x) box[i] = seed + i;
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_store_2d(&map, BOX_COLS * blockIdx.x, 0, box);
        bulk_commit_group();
        bulk_wait_group_read<0>();
    }
}

// cuda::ptx: fence_proxy_async(space_shared), cp_async_bulk_tensor(space_global,
// space_shared, ...), cp_async_bulk_commit_group, cp_async_bulk_wait_group_read(n32_t<0>).
__global__ void store_cuda_ptx(const __grid_constant__ CUtensorMap map, uint32_t seed) {
    __shared__ alignas(128) uint32_t box[BOX_WORDS];
    for (uint32_t i = threadIdx.x; i < BOX_WORDS; i += blockDim.x) box[i] = seed + i;
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
        const int32_t coords[2] = {(int32_t)(BOX_COLS * blockIdx.x), 0};
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, &map, coords, box);
        cuda::ptx::cp_async_bulk_commit_group();
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
    }
}

// CCCL's higher level, cuda::device::experimental (in <cuda/barrier>):
// fence_proxy_async_shared_cta, cp_async_bulk_tensor_2d_shared_to_global,
// cp_async_bulk_commit_group and cp_async_bulk_wait_group_read<0>.
__global__ void store_cuda_experimental(const __grid_constant__ CUtensorMap map, uint32_t seed) {
    __shared__ alignas(128) uint32_t box[BOX_WORDS];
    for (uint32_t i = threadIdx.x; i < BOX_WORDS; i += blockDim.x) box[i] = seed + i;
    cuda::device::experimental::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::device::experimental::cp_async_bulk_tensor_2d_shared_to_global(&map, BOX_COLS * blockIdx.x, 0,
                                                                             box);
        cuda::device::experimental::cp_async_bulk_commit_group();
        cuda::device::experimental::cp_async_bulk_wait_group_read<0>();
    }
}

// CuTe: fence_view_async_shared is fence.proxy.async.shared::cta,
// SM90_TMA_STORE_2D::copy the same store, tma_store_arrive the commit and
// tma_store_wait<0> the wait for the reads.
__global__ void store_cute(const __grid_constant__ CUtensorMap map, uint32_t seed) {
    __shared__ alignas(128) uint32_t box[BOX_WORDS];
    for (uint32_t i = threadIdx.x; i < BOX_WORDS; i += blockDim.x) box[i] = seed + i;
    cutlass::arch::fence_view_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        cute::SM90_TMA_STORE_2D::copy(&map, box, BOX_COLS * blockIdx.x, 0);
        cute::tma_store_arrive();
        cute::tma_store_wait<0>();
    }
}

// ---- The run: every twin writes the same boxes; the whole matrix is compared.
enum { OPT_BOXES, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--boxes", "N", "blocks, one 32 x 32 uint32 box each", 1, 1 << 20, 65536, 256},
};
static void check_arguments(const Cli* cli) {
    require_host_memory("--boxes", (size_t)cli->value[OPT_BOXES] * BOX_WORDS * 4);
}
static const CliSpec kCli = {
    "04_tma_store/twins: step 04's TMA store written with cuda::ptx and CuTe; every element\n"
    "checked (the SASS comparison is make test's).",
    CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);
    const uint64_t blocks = (uint64_t)cli.value[OPT_BOXES], cols = blocks * BOX_COLS,
                   words = blocks * BOX_WORDS;
    require_hopper();
    require_device_memory("--boxes", words * 4);
    print_header("04_tma_store/twins", "the TMA store through cuda::ptx and CuTe");
    printf("problem: %llu blocks, each stores one 32 x 32 uint32 box of a 32 x %llu matrix\n",
           (unsigned long long)blocks, (unsigned long long)cols);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // Box b holds seed + (its offset in the box): row r, column 32 b + c of the matrix.
    uint32_t* want = (uint32_t*)xmalloc(words * 4, "the expected matrix");
    for (uint64_t b = 0; b < blocks; ++b)
        for (uint32_t r = 0; r < BOX_ROWS; ++r)
            for (uint32_t c = 0; c < BOX_COLS; ++c)
                want[r * cols + b * BOX_COLS + c] = cli.seed + r * BOX_COLS + c;
    uint32_t* m;
    CUDA_CHECK(cudaMalloc(&m, words * 4));
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m, BOX_ROWS, cols, cols * 4,
                                              BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the matrix (--boxes)");
    typedef void (*StoreKernel)(CUtensorMap, uint32_t);
    const struct {
        const char* name;
        StoreKernel kernel;
    } stores[] = {{"store_ptx", store_ptx},
                  {"store_cuda_ptx", store_cuda_ptx},
                  {"store_cuda_experimental", store_cuda_experimental},
                  {"store_cute", store_cute}};
    for (const auto& t : stores)
        CHECK_AND_TIME(t.name, NULL, s, m, want, words, 0,
                       t.kernel<<<(unsigned)blocks, 256, 0, s>>>(map, cli.seed));
    CUDA_CHECK(cudaFree(m));
    free(want);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
