// 07_reduce_multicast/twins: step 07's TMA store-reduce and cluster multicast
// through the C++ APIs a learner will write next: CCCL's cuda::ptx
// (cp_reduce_async_bulk_tensor; cp_async_bulk_tensor with a ctaMask;
// barrier_cluster_arrive/wait) and CuTe's atoms (SM90_TMA_REDUCE_ADD,
// SM90_TMA_LOAD_MULTICAST) and TMA copy object (make_tma_copy with a cluster
// size, get_slice). This program checks every element: the sums of
// four blocks added into each box, and the box every CTA of a cluster
// receives; make test compiles it for sm_90a and compares each twin's SASS
// with the PTX kernel's, registers aside (tests/test_twins.py).
// Lesson: 07_reduce_multicast/twins/README.md.
//
// Run: make check-07 (the step and its twins).

// The step's headers first: tensor_map.h includes <cuda.h> before
// <cudaTypedefs.h>, which declares the encoder's type only after cuda.h.
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include "07_reduce_multicast/tma_reduce.cuh"

#include <cuda/ptx>
#include <cute/tensor.hpp>  // first: the copy algorithms need the atoms it declares
#include <cute/arch/copy_sm90_tma.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>

#define BOX_ROWS 32
#define BOX_COLS 32
#define BOX_WORDS (BOX_ROWS * BOX_COLS)
#define ADDERS 4   // blocks that add into each box
#define CLUSTER 2  // CTAs that receive each multicast box

// ---- The store-reduce: block b adds its box into box b % nboxes ------------

// Block b's contribution to element i of its box: small whole numbers, so
// float sums are exact in any order.
static __host__ __device__ __forceinline__ float addend(uint32_t b, uint32_t i) {
    return (float)((b * 7u + i) % 13u);
}

static __device__ __forceinline__ void fill_addends(float* box) {
    for (uint32_t i = threadIdx.x; i < BOX_WORDS; i += blockDim.x) box[i] = addend(blockIdx.x, i);
}

// The PTX: the box written, the generic writes fenced before the async proxy
// reads them, then cp.reduce.async.bulk.tensor.2d...add, commit, wait .read.
__global__ void reduce_ptx(const __grid_constant__ CUtensorMap map, uint32_t nboxes) {
    __shared__ alignas(128) float box[BOX_WORDS];
    fill_addends(box);
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_reduce_2d<RED_ADD>(&map, BOX_COLS * (blockIdx.x % nboxes), 0, box);
        bulk_commit_group();
        bulk_wait_group_read<0>();
    }
}

// cuda::ptx: cp_reduce_async_bulk_tensor(space_global, space_shared, op_add, ...).
__global__ void reduce_cuda_ptx(const __grid_constant__ CUtensorMap map, uint32_t nboxes) {
    __shared__ alignas(128) float box[BOX_WORDS];
    fill_addends(box);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
        const int32_t coords[2] = {(int32_t)(BOX_COLS * (blockIdx.x % nboxes)), 0};
        cuda::ptx::cp_reduce_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared,
                                               cuda::ptx::op_add, &map, coords, box);
        cuda::ptx::cp_async_bulk_commit_group();
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
    }
}

// CuTe: SM90_TMA_REDUCE_ADD_2D::copy, then the store's commit and wait.
__global__ void reduce_cute(const __grid_constant__ CUtensorMap map, uint32_t nboxes) {
    __shared__ alignas(128) float box[BOX_WORDS];
    fill_addends(box);
    cutlass::arch::fence_view_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        cute::SM90_TMA_REDUCE_ADD_2D::copy(&map, box, BOX_COLS * (blockIdx.x % nboxes), 0);
        cute::tma_store_arrive();
        cute::tma_store_wait<0>();
    }
}

// ---- The multicast: CTA 0 of each cluster of 2 loads box c (cluster c) once
// into both CTAs' shared memory; each CTA writes out the copy it received.

static __device__ __forceinline__ void wait_for_the_box(uint64_t* bar) {
    MBAR_WAIT(bar, 0);
}

// The PTX: every CTA inits its barrier and arms it for the box, the cluster
// barrier makes the inits visible to the peer, rank 0 issues the multicast
// (.multicast::cluster, ctaMask 0b11), each CTA waits on its own barrier; the
// closing cluster barrier keeps a CTA alive until its peer is done with it.
__global__ void __cluster_dims__(CLUSTER, 1, 1)
    multicast_ptx(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
        mbar_arrive_expect_tx(&bar, sizeof box);
    }
    cluster_sync();
    if (threadIdx.x == 0 && cluster_ctarank() == 0)
        tma_load_2d_multicast(box, &map, BOX_COLS * (blockIdx.x / CLUSTER), 0, &bar, (1u << CLUSTER) - 1);
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
    cluster_sync();
}

// cuda::ptx: the cluster barrier as barrier_cluster_arrive (sem_release) and
// barrier_cluster_wait (its acquire is the default), the multicast as
// cp_async_bulk_tensor with a ctaMask argument.
__global__ void __cluster_dims__(CLUSTER, 1, 1)
    multicast_cuda_ptx(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_init(&bar, 1);
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, &bar, sizeof box);
    }
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
    cuda::ptx::barrier_cluster_wait();
    if (threadIdx.x == 0 && cuda::ptx::get_sreg_cluster_ctarank() == 0) {
        const int32_t coords[2] = {(int32_t)(BOX_COLS * (blockIdx.x / CLUSTER)), 0};
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, box, &map, coords,
                                        &bar, (uint16_t)((1u << CLUSTER) - 1));
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
    cuda::ptx::barrier_cluster_wait();
}

// CuTe: SM90_TMA_LOAD_MULTICAST_2D::copy (with the L2 cache-hint operand, as
// every CuTe TMA load), cute::cluster_sync, cute::block_rank_in_cluster.
__global__ void __cluster_dims__(CLUSTER, 1, 1)
    multicast_cute(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        cute::initialize_barrier(bar, 1);
        cutlass::arch::fence_barrier_init();
        cute::set_barrier_transaction_bytes(bar, sizeof box);
    }
    cute::cluster_sync();
    if (threadIdx.x == 0 && cute::block_rank_in_cluster() == 0)
        cute::SM90_TMA_LOAD_MULTICAST_2D::copy(&map, &bar, (uint16_t)((1u << CLUSTER) - 1),
                                               (uint64_t)cute::TMA::CacheHintSm90::EVICT_NORMAL, box,
                                               BOX_COLS * (blockIdx.x / CLUSTER), 0);
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
    cute::cluster_sync();
}

// ---- The run --------------------------------------------------------------------

static TensorMapSpec spec_of(CUtensorMapDataType type, void* m, uint64_t cols) {
    return tensor_spec_2d(type, m, BOX_ROWS, cols, cols * 4, BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
}

// Each box starts as seeded small whole numbers and receives ADDERS boxes.
static void part_reduce(uint32_t nboxes, uint32_t seed, cudaStream_t s) {
    const uint64_t cols = (uint64_t)nboxes * BOX_COLS, words = (uint64_t)nboxes * BOX_WORDS;
    float* start = (float*)xmalloc(2 * words * 4, "the matrix before and after");
    float* after = start + words;
    for (uint64_t i = 0; i < words; ++i) start[i] = (float)(seeded_word(seed, i) % 1000u);
    memcpy(after, start, words * 4);
    for (uint32_t b = 0; b < ADDERS * nboxes; ++b)
        for (uint32_t i = 0; i < BOX_WORDS; ++i)
            after[(i / BOX_COLS) * cols + (uint64_t)(b % nboxes) * BOX_COLS + i % BOX_COLS] += addend(b, i);
    float* m;
    CUDA_CHECK(cudaMalloc(&m, words * 4));
    const TensorMapSpec spec = spec_of(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, m, cols);
    const CUtensorMap map = make_tensor_map(&spec, "the matrix (--boxes)");
    typedef void (*ReduceKernel)(CUtensorMap, uint32_t);
    const struct {
        const char* name;
        ReduceKernel kernel;
    } reduces[] = {
        {"reduce_ptx", reduce_ptx}, {"reduce_cuda_ptx", reduce_cuda_ptx}, {"reduce_cute", reduce_cute}};
    for (const auto& t : reduces) {
        CUDA_CHECK(cudaMemcpyAsync(m, start, words * 4, cudaMemcpyHostToDevice, s));
        CHECK_THEN_TIME(t.name, NULL, s, 0, check_device(t.name, m, (const uint32_t*)after, words, s),
                        t.kernel<<<ADDERS * nboxes, 256, 0, s>>>(map, nboxes));
    }
    CUDA_CHECK(cudaFree(m));
    free(start);
}
// CuTe's copy object: make_tma_copy(SM90_TMA_LOAD_MULTICAST, matrix, box layout, cluster size) on the
// host splits the box among the cluster's CTAs; in the kernel, get_slice(rank) gives CTA `rank` its
// share (16 of the 32 rows here), which it loads and multicasts to both. Each CTA's barrier therefore
// receives the whole box, half from each CTA: every CTA issues a load, and neither may exit before
// its peer's multicast into it has landed (the closing cluster barrier).
using BoxLayout = decltype(cute::make_layout(cute::make_shape(cute::Int<BOX_ROWS>{}, cute::Int<BOX_COLS>{}),
                                             cute::make_stride(cute::Int<BOX_COLS>{}, cute::Int<1>{})));

template <class TiledLoad>
__global__ void __cluster_dims__(CLUSTER, 1, 1)
    multicast_cute_tiled(const __grid_constant__ TiledLoad tma, uint32_t cols, uint32_t* out) {
    using namespace cute;
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        initialize_barrier(bar, 1);
        cutlass::arch::fence_barrier_init();
        set_barrier_transaction_bytes(bar, sizeof box);  // both halves land here
    }
    cute::cluster_sync();
    Tensor matrix = tma.get_tma_tensor(make_shape(Int<BOX_ROWS>{}, (int)cols));  // coordinates, not data
    Tensor g =
        local_tile(matrix, make_shape(Int<BOX_ROWS>{}, Int<BOX_COLS>{}), make_coord(0, blockIdx.x / CLUSTER));
    Tensor sm = make_tensor(make_smem_ptr(box), BoxLayout{});
    auto mine = tma.get_slice(block_rank_in_cluster());
    if (threadIdx.x == 0)
        copy(tma.with(bar, (uint16_t)((1u << CLUSTER) - 1)), mine.partition_S(g), mine.partition_D(sm));
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
    cute::cluster_sync();
}

// Cluster c's two CTAs both receive box c.
static void part_multicast(uint32_t nboxes, uint32_t seed, cudaStream_t s) {
    const uint64_t cols = (uint64_t)nboxes * BOX_COLS, words = (uint64_t)nboxes * BOX_WORDS;
    uint32_t* host = (uint32_t*)xmalloc((1 + CLUSTER) * words * 4, "the matrix and the received boxes");
    uint32_t* want = host + words;
    fill_seeded_words(host, words, seed);
    for (uint64_t cta = 0; cta < (uint64_t)CLUSTER * nboxes; ++cta)
        for (uint32_t i = 0; i < BOX_WORDS; ++i)
            want[cta * BOX_WORDS + i] =
                host[(i / BOX_COLS) * cols + (cta / CLUSTER) * BOX_COLS + i % BOX_COLS];
    uint32_t *m, *out;
    CUDA_CHECK(cudaMalloc(&m, words * 4));
    CUDA_CHECK(cudaMalloc(&out, CLUSTER * words * 4));
    CUDA_CHECK(cudaMemcpy(m, host, words * 4, cudaMemcpyHostToDevice));
    const TensorMapSpec spec = spec_of(CU_TENSOR_MAP_DATA_TYPE_UINT32, m, cols);
    const CUtensorMap map = make_tensor_map(&spec, "the matrix (--boxes)");
    typedef void (*MulticastKernel)(CUtensorMap, uint32_t*);
    const struct {
        const char* name;
        MulticastKernel kernel;
    } loads[] = {{"multicast_ptx", multicast_ptx},
                 {"multicast_cuda_ptx", multicast_cuda_ptx},
                 {"multicast_cute", multicast_cute}};
    for (const auto& t : loads)
        CHECK_AND_TIME(t.name, NULL, s, out, want, CLUSTER * words, 0,
                       t.kernel<<<CLUSTER * nboxes, BOX_WORDS, 0, s>>>(map, out));
    // CuTe's copy object encodes its own map from the matrix as a CuTe tensor (row-major: stride (cols, 1)).
    const auto matrix =
        cute::make_tensor(cute::make_gmem_ptr(m), cute::make_shape(cute::Int<BOX_ROWS>{}, (int)cols),
                          cute::make_stride((int)cols, cute::Int<1>{}));
    const auto tma =
        cute::make_tma_copy(cute::SM90_TMA_LOAD_MULTICAST{}, matrix, BoxLayout{}, cute::Int<CLUSTER>{});
    CHECK_AND_TIME("multicast_cute_tiled", NULL, s, out, want, CLUSTER * words, 0,
                   multicast_cute_tiled<<<CLUSTER * nboxes, BOX_WORDS, 0, s>>>(tma, (uint32_t)cols, out));
    CUDA_CHECK(cudaFree(m));
    CUDA_CHECK(cudaFree(out));
    free(host);
}

enum { OPT_BOXES, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--boxes", "N", "32 x 32 boxes in the matrix (4 blocks add into each; 2 CTAs receive each)", 1, 1 << 18,
     16384, 256},
};
static void check_arguments(const Cli* cli) {
    require_host_memory("--boxes", (1 + CLUSTER) * (size_t)cli->value[OPT_BOXES] * BOX_WORDS * 4);
}
static const CliSpec kCli = {
    "07_reduce_multicast/twins: step 07's TMA store-reduce and cluster multicast written with\n"
    "cuda::ptx and CuTe; every element checked (the SASS comparison is make test's).",
    CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);
    const uint32_t nboxes = (uint32_t)cli.value[OPT_BOXES];
    require_hopper();
    require_device_memory("--boxes", (1 + CLUSTER) * (size_t)nboxes * BOX_WORDS * 4);
    print_header("07_reduce_multicast/twins",
                 "the TMA store-reduce and multicast through cuda::ptx and CuTe");
    printf(
        "problem: a 32 x %u matrix of %u boxes; store-reduce: %d blocks add into each box (float32); "
        "multicast: "
        "clusters of %d, both CTAs receive the box (uint32)\n",
        nboxes * BOX_COLS, nboxes, ADDERS, CLUSTER);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    part_reduce(nboxes, cli.seed, s);
    part_multicast(nboxes, cli.seed, s);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
