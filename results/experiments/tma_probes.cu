// Probes behind the lessons' last open questions: what the hardware does where the steps do not go.
// Each probe checks what landed word by word and prints one or more PROBE lines; none is a step part.
//   1. A cluster launch whose grid is no multiple of the cluster size (step 07): refused, and how.
//   2. A TMA store whose box starts at negative coordinates (step 04's wrapper says "must be >= 0"):
//      which words of the tensor are written, and is anything written outside it?
//   3. A TMA load into a PEER CTA's shared memory without multicast (step 07): the destination and the
//      mbarrier both in CTA 0, the load issued by CTA 1.
//   4. cp.async.bulk.prefetch.tensor into L2 (step 03): a 32 MiB matrix read by TMA loads after the L2
//      was flushed: cold, after a prefetch pass over it, and after a plain read pass.
//   5. cp.async.mbarrier.arrive (step 02 -> 03): cp.async copies whose completion an mbarrier tracks,
//      instead of a group wait.
//   6. An .im2col TMA load (step 03 names the mode and does not use it): the rows of a convolution's
//      implicit-GEMM operand gathered from an NHWC tensor, one pixel's channels per row, the padding
//      zero-filled; what lands, against the model the lesson states.
// Output: tma_probes_<GPU>.txt beside this file. Build: `make experiments`.
#include "02_cp_async/cp_async.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include <sys/wait.h>
#include <unistd.h>

// ---- 1. a grid that is no multiple of the cluster -----------------------------
__global__ void plain(int* out) {
    if (out) out[blockIdx.x] = 1;
}

static void probe_cluster_grid(void) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3(3), cfg.blockDim = dim3(32), cfg.attrs = &attr, cfg.numAttrs = 1;
    const cudaError_t e = cudaLaunchKernelEx(&cfg, plain, (int*)NULL);
    const cudaError_t sync = cudaDeviceSynchronize();
    printf("PROBE cluster_grid: grid 3 in clusters of 2: launch %s (%s), sync %s\n", cudaGetErrorName(e),
           cudaGetErrorString(e), cudaGetErrorName(sync));
    (void)cudaGetLastError();
    cfg.gridDim = dim3(4);
    const cudaError_t ok = cudaLaunchKernelEx(&cfg, plain, (int*)NULL);
    printf("PROBE cluster_grid: grid 4 in clusters of 2: launch %s, sync %s\n", cudaGetErrorName(ok),
           cudaGetErrorName(cudaDeviceSynchronize()));
}

// ---- 2. a TMA store at negative coordinates ------------------------------------
#define T_ROWS 64
#define T_COLS 64
#define T_BOX 32
#define T_GUARD 4096  // words of poison on each side of the tensor

__global__ void store_at(const __grid_constant__ CUtensorMap map, int32_t c0, int32_t c1) {
    __shared__ __align__(128) uint32_t box[T_BOX * T_BOX];
    for (uint32_t i = threadIdx.x; i < T_BOX * T_BOX; i += blockDim.x) box[i] = 0x10000u + i;  // row i / 32
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_store_2d(&map, c0, c1, box);
        bulk_commit_group();
        bulk_wait_group<0>();
    }
}

static void probe_negative_store(int32_t c0, int32_t c1) {
    const size_t words = T_ROWS * T_COLS + 2 * T_GUARD;
    uint32_t* dev = NULL;
    CUDA_CHECK(cudaMalloc((void**)&dev, words * 4));
    CUDA_CHECK(cudaMemset(dev, POISON_BYTE, words * 4));
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, dev + T_GUARD, T_ROWS, T_COLS,
                                              T_COLS * 4, T_BOX, T_BOX, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the probe's 64 x 64 tensor");
    store_at<<<1, 128>>>(map, c0, c1);
    const cudaError_t e = cudaDeviceSynchronize();
    uint32_t* host = (uint32_t*)xmalloc(words * 4, "the probe's tensor");
    size_t inside = 0, right = 0, outside = 0, expected = 0;
    if (e == cudaSuccess) {
        CUDA_CHECK(cudaMemcpy(host, dev, words * 4, cudaMemcpyDeviceToHost));
        for (size_t w = 0; w < words; ++w) {
            const bool in = w >= T_GUARD && w < T_GUARD + T_ROWS * T_COLS;
            if (!in) {
                outside += host[w] != POISON_WORD;
                continue;
            }
            const int32_t r = (int32_t)((w - T_GUARD) / T_COLS), c = (int32_t)((w - T_GUARD) % T_COLS);
            const int32_t br = r - c1, bc = c - c0;  // this word's place in the box, if it is in the box
            const bool in_box = br >= 0 && br < T_BOX && bc >= 0 && bc < T_BOX;
            expected += in_box;
            if (host[w] == POISON_WORD) continue;
            ++inside;
            right += in_box && host[w] == 0x10000u + (uint32_t)(br * T_BOX + bc);
        }
    }
    printf(
        "PROBE negative_store: box of %d x %d at (col %d, row %d): %s; %zu words of the tensor written "
        "(%zu lie in the box's overlap, %zu of them right), %zu written outside the tensor\n",
        T_BOX, T_BOX, c0, c1, cudaGetErrorName(e), inside, expected, right, outside);
    (void)cudaGetLastError();
    free(host);
    CUDA_CHECK(cudaFree(dev));
}

static void probe_negative_store_origin(void) {  // the control: the box at the origin
    probe_negative_store(0, 0);
}
static void probe_negative_store_before(void) {  // a box hanging over the tensor's first row and column
    probe_negative_store(-8, -16);
}
static void probe_negative_store_past(void) {  // a box hanging over the last row and column
    probe_negative_store(48, 40);
}

// ---- 3. a TMA load into a peer's shared memory, no multicast -------------------
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
    load_into_peer(const __grid_constant__ CUtensorMap map, uint32_t* out, unsigned* waited) {
    __shared__ __align__(128) uint32_t box[T_BOX * T_BOX];
    __shared__ __align__(8) uint64_t full;
    const uint32_t rank = cluster_ctarank();
    for (uint32_t i = threadIdx.x; i < T_BOX * T_BOX; i += blockDim.x) box[i] = POISON_WORD;
    fence_proxy_async_shared();
    if (threadIdx.x == 0) {
        mbar_init(&full, 1);
        mbar_fence_init();  // the init, visible to the cluster (the peer's TMA completes on it)
    }
    cluster_sync();
    if (rank == 0 && threadIdx.x == 0) mbar_arrive_expect_tx(&full, T_BOX * T_BOX * 4);
    cluster_sync();  // armed before the peer issues
    if (rank == 1 && threadIdx.x == 0)
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];"
            :
            : "r"(mapa_shared(box, 0)), "l"(&map), "r"(0), "r"(0), "r"(mapa_shared(&full, 0))
            : "memory");
    if (rank == 0) {
        const bool done = MBAR_WAIT(&full, 0);
        if (threadIdx.x == 0) *waited = done;
        for (uint32_t i = threadIdx.x; i < T_BOX * T_BOX; i += blockDim.x) out[i] = box[i];
    }
    cluster_sync();  // CTA 0's shared memory outlives the peer's access
}

static void probe_peer_load(void) {
    uint32_t *src = NULL, *out = NULL;
    unsigned* waited = NULL;
    CUDA_CHECK(cudaMalloc((void**)&src, T_ROWS * T_COLS * 4));
    CUDA_CHECK(cudaMalloc((void**)&out, T_BOX * T_BOX * 4));
    CUDA_CHECK(cudaMalloc((void**)&waited, 4));
    uint32_t* host = (uint32_t*)xmalloc(T_ROWS * T_COLS * 4, "the probe's source");
    fill_seeded_words(host, T_ROWS * T_COLS, 3);
    CUDA_CHECK(cudaMemcpy(src, host, T_ROWS * T_COLS * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(out, POISON_BYTE, T_BOX * T_BOX * 4));
    CUDA_CHECK(cudaMemset(waited, 0, 4));
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, src, T_ROWS, T_COLS, T_COLS * 4,
                                              T_BOX, T_BOX, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the probe's source");
    load_into_peer<<<2, 128>>>(map, out, waited);
    const cudaError_t e = cudaDeviceSynchronize();
    uint32_t got[T_BOX * T_BOX];
    unsigned w = 0;
    size_t wrong = T_BOX * T_BOX;
    if (e == cudaSuccess) {
        CUDA_CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(&w, waited, 4, cudaMemcpyDeviceToHost));
        wrong = 0;
        for (int r = 0; r < T_BOX; ++r)
            for (int c = 0; c < T_BOX; ++c) wrong += got[r * T_BOX + c] != host[r * T_COLS + c];
    }
    char hung[REPORT_CAP];
    const bool gave_up = take_wait_report(hung, sizeof hung);
    printf(
        "PROBE peer_load: CTA 1 loads a %d x %d box into CTA 0's shared memory, completing on CTA 0's "
        "barrier: %s, wait %s, %zu of %d words wrong%s%s\n",
        T_BOX, T_BOX, cudaGetErrorName(e), w ? "completed" : "did not complete", wrong, T_BOX * T_BOX,
        gave_up ? "; " : "", gave_up ? hung : "");
    (void)cudaGetLastError();
    free(host);
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(waited));
}

// ---- 4. prefetch.tensor into L2 -------------------------------------------------
#define P_ROWS 8192
#define P_COLS 1024  // uint32: 32 MiB, under both GPUs' L2 (50 and 60 MiB)
#define P_BOX_ROWS 64
#define P_BOX_COLS 64

__global__ void prefetch_all(const __grid_constant__ CUtensorMap map, uint32_t boxes) {
    const uint32_t per_row = P_COLS / P_BOX_COLS;
    for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < boxes; b += gridDim.x * blockDim.x)
        asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global [%0, {%1, %2}];"
                     :
                     : "l"(&map), "r"((int32_t)(b % per_row * P_BOX_COLS)),
                       "r"((int32_t)(b / per_row * P_BOX_ROWS))
                     : "memory");
}

// One box per block at a time, loaded by the TMA and summed: a read of every byte through the TMA.
__global__ void __launch_bounds__(256)
    sum_boxes(const __grid_constant__ CUtensorMap map, uint32_t boxes, unsigned long long* total) {
    uint32_t* box = (uint32_t*)tma_smem_base();
    __shared__ __align__(8) uint64_t full;
    if (threadIdx.x == 0) {
        mbar_init(&full, 1);
        mbar_fence_init();
    }
    __syncthreads();
    const uint32_t per_row = P_COLS / P_BOX_COLS;
    unsigned long long sum = 0;
    uint32_t phase = 0;
    for (uint32_t b = blockIdx.x; b < boxes; b += gridDim.x, phase ^= 1) {
        if (threadIdx.x == 0) {
            mbar_arrive_expect_tx(&full, P_BOX_ROWS * P_BOX_COLS * 4);
            tma_load_2d(box, &map, (int32_t)(b % per_row * P_BOX_COLS), (int32_t)(b / per_row * P_BOX_ROWS),
                        &full);
        }
        if (!MBAR_WAIT(&full, phase)) return;
        for (uint32_t i = threadIdx.x; i < P_BOX_ROWS * P_BOX_COLS; i += blockDim.x) sum += box[i];
        __syncthreads();  // every thread has read the box before it is loaded again
    }
    for (int off = 16; off > 0; off /= 2) sum += __shfl_down_sync(0xFFFFFFFFu, sum, off);
    if (threadIdx.x % 32 == 0) atomicAdd(total, sum);  // one atomic per warp, not per thread
}

static float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

static void probe_prefetch(void) {
    const size_t bytes = (size_t)P_ROWS * P_COLS * 4, flush_bytes = 512u << 20;
    uint32_t *src = NULL, *flush = NULL;
    unsigned long long* total = NULL;
    CUDA_CHECK(cudaMalloc((void**)&src, bytes));
    CUDA_CHECK(cudaMalloc((void**)&flush, flush_bytes));
    CUDA_CHECK(cudaMalloc((void**)&total, 8));
    CUDA_CHECK(cudaMemset(src, 1, bytes));
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, src, P_ROWS, P_COLS, P_COLS * 4,
                                              P_BOX_ROWS, P_BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the prefetched matrix");
    const uint32_t boxes = (P_ROWS / P_BOX_ROWS) * (P_COLS / P_BOX_COLS);
    const size_t smem = tma_smem_bytes(P_BOX_ROWS * P_BOX_COLS * 4);
    CUDA_CHECK(cudaFuncSetAttribute(sum_boxes, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaEvent_t e[4];
    for (int i = 0; i < 4; ++i) CUDA_CHECK(cudaEventCreate(&e[i]));
    // One block per box, all in flight: the read is as parallel as the GPU allows. Three cases after the
    // flush: cold (straight from DRAM), after a prefetch.tensor pass, after a plain read pass (the L2
    // already holding the matrix: what a perfect prefetch reaches).
    float ms[3][5], pre[5];
    for (int rep = 0; rep < 5; ++rep)
        for (int mode = 0; mode < 3; ++mode) {
            CUDA_CHECK(cudaMemset(flush, rep + mode, flush_bytes));  // evicts the matrix from L2
            CUDA_CHECK(cudaEventRecord(e[0]));
            if (mode == 1) prefetch_all<<<sms, 128>>>(map, boxes);
            if (mode == 2) sum_boxes<<<boxes, 256, smem>>>(map, boxes, total);
            CUDA_CHECK(cudaEventRecord(e[1]));
            CUDA_CHECK(cudaDeviceSynchronize());  // the prefetches are issued; let them land
            CUDA_CHECK(cudaMemset(total, 0, 8));
            CUDA_CHECK(cudaEventRecord(e[2]));
            sum_boxes<<<boxes, 256, smem>>>(map, boxes, total);
            CUDA_CHECK(cudaEventRecord(e[3]));
            CUDA_CHECK(cudaEventSynchronize(e[3]));
            unsigned long long t = 0;
            CUDA_CHECK(cudaMemcpy(&t, total, 8, cudaMemcpyDeviceToHost));
            if (t != (unsigned long long)P_ROWS * P_COLS * 0x01010101ull)
                printf("PROBE prefetch: WRONG SUM %llu (rep %d, case %d)\n", t, rep, mode);
            ms[mode][rep] = elapsed_ms(e[2], e[3]);
            if (mode == 1) pre[rep] = elapsed_ms(e[0], e[1]);
        }
    const float c = median_of(ms[0], 5), w = median_of(ms[1], 5), h = median_of(ms[2], 5),
                p = median_of(pre, 5);
    printf(
        "PROBE prefetch: a 32 MiB matrix read by TMA loads (one 64 x 64 box per block) after the L2 was "
        "flushed: %.4f ms cold, %.4f ms after a prefetch.tensor pass over it (the pass: %.4f ms), %.4f ms "
        "after a plain read pass; %.0f, %.0f and %.0f GB/s\n",
        c, w, p, h, bytes / (c * 1e-3) / 1e9, bytes / (w * 1e-3) / 1e9, bytes / (h * 1e-3) / 1e9);
    for (int i = 0; i < 4; ++i) CUDA_CHECK(cudaEventDestroy(e[i]));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(flush));
    CUDA_CHECK(cudaFree(total));
}

// ---- 5. cp.async completing on an mbarrier ---------------------------------------
#define A_WORDS 4096

__global__ void __launch_bounds__(256)
    cp_async_on_mbarrier(const uint32_t* src, uint32_t* out, unsigned* waited) {
    __shared__ __align__(16) uint32_t tile[A_WORDS];
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x == 0) {
        mbar_init(&bar, blockDim.x);  // one arrival per thread: each thread's cp.async.mbarrier.arrive
        mbar_fence_init();
    }
    __syncthreads();
    for (uint32_t i = 4 * threadIdx.x; i < A_WORDS; i += 4 * blockDim.x) cp_async_cg16(&tile[i], &src[i]);
    // .noinc: the arrive counts against the barrier's expected arrivals (blockDim.x, set at init); it
    // fires when all of THIS thread's earlier cp.async copies have landed.
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" : : "r"(smem_u32(&bar)) : "memory");
    const bool done = MBAR_WAIT(&bar, 0);
    if (threadIdx.x == 0) *waited = done;
    for (uint32_t i = threadIdx.x; i < A_WORDS; i += blockDim.x) out[i] = tile[i];  // other threads' copies
}

static void probe_cp_async_mbarrier(void) {
    uint32_t *src = NULL, *out = NULL;
    unsigned* waited = NULL;
    CUDA_CHECK(cudaMalloc((void**)&src, A_WORDS * 4));
    CUDA_CHECK(cudaMalloc((void**)&out, A_WORDS * 4));
    CUDA_CHECK(cudaMalloc((void**)&waited, 4));
    uint32_t* host = (uint32_t*)xmalloc(A_WORDS * 4, "the probe's words");
    fill_seeded_words(host, A_WORDS, 5);
    CUDA_CHECK(cudaMemcpy(src, host, A_WORDS * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(out, POISON_BYTE, A_WORDS * 4));
    cp_async_on_mbarrier<<<1, 256>>>(src, out, waited);
    const cudaError_t e = cudaDeviceSynchronize();
    uint32_t* got = (uint32_t*)xmalloc(A_WORDS * 4, "the probe's output");
    unsigned w = 0;
    size_t wrong = A_WORDS;
    if (e == cudaSuccess) {
        CUDA_CHECK(cudaMemcpy(got, out, A_WORDS * 4, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(&w, waited, 4, cudaMemcpyDeviceToHost));
        wrong = 0;
        for (int i = 0; i < A_WORDS; ++i) wrong += got[i] != host[i];
    }
    printf(
        "PROBE cp_async_mbarrier: 256 threads' cp.async copies tracked by cp.async.mbarrier.arrive.noinc: "
        "%s, wait %s, %zu of %d words wrong\n",
        cudaGetErrorName(e), w ? "completed" : "did not complete", wrong, A_WORDS);
    (void)cudaGetLastError();
    free(host);
    free(got);
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(waited));
}

// ---- 6. an .im2col load -----------------------------------------------------------
// NHWC fp32-sized words, N 2, H 6, W 6, C 16; word (n, h, w, c) holds its NHWC index + 1, so 0 is the
// fill. The map: channelsPerPixel 16 (one pixel's 64 bytes per row), pixelsPerColumn 32 (rows), the
// pixel box of a 3 x 3 filter with padding 1 and stride 1: lower corner (-1, -1), upper corner
// (-1, -1) in (W, H), so that output pixel (h, w) of image n starts at input (h - 1, w - 1).
#define IM_N 2
#define IM_H 6
#define IM_W 6
#define IM_C 16
#define IM_ROWS 32

// One .im2col load: coordinates {c, w, h, n} of the first output pixel's window corner, and the filter
// tap {offset_w, offset_h} (16-bit offsets, one per spatial dimension).
__global__ void im2col_load(const __grid_constant__ CUtensorMap map, int32_t w, int32_t h, int32_t n,
                            uint16_t off_w, uint16_t off_h, uint32_t* out, unsigned* waited) {
    __shared__ __align__(128) uint32_t rows[IM_ROWS * IM_C];
    __shared__ __align__(8) uint64_t full;
    for (uint32_t i = threadIdx.x; i < IM_ROWS * IM_C; i += blockDim.x) rows[i] = POISON_WORD;
    fence_proxy_async_shared();
    if (threadIdx.x == 0) {
        mbar_init(&full, 1);
        mbar_fence_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&full, IM_ROWS * IM_C * 4);
        asm volatile(
            "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
            :
            : "r"(smem_u32(rows)), "l"(&map), "r"(0), "r"(w), "r"(h), "r"(n), "r"(smem_u32(&full)),
              "h"(off_w), "h"(off_h)
            : "memory");
    }
    const bool done = MBAR_WAIT(&full, 0);
    if (threadIdx.x == 0) *waited = done;
    for (uint32_t i = threadIdx.x; i < IM_ROWS * IM_C; i += blockDim.x) out[i] = rows[i];
}

// The model: row i is output pixel p = first + i (w fastest, then h, then n, over the 6 x 6 output of
// each image); it holds input pixel (h_out - 1 + off_h, w_out - 1 + off_w) of image n_out, its 16
// channels in order, or 16 zeros where that pixel lies in the padding.
static uint32_t im2col_model(uint32_t first, uint32_t i, uint32_t c, int off_w, int off_h) {
    const uint32_t p = first + i, n = p / (IM_H * IM_W), h_out = p / IM_W % IM_H, w_out = p % IM_W;
    const int h = (int)h_out - 1 + off_h, w = (int)w_out - 1 + off_w;
    if (n >= IM_N || h < 0 || h >= IM_H || w < 0 || w >= IM_W) return 0u;
    return (((n * IM_H + (uint32_t)h) * IM_W + (uint32_t)w) * IM_C + c) + 1u;
}

static void probe_im2col_case(const CUtensorMap* map, uint32_t first, int off_w, int off_h, uint32_t* out,
                              unsigned* waited) {
    const int32_t n = (int32_t)(first / (IM_H * IM_W)), h = (int32_t)(first / IM_W % IM_H) - 1,
                  w = (int32_t)(first % IM_W) - 1;
    CUDA_CHECK(cudaMemset(out, POISON_BYTE, IM_ROWS * IM_C * 4));
    im2col_load<<<1, 128>>>(*map, w, h, n, (uint16_t)off_w, (uint16_t)off_h, out, waited);
    const cudaError_t e = cudaDeviceSynchronize();
    uint32_t got[IM_ROWS * IM_C];
    unsigned done = 0;
    size_t wrong = IM_ROWS * IM_C, fill_rows = 0;
    char first_rows[256] = "";
    if (e == cudaSuccess) {
        CUDA_CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(&done, waited, 4, cudaMemcpyDeviceToHost));
        wrong = 0;
        for (uint32_t i = 0; i < IM_ROWS; ++i) {
            for (uint32_t c = 0; c < IM_C; ++c)
                wrong += got[i * IM_C + c] != im2col_model(first, i, c, off_w, off_h);
            fill_rows += got[i * IM_C] == 0u;
        }
        for (uint32_t i = 0; i < 8; ++i) {  // the first rows as (n, h, w) of the pixel they hold, or fill
            char cell[32];
            const uint32_t v = got[i * IM_C];
            if (v == 0u)
                snprintf(cell, sizeof cell, " fill");
            else
                snprintf(cell, sizeof cell, " %u/%u/%u", (v - 1) / IM_C / (IM_H * IM_W),
                         (v - 1) / IM_C / IM_W % IM_H, (v - 1) / IM_C % IM_W);
            strncat(first_rows, cell, sizeof first_rows - strlen(first_rows) - 1);
        }
    }
    char hung[REPORT_CAP];
    const bool gave_up = take_wait_report(hung, sizeof hung);
    printf(
        "PROBE im2col: rows for output pixels %u..%u, filter tap (w %d, h %d): %s, wait %s; %zu of %d words "
        "differ from the model, %zu rows zero-filled; rows 0-7 hold (n/h/w):%s%s%s\n",
        first, first + IM_ROWS - 1, off_w, off_h, cudaGetErrorName(e),
        done ? "completed" : "did not complete", wrong, IM_ROWS * IM_C, fill_rows, first_rows,
        gave_up ? "; " : "", gave_up ? hung : "");
    (void)cudaGetLastError();
}

static void probe_im2col(void) {
    const size_t words = (size_t)IM_N * IM_H * IM_W * IM_C;
    uint32_t *src = NULL, *out = NULL;
    unsigned* waited = NULL;
    CUDA_CHECK(cudaMalloc((void**)&src, words * 4));
    CUDA_CHECK(cudaMalloc((void**)&out, IM_ROWS * IM_C * 4));
    CUDA_CHECK(cudaMalloc((void**)&waited, 4));
    uint32_t* host = (uint32_t*)xmalloc(words * 4, "the probe's NHWC tensor");
    for (size_t i = 0; i < words; ++i) host[i] = (uint32_t)i + 1u;
    CUDA_CHECK(cudaMemcpy(src, host, words * 4, cudaMemcpyHostToDevice));
    void* fn = NULL;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !fn) die_internal("cuTensorMapEncodeIm2col not found");
    const cuuint64_t dims[4] = {IM_C, IM_W, IM_H, IM_N};
    const cuuint64_t strides[3] = {IM_C * 4, IM_W * IM_C * 4, IM_H * IM_W * IM_C * 4};
    const int lower[2] = {-1, -1}, upper[2] = {-1, -1};
    const cuuint32_t estrides[4] = {1, 1, 1, 1};
    alignas(64) CUtensorMap map;
    const CUresult r = ((PFN_cuTensorMapEncodeIm2col_v12000)fn)(
        &map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, src, dims, strides, lower, upper, IM_C, IM_ROWS, estrides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("PROBE im2col: cuTensorMapEncodeIm2col answered %d\n", (int)r);
        return;
    }
    probe_im2col_case(&map, 0, 1, 1, out, waited);   // the centre tap: every row inside the image
    probe_im2col_case(&map, 0, 0, 0, out, waited);   // the top-left tap: rows of row 0 and column 0 fill
    probe_im2col_case(&map, 20, 2, 2, out, waited);  // across images: pixels 20..51, the bottom-right tap
    free(host);
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(waited));
}

// Each probe in its own process: a probe that faults leaves a sticky error in its CUDA context, and the
// next probe must not inherit it (the parent touches no CUDA before it forks).
static void (*const kProbes[])(void) = {
    probe_cp_async_mbarrier,   probe_peer_load, probe_negative_store_origin, probe_negative_store_before,
    probe_negative_store_past, probe_prefetch,  probe_cluster_grid,          probe_im2col};

int main(void) {
    const int n = (int)(sizeof kProbes / sizeof kProbes[0]);
    for (int i = -1; i < n; ++i) {
        fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0) die_internal("fork failed");
        if (pid == 0) {
            require_hopper();
            if (i < 0) {
                cudaDeviceProp prop;
                CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
                printf("GPU      %s\n", prop.name);
            } else {
                kProbes[i]();
            }
            fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            printf("PROBE %d: its process ended with %s %d\n", i, WIFEXITED(status) ? "exit" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    }
    return 0;
}
