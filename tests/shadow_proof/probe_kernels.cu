// probe_kernels.cu: the probe's own program. Each kernel issues, once, the
// instructions whose patching the probe asks about (raw PTX, no wrapper, no
// hook): tensor TMA load, multicast load, store and reduce; non-tensor bulk
// copies global->shared, shared->global, shared->peer and a bulk reduce;
// cp.async with its groups and its mbarrier arrive; every mbarrier operation;
// fence.proxy.async; tensormap.replace, cp_fenceproxy and the tensormap
// fences; wgmma fence, MMA, commit and wait; cluster barriers, mapa, remote
// stores, loads, arrives, st.async and red.async; ldmatrix/stmatrix, shfl,
// named barriers, local memory and a call. tools/shadow_probe.py runs it under
// the probe library and reads which of them the Sanitizer API patched.
// Exit: 0 every kernel ran and its output is right, 1 a kernel's output is
// wrong or a wait gave up, 2 a CUDA error, 77 no Hopper GPU.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                     \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "CUDA error at %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(e_));                                            \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)

__device__ unsigned g_gave_up;  // waits that ran past their bound

static __device__ __forceinline__ uint32_t sa(const void* p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ uint64_t now_ns(void) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
static __device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(bar)), "r"(count) : "memory");
}
static __device__ __forceinline__ void mbar_expect(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(bar)), "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ uint32_t mbar_try(uint64_t* bar, uint32_t parity, int cluster) {
    uint32_t done;
    if (cluster)
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 "
            "%0, 1, 0, p; }"
            : "=r"(done)
            : "r"(sa(bar)), "r"(parity)
            : "memory");
    else
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
            : "=r"(done)
            : "r"(sa(bar)), "r"(parity)
            : "memory");
    return done;
}
// Bounded: 5 s of wall-clock time, then counted and given up.
static __device__ void mbar_wait(uint64_t* bar, uint32_t parity, int cluster = 0) {
    const uint64_t t0 = now_ns();
    while (!mbar_try(bar, parity, cluster))
        if (now_ns() - t0 > 5000000000ull) {
            atomicAdd(&g_gave_up, 1u);
            return;
        }
}
static __device__ __forceinline__ void mbar_inval(uint64_t* bar) {
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(sa(bar)) : "memory");
}
static __device__ __forceinline__ void fence_proxy_async(void) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
static __device__ __forceinline__ void bulk_commit_and_wait(void) {
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
static __device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
        "[%4];" ::"r"(sa(dst)),
        "l"(map), "r"(0), "r"(0), "r"(sa(bar))
        : "memory");
}
static __device__ __forceinline__ uint32_t mapa(const void* p, uint32_t rank) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(sa(p)), "r"(rank));
    return r;
}
static __device__ __forceinline__ void cluster_sync(void) {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// 1. Tensor TMA: a 16 x 16 float box loaded, +1 by the threads, stored and reduced (added) back.
__global__ void probe_tensor(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                             const __grid_constant__ CUtensorMap red) {
    __shared__ alignas(1024) float tile[256];
    __shared__ alignas(8) uint64_t bar;
    const unsigned t = threadIdx.x;
    if (t == 0) {
        mbar_init(&bar, 1);
        fence_proxy_async();  // the init, visible to the TMA that completes on it
    }
    __syncthreads();
    if (t == 0) {
        asm volatile("prefetch.tensormap [%0];" ::"l"(&in) : "memory");
        asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global [%0, {%1, %2}];" ::"l"(&in), "r"(0), "r"(0)
                     : "memory");
        mbar_expect(&bar, sizeof tile);
        tma_load(tile, &in, &bar);
    }
    mbar_wait(&bar, 0);
    for (unsigned i = t; i < 256; i += blockDim.x) tile[i] += 1.0f;
    fence_proxy_async();
    __syncthreads();
    if (t == 0) {
        asm volatile(
            "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(&out), "r"(0),
            "r"(0), "r"(sa(tile))
            : "memory");
        asm volatile(
            "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                &red),
            "r"(0), "r"(0), "r"(sa(tile))
            : "memory");
        bulk_commit_and_wait();
    }
    __syncthreads();
    if (t == 0) mbar_inval(&bar);
}

// 2. Non-tensor bulk copies: 512 bytes global -> shared, x2, shared -> global, and reduced (added) into u32s.
__global__ void probe_bulk(const float* src, float* dst, unsigned* acc) {
    __shared__ alignas(128) float buf[128];
    __shared__ alignas(8) uint64_t bar;
    const unsigned t = threadIdx.x;
    if (t == 0) {
        mbar_init(&bar, 1);
        fence_proxy_async();
    }
    __syncthreads();
    if (t == 0) {
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(512u) : "memory");
        mbar_expect(&bar, 512);
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                sa(buf)),
            "l"(src), "r"(512u), "r"(sa(&bar))
            : "memory");
    }
    mbar_wait(&bar, 0);
    if (t < 128) buf[t] *= 2.0f;
    fence_proxy_async();
    __syncthreads();
    if (t == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(sa(buf)),
                     "r"(512u)
                     : "memory");
        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], %2;" ::"l"(acc),
                     "r"(sa(buf)), "r"(512u)
                     : "memory");
        bulk_commit_and_wait();
    }
    __syncthreads();
    if (t == 0) mbar_inval(&bar);
}

// 3. cp.async (16 and 4 bytes), its groups, its mbarrier arrive; shfl, syncwarp,
// a named barrier, ldmatrix/stmatrix, test_wait. 128 threads.
__global__ void probe_cp_async(const float4* src, const unsigned* words, float* out) {
    __shared__ alignas(16) float4 s[128];
    __shared__ alignas(16) unsigned w[128];
    __shared__ alignas(16) uint16_t m[8 * 8];
    __shared__ alignas(8) uint64_t bar;
    const unsigned t = threadIdx.x, lane = t % 32;
    if (t == 0) mbar_init(&bar, 128);
    __syncthreads();
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(&s[t])), "l"(src + t) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(sa(&w[t])), "l"(words + t) : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(sa(&bar)) : "memory");
    mbar_wait(&bar, 0);
    asm volatile("cp.async.wait_all;" ::: "memory");
    uint32_t ready;
    asm volatile(
        "{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
        : "=r"(ready)
        : "r"(sa(&bar))
        : "memory");
    __syncthreads();
    asm volatile("bar.sync 1, 128;" ::: "memory");
    __syncwarp();
    float v = __shfl_sync(0xFFFFFFFFu, s[t].x + (float)w[t], (lane + 1) % 32);
    if (t < 64) m[t] = (uint16_t)t;
    __syncwarp();
    __syncthreads();
    uint32_t frag = 0;
    if (t < 32) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                     : "=r"(frag)
                     : "r"(sa(&m[(lane % 8) * 8])));
        asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(sa(&m[(lane % 8) * 8])),
                     "r"(frag)
                     : "memory");
    }
    __syncthreads();
    out[t] = v + (float)m[t % 64] + (float)ready;
    if (t == 0) mbar_inval(&bar);
}

// 4. A cluster of 2: a multicast TMA load into both, remote store/load, a remote
// arrive each way, a bulk copy shared -> peer shared, st.async and red.async.
__global__ void __cluster_dims__(2, 1, 1) probe_cluster(const __grid_constant__ CUtensorMap in, float* out) {
    __shared__ alignas(1024) float tile[256];
    __shared__ alignas(128) float landing[64];
    __shared__ alignas(128) float src[64];
    __shared__ alignas(16) unsigned words[4];
    __shared__ alignas(8)
        uint64_t bars[4];  // 0 the multicast, 1 the remote arrive, 2 the peer copy, 3 st/red.async
    const unsigned t = threadIdx.x;
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (t < 64) src[t] = (float)(t + 100 * rank);
    if (t < 4) words[t] = 0;
    if (t == 0) {
        for (int i = 0; i < 4; ++i) mbar_init(&bars[i], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    fence_proxy_async();  // src, read by the peer copy
    cluster_sync();
    if (t == 0) {
        mbar_expect(&bars[0], sizeof tile);
        if (rank == 1) {
            mbar_expect(&bars[2], sizeof landing);
            mbar_expect(&bars[3], 8);
        }
    }
    cluster_sync();  // every barrier armed before any copy toward it
    if (t == 0 && rank == 0) {
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(sa(tile)),
            "l"(&in), "r"(0), "r"(0), "r"(sa(&bars[0])), "h"((uint16_t)3)
            : "memory");
        unsigned seen;
        asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(mapa(&words[0], 1)), "r"(7u) : "memory");
        asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(seen) : "r"(mapa(&words[0], 1)) : "memory");
        words[3] = seen;
        asm volatile(
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
                "r"(mapa(landing, 1)),
            "r"(sa(src)), "r"((uint32_t)sizeof landing), "r"(mapa(&bars[2], 1))
            : "memory");
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];" ::"r"(
                         mapa(&words[1], 1)),
                     "r"(5u), "r"(mapa(&bars[3], 1))
                     : "memory");
        asm volatile(
            "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%0], %1, "
            "[%2];" ::"r"(mapa(&words[2], 1)),
            "r"(3u), "r"(mapa(&bars[3], 1))
            : "memory");
    }
    if (t == 0)
        asm volatile(
            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(mapa(&bars[1], rank ^ 1))
            : "memory");
    mbar_wait(&bars[0], 0);
    if (t == 0) mbar_wait(&bars[1], 0, 1);
    if (t == 0 && rank == 1) {
        mbar_wait(&bars[2], 0);
        mbar_wait(&bars[3], 0);
    }
    __syncthreads();
    float sum = 0.f;
    for (int i = 0; i < 256; ++i) sum += tile[i];
    if (t == 0) {
        out[rank * 8 + 0] = sum;
        out[rank * 8 + 1] = rank ? landing[5] : 0.f;
        out[rank * 8 + 2] = (float)words[0];
        out[rank * 8 + 3] = (float)words[1];
        out[rank * 8 + 4] = (float)words[2];
    }
    cluster_sync();  // no CTA leaves while its peer may still touch its shared memory
}

// 5. A tensor map edited on the device: in shared memory (replace, then
// cp_fenceproxy into global, acquired) and in global memory (replace.global,
// released, acquired); a TMA load through each.
__global__ void probe_tensormap(const __grid_constant__ CUtensorMap tmpl, CUtensorMap* slot,
                                CUtensorMap* slot2, const float* base, float* out) {
    __shared__ alignas(128) CUtensorMap smap;
    __shared__ alignas(1024) float tile[256];
    __shared__ alignas(8) uint64_t bar;
    const unsigned t = threadIdx.x;
    if (t < 32) ((uint32_t*)&smap)[t] = ((const uint32_t*)&tmpl)[t];
    __syncwarp();
    if (t == 0) {
        asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(sa(&smap)),
                     "l"(base)
                     : "memory");
        asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" ::"r"(sa(&smap)),
                     "r"(64u)
                     : "memory");
    }
    __syncwarp();
    if (t < 32)
        asm volatile(
            "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], "
            "[%1], 128;" ::"l"(slot),
            "r"(sa(&smap))
            : "memory");
    if (t == 0) {
        mbar_init(&bar, 1);
        fence_proxy_async();
    }
    __syncthreads();
    if (t == 0) {
        asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(slot) : "memory");
        mbar_expect(&bar, sizeof tile);
        tma_load(tile, slot, &bar);
    }
    mbar_wait(&bar, 0);
    const float first = tile[t];
    __syncthreads();
    if (t == 0) {
        asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(slot2),
                     "l"(base)
                     : "memory");
        asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
        asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(slot2) : "memory");
        mbar_expect(&bar, sizeof tile);
        tma_load(tile, slot2, &bar);
    }
    mbar_wait(&bar, 1);
    out[t] = first;
    out[128 + t] = tile[t];
    __syncthreads();
    if (t == 0) mbar_inval(&bar);
}

// 6. One warpgroup MMA, m64n8k16 bf16 -> f32, on zeroed operands (the
// patches' arguments are what is probed, not the product).
__global__ void probe_wgmma(float* out) {
    __shared__ alignas(1024)
        uint16_t a[4096];  // larger than one m64k16 tile: any reading of LBO/SBO stays inside
    __shared__ alignas(1024) uint16_t b[1024];
    const unsigned t = threadIdx.x;
    for (unsigned i = t; i < 4096; i += 128) a[i] = 0;
    for (unsigned i = t; i < 1024; i += 128) b[i] = 0;
    fence_proxy_async();  // the operands reach the MMA through the async proxy
    __syncthreads();
    // no swizzle; LBO 1024 B (the K step), SBO 128 B (8 rows) for A; 128 / 256 B for B
    const uint64_t da = ((sa(a) & 0x3FFFFu) >> 4) | (uint64_t)(1024 >> 4) << 16 | (uint64_t)(128 >> 4) << 32;
    const uint64_t db = ((sa(b) & 0x3FFFFu) >> 4) | (uint64_t)(128 >> 4) << 16 | (uint64_t)(256 >> 4) << 32;
    float d0 = 1.f, d1 = 1.f, d2 = 1.f, d3 = 1.f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile(
        "{ .reg .pred p; setp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0; }"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "l"(da), "l"(db), "r"(0u)
        : "memory");
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    out[4 * t + 0] = d0, out[4 * t + 1] = d1, out[4 * t + 2] = d2, out[4 * t + 3] = d3;
}

// 7. Plain code: global loads and stores, shared atomics, local memory, a call.
__device__ __noinline__ float probe_callee(float x, int i) {
    float local[16];
    for (int k = 0; k < 16; ++k) local[k] = x + k;
    return local[i & 15];
}
__global__ void probe_plain(const float* in, float* out, int* counter) {
    __shared__ int hits;
    const unsigned t = threadIdx.x;
    if (t == 0) hits = 0;
    __syncthreads();
    atomicAdd(&hits, 1);
    __syncthreads();
    out[t] = probe_callee(in[t], (int)t) + (float)hits;
    if (t == 0) atomicAdd(counter, hits);
}

// ---- the host ---------------------------------------------------------------------
static PFN_cuTensorMapEncodeTiled_v12000 encoder(void) {
    void* fn = NULL;
    cudaDriverEntryPointQueryResult found;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !fn) {
        fprintf(stderr, "the driver has no cuTensorMapEncodeTiled\n");
        exit(77);
    }
    return (PFN_cuTensorMapEncodeTiled_v12000)fn;
}

// A 64 x 64 float matrix, 16 x 16 boxes, no swizzle.
static CUtensorMap map_of(float* base) {
    CUtensorMap m;
    const cuuint64_t dim[2] = {64, 64}, stride[1] = {64 * sizeof(float)};
    const cuuint32_t box[2] = {16, 16}, estride[2] = {1, 1};
    CUresult r = encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dim, stride, box, estride,
                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                           CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuTensorMapEncodeTiled failed (%d)\n", (int)r);
        exit(2);
    }
    return m;
}

static int g_failed = 0;
static void verdict(const char* kernel, int wrong) {
    unsigned gave_up = 0;
    CHECK(cudaMemcpyFromSymbol(&gave_up, g_gave_up, sizeof gave_up));
    printf("probe  %-16s %s%s\n", kernel, wrong || gave_up ? "FAIL" : "PASS",
           gave_up ? "  (a wait gave up)" : "");
    g_failed |= wrong || gave_up;
    gave_up = 0;
    CHECK(cudaMemcpyToSymbol(g_gave_up, &gave_up, sizeof gave_up));
}

int main(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        fprintf(stderr, "no CUDA device found\n");
        return 77;
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9 || prop.minor != 0) {
        fprintf(stderr, "needs compute capability 9.0, found %d.%d\n", prop.major, prop.minor);
        return 77;
    }
    const size_t n = 64 * 64;
    float *in, *out, *red, *base, *buf;
    unsigned* acc;
    int* counter;
    CUtensorMap *slot, *slot2;
    CHECK(cudaMalloc(&in, n * 4));
    CHECK(cudaMalloc(&out, n * 4));
    CHECK(cudaMalloc(&red, n * 4));
    CHECK(cudaMalloc(&base, n * 4));
    CHECK(cudaMalloc(&buf, n * 4));
    CHECK(cudaMalloc(&acc, 512));
    CHECK(cudaMalloc(&counter, 4));
    CHECK(cudaMalloc(&slot, sizeof(CUtensorMap)));
    CHECK(cudaMalloc(&slot2, sizeof(CUtensorMap)));
    float* h = (float*)malloc(n * 4);
    float* g = (float*)malloc(n * 4);
    for (size_t i = 0; i < n; ++i) h[i] = (float)i;
    CHECK(cudaMemcpy(in, h, n * 4, cudaMemcpyHostToDevice));
    for (size_t i = 0; i < n; ++i) h[i] = (float)(i % 1000) + 0.5f;
    CHECK(cudaMemcpy(base, h, n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(red, 0, n * 4));
    CHECK(cudaMemset(acc, 0, 512));
    CHECK(cudaMemset(counter, 0, 4));
    const CUtensorMap m_in = map_of(in), m_out = map_of(out), m_red = map_of(red);
    CHECK(cudaMemcpy(slot2, &m_in, sizeof m_in, cudaMemcpyHostToDevice));
    int wrong;

    probe_tensor<<<1, 128>>>(m_in, m_out, m_red);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(g, red, n * 4, cudaMemcpyDeviceToHost));
    wrong = 0;
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) wrong += g[r * 64 + c] != (float)(r * 64 + c) + 1.0f;
    verdict("tensor", wrong);

    probe_bulk<<<1, 128>>>(in, buf, acc);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(g, buf, 512, cudaMemcpyDeviceToHost));
    wrong = 0;
    for (int i = 0; i < 128; ++i) wrong += g[i] != 2.0f * (float)i;
    verdict("bulk", wrong);

    probe_cp_async<<<1, 128>>>((const float4*)in, (const unsigned*)in, buf);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    verdict("cp_async", 0);

    probe_cluster<<<2, 128>>>(m_in, buf);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(g, buf, 16 * 4, cudaMemcpyDeviceToHost));
    float want_sum = 0.f;
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) want_sum += (float)(r * 64 + c);
    wrong = g[0] != want_sum || g[8] != want_sum || g[9] != 5.0f || g[10] != 7.0f || g[11] != 5.0f ||
            g[12] != 3.0f;
    verdict("cluster", wrong);

    probe_tensormap<<<1, 128>>>(m_in, slot, slot2, base, buf);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(g, buf, 256 * 4, cudaMemcpyDeviceToHost));
    wrong = 0;
    for (int i = 0; i < 256; ++i) {
        const int r = (i % 128) / 16, c = (i % 128) % 16;  // out[t] = tile[t], t < 128: rows 0..7
        wrong += g[i] != (float)((r * 64 + c) % 1000) + 0.5f;
    }
    verdict("tensormap", wrong);

    probe_wgmma<<<1, 128>>>(buf);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(g, buf, 512 * 4, cudaMemcpyDeviceToHost));
    wrong = 0;
    for (int i = 0; i < 512; ++i) wrong += g[i] != 0.0f;  // scale-d 0: D = A * B = 0
    verdict("wgmma", wrong);

    probe_plain<<<1, 128>>>(in, buf, counter);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(g, buf, 128 * 4, cudaMemcpyDeviceToHost));
    wrong = 0;
    for (int i = 0; i < 128; ++i) wrong += g[i] != (float)i + (float)(i & 15) + 128.0f;
    verdict("plain", wrong);

    cudaFree(in), cudaFree(out), cudaFree(red), cudaFree(base), cudaFree(buf), cudaFree(acc),
        cudaFree(counter);
    cudaFree(slot), cudaFree(slot2);
    free(h), free(g);
    printf("RESULT: %s\n", g_failed ? "FAIL" : "PASS");
    return g_failed;
}
