// 09_gemm/twins: step 09's warpgroup MMA through CuTe, the one library here
// that has it (CCCL's cuda::ptx has no wgmma). One warpgroup per block
// multiplies its 64 x 64 tile of A by a 256 x 64 B (both K-major bf16, put
// into shared memory by the TMA with the 128B swizzle): 4 MMAs of K = 16,
// once through 09_gemm/wgmma.cuh and once through CuTe's GMMA atom
// (SM90::GMMA::MMA_64x256x16_F32BF16BF16_SS), its descriptor built with
// CuTe's GmmaDescriptor fields, and CuTe's fence, commit and wait. Whole
// numbers make every sum exact, so every element of C is compared bit for
// bit; make test compiles it for sm_90a and compares the two kernels' SASS,
// registers aside (tests/test_twins.py). Lesson: 09_gemm/twins/README.md.
//
// Run: make check-09 (the step and its twins).

// The step's headers first: tensor_map.h includes <cuda.h> before
// <cudaTypedefs.h>, which declares the encoder's type only after cuda.h.
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "09_gemm/wgmma.cuh"

#include <cute/arch/mma_sm90_desc.hpp>
#include <cute/arch/mma_sm90_gmma.hpp>
#include <utility>

#define KDIM 64                      // one 128-byte swizzle row of bf16: the whole K of this problem
#define K_STEP 16                    // K of one MMA
#define ROWS_A 64                    // rows of A per block: the M of the MMA
#define ROWS_B 256                   // rows of B (B is N x K): the N of the MMA
#define A_BYTES (ROWS_A * KDIM * 2)  // 8 KiB
#define B_BYTES (ROWS_B * KDIM * 2)  // 32 KiB
#define THREADS 128                  // one warpgroup

// Both kernels: thread 0 loads block b's rows of A and all of B with the TMA
// (128B swizzle), everyone waits. One helper, so the wait's line is the same.
static __device__ __forceinline__ void load_tiles(const CUtensorMap* a_map, const CUtensorMap* b_map,
                                                  uint8_t* a, uint8_t* b, uint64_t* bar) {
    if (threadIdx.x == 0) {
        mbar_init(bar, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(bar, A_BYTES + B_BYTES);
        tma_load_2d(a, a_map, 0, ROWS_A * blockIdx.x, bar);
        tma_load_2d(b, b_map, 0, 0, bar);
    }
    MBAR_WAIT(bar, 0);
}

// The accumulator fragment (09_gemm/wgmma.cuh): thread t holds, for i = 0..31,
// row 16 (t / 32) + (t % 32) / 4 (+ 8 for d[4i + 2..3]), columns 8 i + 2 (t % 4) + 0, 1.
static __device__ __forceinline__ void store_fragment(const float (&d)[128], float* c) {
    const uint32_t row = ROWS_A * blockIdx.x + 16 * (threadIdx.x / 32) + threadIdx.x % 32 / 4;
#pragma unroll
    for (uint32_t i = 0; i < 32; ++i)
#pragma unroll
        for (uint32_t h = 0; h < 2; ++h) {
            float* p = c + (size_t)(row + 8 * h) * ROWS_B + 8 * i + 2 * (threadIdx.x % 4);
            *(float2*)p = make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
        }
}

// The PTX (09_gemm/wgmma.cuh): descriptors, wgmma.fence, 4 x
// wgmma.mma_async (the first one overwrites D), commit_group, wait_group 0.
__global__ void __launch_bounds__(THREADS)
    mma_ptx(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, float* c) {
    __shared__ alignas(1024) uint8_t tiles[A_BYTES + B_BYTES];
    __shared__ uint64_t bar;
    load_tiles(&a_map, &b_map, tiles, tiles + A_BYTES, &bar);
    float d[128];
    const uint64_t da = smem_desc_sw128(tiles), db = smem_desc_sw128(tiles + A_BYTES);
    wgmma_fence();
#pragma unroll
    for (uint32_t s = 0; s < KDIM / K_STEP; ++s) wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, s > 0);
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_operands(d);
    store_fragment(d, c);
}

// CuTe's atom takes the 128 accumulators as 128 separate references.
using CuteMma =
    cute::SM90::GMMA::MMA_64x256x16_F32BF16BF16_SS<cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::K>;
template <size_t... I>
static __device__ __forceinline__ void cute_mma(float (&d)[128], uint64_t da, uint64_t db,
                                                cute::SM90::GMMA::ScaleOut scale, std::index_sequence<I...>) {
    CuteMma::fma(da, db, d[I]..., scale);
}

// A K-major, 128B-swizzled tile's descriptor in CuTe's field names: the same
// start >> 4, LBO 1 (unused by the swizzled layouts), SBO 1024 >> 4, layout B128.
static __device__ __forceinline__ uint64_t cute_desc_sw128(const void* tile) {
    cute::GmmaDescriptor desc;
    desc.bitfield.start_address_ = (uint16_t)((smem_u32(tile) & 0x3FFFFu) >> 4);
    desc.bitfield.leading_byte_offset_ = 1;
    desc.bitfield.stride_byte_offset_ = 1024 >> 4;
    desc.bitfield.base_offset_ = 0;
    desc.bitfield.layout_type_ = (uint8_t)cute::SM90::GMMA::LayoutType::B128;
    return desc.desc_;
}

// CuTe: warpgroup_arrive is wgmma.fence, the atom's fma is wgmma.mma_async
// (ScaleOut::Zero for the first), warpgroup_commit_batch and warpgroup_wait
// the commit and the wait, warpgroup_fence_operand the empty asm that pins
// the accumulators after the wait.
__global__ void __launch_bounds__(THREADS)
    mma_cute(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, float* c) {
    __shared__ alignas(1024) uint8_t tiles[A_BYTES + B_BYTES];
    __shared__ uint64_t bar;
    load_tiles(&a_map, &b_map, tiles, tiles + A_BYTES, &bar);
    float d[128];
    const uint64_t da = cute_desc_sw128(tiles), db = cute_desc_sw128(tiles + A_BYTES);
    cute::warpgroup_arrive();
#pragma unroll
    for (uint32_t s = 0; s < KDIM / K_STEP; ++s)
        cute_mma(d, da + 2 * s, db + 2 * s,
                 s > 0 ? cute::SM90::GMMA::ScaleOut::One : cute::SM90::GMMA::ScaleOut::Zero,
                 std::make_index_sequence<128>{});
    cute::warpgroup_commit_batch();
    cute::warpgroup_wait<0>();
#pragma unroll
    for (int i = 0; i < 128; ++i) cute::warpgroup_fence_operand(d[i]);
    store_fragment(d, c);
}

// ---- The run: C = A B^T for --blocks x 64 rows of A, compared bit for bit ----

// bf16 of a small whole number: its float's top half, exactly.
static uint16_t bf16_of(int v) {
    const float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return (uint16_t)(bits >> 16);
}

enum { OPT_BLOCKS, NUM_OPTS };
static const IntOption kOptions[NUM_OPTS] = {
    {"--blocks", "N", "blocks: 64 rows of A and C each (C is --blocks * 64 x 256 fp32)", 1, 1 << 16, 4096,
     64},
};
static void check_arguments(const Cli* cli) {
    const size_t m = (size_t)cli->value[OPT_BLOCKS] * ROWS_A;
    require_host_memory("--blocks", m * KDIM * 2 + m * ROWS_B * 4 * 2 + ROWS_B * KDIM * 2);
}
static const CliSpec kCli = {
    "09_gemm/twins: step 09's wgmma written with CuTe's GMMA atom; every element of C checked\n"
    "(the SASS comparison is make test's).",
    CLI_SEED, kOptions, NUM_OPTS, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);
    const uint64_t blocks = (uint64_t)cli.value[OPT_BLOCKS], m = blocks * ROWS_A;
    require_hopper();
    require_device_memory("--blocks", m * KDIM * 2 + m * ROWS_B * 4 + ROWS_B * KDIM * 2);
    print_header("09_gemm/twins", "the warpgroup MMA through CuTe's GMMA atom");
    printf(
        "problem: C (%llu x 256, fp32) = A (%llu x 64) B^T (B: 256 x 64), bf16 whole numbers -4..4, one "
        "64-row "
        "tile per block\n",
        (unsigned long long)m, (unsigned long long)m);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int8_t* av = (int8_t*)xmalloc(m * KDIM + ROWS_B * KDIM, "A and B as integers");
    int8_t* bv = av + m * KDIM;
    uint16_t* ab = (uint16_t*)xmalloc((m * KDIM + ROWS_B * KDIM) * 2, "A and B as bf16");
    float* want = (float*)xmalloc(m * ROWS_B * 4, "the expected C");
    for (uint64_t i = 0; i < m * KDIM + ROWS_B * KDIM; ++i) {
        av[i] = (int8_t)(seeded_word(cli.seed, i) % 9u) - 4;
        ab[i] = bf16_of(av[i]);
    }
    for (uint64_t r = 0; r < m; ++r)
        for (uint32_t n = 0; n < ROWS_B; ++n) {
            int sum = 0;
            for (uint32_t k = 0; k < KDIM; ++k) sum += av[r * KDIM + k] * bv[n * KDIM + k];
            want[r * ROWS_B + n] = (float)sum;
        }
    uint16_t* a;
    float* c;
    CUDA_CHECK(cudaMalloc(&a, (m * KDIM + ROWS_B * KDIM) * 2));
    CUDA_CHECK(cudaMalloc(&c, m * ROWS_B * 4));
    CUDA_CHECK(cudaMemcpy(a, ab, (m * KDIM + ROWS_B * KDIM) * 2, cudaMemcpyHostToDevice));
    const TensorMapSpec a_spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, a, m, KDIM, KDIM * 2,
                                                ROWS_A, KDIM, CU_TENSOR_MAP_SWIZZLE_128B);
    const TensorMapSpec b_spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, a + m * KDIM, ROWS_B, KDIM,
                                                KDIM * 2, ROWS_B, KDIM, CU_TENSOR_MAP_SWIZZLE_128B);
    const CUtensorMap a_map = make_tensor_map(&a_spec, "A (--blocks)"), b_map = make_tensor_map(&b_spec, "B");
    typedef void (*MmaKernel)(CUtensorMap, CUtensorMap, float*);
    const struct {
        const char* name;
        MmaKernel kernel;
    } mmas[] = {{"mma_ptx", mma_ptx}, {"mma_cute", mma_cute}};
    for (const auto& t : mmas)
        CHECK_AND_TIME(t.name, NULL, s, c, (const uint32_t*)want, m * ROWS_B, 0,
                       t.kernel<<<(unsigned)blocks, THREADS, 0, s>>>(a_map, b_map, c));
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(c));
    free(av);
    free(ab);
    free(want);
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
