// 03_tma_load/twins: step 03's TMA load and 1D bulk load through the C++ APIs
// a learner will write next: CCCL's cuda::ptx (each PTX instruction as a C++
// function), cuda::device::memcpy_async_tx and
// cuda::device::experimental's tensor copy with a cuda::barrier, and CuTe
// (the SM90_TMA_LOAD and SM90_BULK_COPY_G2S atoms, and make_tma_copy with
// get_tma_tensor's coordinate tensor). This program checks that each moves every element;
// make test compiles it for sm_90a and compares each twin's SASS with the PTX
// kernel's, registers aside (tests/test_twins.py). Where a twin waits on an
// mbarrier, it waits with the step's bounded wait, through one helper, so the
// source line it reports is the same; only bulk_cuda_barrier waits CCCL's way.
// Lesson: 03_tma_load/twins/README.md.
//
// Run: make check-03 (the step and its twins).

// The step's headers first: tensor_map.h includes <cuda.h> before
// <cudaTypedefs.h>, which declares the encoder's type only after cuda.h.
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"

#include <cuda/barrier>
#include <cuda/ptx>
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>

#define BOX_ROWS 32
#define BOX_COLS 32
#define BOX_WORDS (BOX_ROWS * BOX_COLS)  // one box per block, one word per thread
#define BULK_THREADS 256                 // the bulk kernels: one uint4 per thread, 4 KiB per block

static __device__ __forceinline__ void wait_for_the_box(uint64_t* bar) {
    MBAR_WAIT(bar, 0);
}

// ---- The tensor load of one box (block b: rows 0..31, columns 32 b ..) ------

// The PTX: mbarrier.init + fence.mbarrier_init, arrive.expect_tx for the
// box's bytes, cp.async.bulk.tensor.2d, then the wait.
__global__ void load_ptx(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, sizeof box);
        tma_load_2d(box, &map, BOX_COLS * blockIdx.x, 0, &bar);
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
}

// cuda::ptx: the same four instructions, each qualifier a tag argument
// (sem_release, scope_cta, space_shared; space_cluster for the destination
// of the tensor copy, as the PTX's .shared::cluster).
__global__ void load_cuda_ptx(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_init(&bar, 1);
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, &bar, sizeof box);
        const int32_t coords[2] = {(int32_t)(BOX_COLS * blockIdx.x), 0};
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, box, &map, coords,
                                        &bar);
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
}

// CuTe's atom, called directly: SM90_TMA_LOAD_2D::copy is the same
// instruction with .L2::cache_hint and a 64-bit policy operand, always; with
// EVICT_NORMAL, the policy a load without a hint gets. The barrier calls are
// CuTe's names for mbarrier.init, fence.mbarrier_init, arrive.expect_tx.
__global__ void load_cute_atom(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        cute::initialize_barrier(bar, 1);
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        cute::set_barrier_transaction_bytes(bar, sizeof box);
        cute::SM90_TMA_LOAD_2D::copy(&map, &bar, (uint64_t)cute::TMA::CacheHintSm90::EVICT_NORMAL, box,
                                     BOX_COLS * blockIdx.x, 0);
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
}

// CuTe as it is usually written: the host builds the tensor map inside a
// TiledCopy (make_tma_copy, below); in the kernel, get_tma_tensor is the
// matrix as a tensor of COORDINATES (what the TMA takes instead of
// addresses), local_tile picks block b's box of them, and copy() issues the
// atom with the box's first coordinate. Same instructions as load_cute_atom.
template <class TmaLoad>
__global__ void load_cute(const __grid_constant__ TmaLoad tma, uint32_t* out, int rows, int cols) {
    using namespace cute;
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ uint64_t bar;
    const auto box_shape = make_shape(Int<BOX_ROWS>{}, Int<BOX_COLS>{});
    Tensor sbox = make_tensor(make_smem_ptr(box), make_layout(box_shape, LayoutRight{}));
    Tensor coords = tma.get_tma_tensor(make_shape(rows, cols));
    Tensor gbox = local_tile(coords, box_shape, make_coord(0, blockIdx.x));
    if (threadIdx.x == 0) {
        initialize_barrier(bar, 1);
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        set_barrier_transaction_bytes(bar, sizeof box);
        auto cta = tma.get_slice(0);
        copy(tma.with(bar), cta.partition_S(gbox), cta.partition_D(sbox));
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
}

// ---- The 1D bulk load of 4 KiB (no tensor map) -----------------------------

// The PTX: cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.
__global__ void bulk_ptx(const uint4* in, uint4* out) {
    __shared__ alignas(128) uint4 s[BULK_THREADS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, sizeof s);
        bulk_load(s, &in[blockIdx.x * BULK_THREADS], sizeof s, &bar);
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BULK_THREADS + threadIdx.x] = s[threadIdx.x];
}

// cuda::ptx::cp_async_bulk: the same instruction.
__global__ void bulk_cuda_ptx(const uint4* in, uint4* out) {
    __shared__ alignas(128) uint4 s[BULK_THREADS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_init(&bar, 1);
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, &bar, sizeof s);
        cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, s,
                                 &in[blockIdx.x * BULK_THREADS], sizeof s, &bar);
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BULK_THREADS + threadIdx.x] = s[threadIdx.x];
}

// CuTe's bulk atom: SM90_BULK_COPY_G2S::copy(src, &bar, dst, bytes), the same instruction.
__global__ void bulk_cute(const uint4* in, uint4* out) {
    __shared__ alignas(128) uint4 s[BULK_THREADS];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        cute::initialize_barrier(bar, 1);
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        cute::set_barrier_transaction_bytes(bar, sizeof s);
        cute::SM90_BULK_COPY_G2S::copy(&in[blockIdx.x * BULK_THREADS], &bar, s, sizeof s);
    }
    wait_for_the_box(&bar);
    out[blockIdx.x * BULK_THREADS + threadIdx.x] = s[threadIdx.x];
}

// A cuda::barrier in shared memory is never constructed (no __shared__
// variable is): init() is its constructor. nvcc warns about the constructor
// it will not run; the CUDA C++ Programming Guide's examples silence exactly
// that warning.
#pragma nv_diag_suppress static_var_with_dynamic_init

// cuda::device::memcpy_async_tx: the bulk copy on a block-scope cuda::barrier
// (which IS an mbarrier: barrier_native_handle gives its address), its bytes
// announced by barrier_arrive_tx (arrive.expect_tx), first, as in bulk_ptx.
__global__ void bulk_memcpy_async_tx(const uint4* in, uint4* out) {
    __shared__ alignas(128) uint4 s[BULK_THREADS];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        (void)cuda::device::barrier_arrive_tx(bar, 1, sizeof s);
        cuda::device::memcpy_async_tx(s, &in[blockIdx.x * BULK_THREADS], cuda::aligned_size_t<16>(sizeof s),
                                      bar);
    }
    wait_for_the_box(cuda::device::barrier_native_handle(bar));
    out[blockIdx.x * BULK_THREADS + threadIdx.x] = s[threadIdx.x];
}

// The same two calls in the order CCCL's examples use: the copy, then the
// arrive with its bytes. Legal (the transaction count may run ahead of the
// expect within a phase), and the same instructions, in another order.
__global__ void bulk_memcpy_async_tx_copy_first(const uint4* in, uint4* out) {
    __shared__ alignas(128) uint4 s[BULK_THREADS];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::device::memcpy_async_tx(s, &in[blockIdx.x * BULK_THREADS], cuda::aligned_size_t<16>(sizeof s),
                                      bar);
        (void)cuda::device::barrier_arrive_tx(bar, 1, sizeof s);
    }
    wait_for_the_box(cuda::device::barrier_native_handle(bar));
    out[blockIdx.x * BULK_THREADS + threadIdx.x] = s[threadIdx.x];
}

// CCCL's higher level for a tensor: cuda::device::experimental::
// cp_async_bulk_tensor_2d_global_to_shared on a block-scope cuda::barrier,
// its bytes announced by barrier_arrive_tx.
__global__ void load_cuda_experimental(const __grid_constant__ CUtensorMap map, uint32_t* out) {
    __shared__ alignas(1024) uint32_t box[BOX_WORDS];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        (void)cuda::device::barrier_arrive_tx(bar, 1, sizeof box);
        cuda::device::experimental::cp_async_bulk_tensor_2d_global_to_shared(box, &map, BOX_COLS * blockIdx.x,
                                                                             0, bar);
    }
    wait_for_the_box(cuda::device::barrier_native_handle(bar));
    out[blockIdx.x * BOX_WORDS + threadIdx.x] = box[threadIdx.x];
}

// CCCL all the way: every thread arrives (thread 0 with the bytes) and waits
// on its arrival token, bar.wait(token). The copy is the same UBLKCP; the
// wait is CCCL's own try_wait loop on the token: it never gives up and
// reports nothing, so a wrong byte count hangs the GPU instead of failing a
// check (the lesson's trap).
__global__ void bulk_cuda_barrier(const uint4* in, uint4* out) {
    __shared__ alignas(128) uint4 s[BULK_THREADS];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    cuda::barrier<cuda::thread_scope_block>::arrival_token token;
    if (threadIdx.x == 0) {
        token = cuda::device::barrier_arrive_tx(bar, 1, sizeof s);
        cuda::device::memcpy_async_tx(s, &in[blockIdx.x * BULK_THREADS], cuda::aligned_size_t<16>(sizeof s),
                                      bar);
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    out[blockIdx.x * BULK_THREADS + threadIdx.x] = s[threadIdx.x];
}

// ---- The run: every twin moves the same seeded data; all of it is compared.

// The boxes, block after block, as every load kernel writes them.
static void boxes_of(const uint32_t* m, uint64_t cols, uint64_t blocks, uint32_t* want) {
    for (uint64_t b = 0; b < blocks; ++b)
        for (int r = 0; r < BOX_ROWS; ++r)
            for (int c = 0; c < BOX_COLS; ++c)
                want[(b * BOX_ROWS + r) * BOX_COLS + c] = m[r * cols + b * BOX_COLS + c];
}

// CuTe's TMA: a tensor over the matrix (shape and strides, row-major) and the
// box's shared-memory layout; make_tma_copy encodes the same tensor map that
// tensor_map.h does (cuTensorMapEncodeTiled, through the runtime).
static void run_load_cute(uint32_t* m, uint64_t cols, uint64_t blocks, uint32_t* out, const uint32_t* want,
                          cudaStream_t s) {
    using namespace cute;
    Tensor matrix =
        make_tensor(make_gmem_ptr(m), make_layout(make_shape(BOX_ROWS, (int)cols), LayoutRight{}));
    const auto box_layout = make_layout(make_shape(Int<BOX_ROWS>{}, Int<BOX_COLS>{}), LayoutRight{});
    const auto tma = make_tma_copy(SM90_TMA_LOAD{}, matrix, box_layout);
    CHECK_AND_TIME("load_cute", NULL, s, out, want, blocks * BOX_WORDS, 0,
                   load_cute<<<(unsigned)blocks, BOX_WORDS, 0, s>>>(tma, out, BOX_ROWS, (int)cols));
}

static void part_tensor_load(uint64_t blocks, uint32_t seed, cudaStream_t s) {
    const uint64_t cols = blocks * BOX_COLS, words = blocks * BOX_WORDS;
    uint32_t* host = (uint32_t*)xmalloc(2 * words * 4, "the matrix and its boxes");
    uint32_t* want = host + words;
    fill_seeded_words(host, words, seed);
    boxes_of(host, cols, blocks, want);
    uint32_t *m, *out;
    CUDA_CHECK(cudaMalloc(&m, words * 4));
    CUDA_CHECK(cudaMalloc(&out, words * 4));
    CUDA_CHECK(cudaMemcpy(m, host, words * 4, cudaMemcpyHostToDevice));
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, m, BOX_ROWS, cols, cols * 4,
                                              BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the matrix (--boxes)");
    typedef void (*LoadKernel)(CUtensorMap, uint32_t*);
    const struct {
        const char* name;
        LoadKernel kernel;
    } loads[] = {{"load_ptx", load_ptx},
                 {"load_cuda_ptx", load_cuda_ptx},
                 {"load_cuda_experimental", load_cuda_experimental},
                 {"load_cute_atom", load_cute_atom}};
    for (const auto& t : loads)
        CHECK_AND_TIME(t.name, NULL, s, out, want, words, 0,
                       t.kernel<<<(unsigned)blocks, BOX_WORDS, 0, s>>>(map, out));
    run_load_cute(m, cols, blocks, out, want, s);
    CUDA_CHECK(cudaFree(m));
    CUDA_CHECK(cudaFree(out));
    free(host);
}

static void part_bulk_load(uint64_t blocks, uint32_t seed, cudaStream_t s) {
    const uint64_t words = blocks * BULK_THREADS * 4;
    uint32_t* want = (uint32_t*)xmalloc(words * 4, "the input");
    fill_seeded_words(want, words, seed);
    uint4 *in, *out;
    CUDA_CHECK(cudaMalloc(&in, words * 4));
    CUDA_CHECK(cudaMalloc(&out, words * 4));
    CUDA_CHECK(cudaMemcpy(in, want, words * 4, cudaMemcpyHostToDevice));
    typedef void (*BulkKernel)(const uint4*, uint4*);
    const struct {
        const char* name;
        BulkKernel kernel;
    } bulks[] = {{"bulk_ptx", bulk_ptx},
                 {"bulk_cuda_ptx", bulk_cuda_ptx},
                 {"bulk_memcpy_async_tx", bulk_memcpy_async_tx},
                 {"bulk_memcpy_async_tx_copy_first", bulk_memcpy_async_tx_copy_first},
                 {"bulk_cuda_barrier", bulk_cuda_barrier},
                 {"bulk_cute", bulk_cute}};
    for (const auto& t : bulks)
        CHECK_AND_TIME(t.name, NULL, s, out, want, words, 0,
                       t.kernel<<<(unsigned)blocks, BULK_THREADS, 0, s>>>(in, out));
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    free(want);
}

enum { OPT_BOXES, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--boxes", "N", "blocks of each kernel: 4 KiB boxes (tensor) and 4 KiB copies (bulk)", 1, 1 << 20, 65536,
     256},
};
static void check_arguments(const Cli* cli) {
    require_host_memory("--boxes", 2 * (size_t)cli->value[OPT_BOXES] * BOX_WORDS * 4);
}
static const CliSpec kCli = {
    "03_tma_load/twins: step 03's TMA load and bulk load written with cuda::ptx,\n"
    "cuda::device::memcpy_async_tx and cuda::barrier, and CuTe; every element checked (the SASS\n"
    "comparison is make test's).",
    CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);
    const uint64_t blocks = (uint64_t)cli.value[OPT_BOXES];
    require_hopper();
    require_device_memory("--boxes", 2 * blocks * BOX_WORDS * 4);
    print_header("03_tma_load/twins", "the TMA load through cuda::ptx, cuda::barrier and CuTe");
    printf(
        "problem: %llu blocks; tensor loads: one 32 x 32 uint32 box each of a 32 x %llu matrix; bulk loads: "
        "4 KiB each\n",
        (unsigned long long)blocks, (unsigned long long)(blocks * BOX_COLS));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    part_tensor_load(blocks, cli.seed, s);
    part_bulk_load(blocks, cli.seed, s);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
