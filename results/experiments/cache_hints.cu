// Cache eviction policies and L2 prefetch sizes (step 03's "Going further"), measured with 16-byte loads.
//   A. Does a hot buffer survive a stream? 24 MiB (H) read, then 1 GiB (S) streamed, then H read again,
//      timed: from L2 if H survived the stream, from DRAM if not. H and S each read with a plain load,
//      with .L2::cache_hint and a policy from createpolicy (evict_first or evict_last, fraction 1.0),
//      or S with the .cs (streaming) cache operator. evict_last again after raising the L2 set-aside for
//      persisting lines (cudaLimitPersistingL2CacheSize) to its maximum. The control: H read twice with
//      no stream between (every byte from L2).
//   B. The prefetch-size qualifier (.L2::64B / 128B / 256B: "may fetch this much into L2 around the
//      access"): S streamed whole, and S read sparsely (16 B of every 256 B: each thread one word per
//      line), in each mode. The sparse read's GB/s counts the bytes the threads asked for.
// Each time is the median of 5 runs (CUDA events). Output: cache_hints_<GPU>.txt beside this file.
// Build: `make experiments`; run: build/experiments/cache_hints.
#include "common/tutorial.cuh"

enum Kind { PLAIN, HINTED, STREAMING, PREFETCH_64, PREFETCH_128, PREFETCH_256 };
enum Policy { EVICT_NORMAL, EVICT_FIRST, EVICT_LAST };

static __device__ __forceinline__ uint64_t make_policy(int policy) {
    uint64_t p;
    if (policy == EVICT_FIRST)
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    else if (policy == EVICT_LAST)
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    else
        asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
    return p;
}

#define V4 "{%0, %1, %2, %3}, [%4]"
#define OUT4 "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
template <int KIND>
static __device__ __forceinline__ uint4 load(const uint4* a, uint64_t policy) {
    uint4 v;
    if (KIND == PLAIN) asm("ld.global.v4.u32 " V4 ";" : OUT4 : "l"(a));
    if (KIND == HINTED) asm("ld.global.L2::cache_hint.v4.u32 " V4 ", %5;" : OUT4 : "l"(a), "l"(policy));
    if (KIND == STREAMING) asm("ld.global.cs.v4.u32 " V4 ";" : OUT4 : "l"(a));
    if (KIND == PREFETCH_64) asm("ld.global.L2::64B.v4.u32 " V4 ";" : OUT4 : "l"(a));
    if (KIND == PREFETCH_128) asm("ld.global.L2::128B.v4.u32 " V4 ";" : OUT4 : "l"(a));
    if (KIND == PREFETCH_256) asm("ld.global.L2::256B.v4.u32 " V4 ";" : OUT4 : "l"(a));
    return v;
}

// Reads n uint4 at a stride of `step` uint4 (1: dense), XORs them into *sink (so no load is dropped).
// Four loads per thread are in flight at once (the asm is not volatile: the compiler issues them together).
template <int KIND>
__global__ void read(const uint4* p, size_t n, size_t step, int policy, uint32_t* sink) {
    const uint64_t pol = make_policy(policy);
    const size_t threads = (size_t)gridDim.x * blockDim.x;
    uint32_t x = 0;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * threads < n; i += 4 * threads) {
        uint4 v[4];
        for (int u = 0; u < 4; ++u) v[u] = load<KIND>(p + (i + u * threads) * step, pol);
        for (int u = 0; u < 4; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += threads) {
        const uint4 v = load<KIND>(p + i * step, pol);
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (x == 0x12345678u) *sink = x;  // practically never: the loads stay live, nothing is written
}

static int g_grid;
static uint32_t* g_sink;
static cudaEvent_t g_e0, g_e1;

static void launch(int kind, const uint4* p, size_t n, size_t step, int policy) {
    switch (kind) {
    case PLAIN:
        read<PLAIN><<<g_grid, 256>>>(p, n, step, policy, g_sink);
        break;
    case HINTED:
        read<HINTED><<<g_grid, 256>>>(p, n, step, policy, g_sink);
        break;
    case STREAMING:
        read<STREAMING><<<g_grid, 256>>>(p, n, step, policy, g_sink);
        break;
    case PREFETCH_64:
        read<PREFETCH_64><<<g_grid, 256>>>(p, n, step, policy, g_sink);
        break;
    case PREFETCH_128:
        read<PREFETCH_128><<<g_grid, 256>>>(p, n, step, policy, g_sink);
        break;
    default:
        read<PREFETCH_256><<<g_grid, 256>>>(p, n, step, policy, g_sink);
        break;
    }
    CHECK_LAUNCH();
}

static float timed(int kind, const uint4* p, size_t n, size_t step, int policy) {
    CUDA_CHECK(cudaEventRecord(g_e0));
    launch(kind, p, n, step, policy);
    CUDA_CHECK(cudaEventRecord(g_e1));
    CUDA_CHECK(cudaEventSynchronize(g_e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, g_e0, g_e1));
    return ms;
}

typedef struct {
    const char* name;
    int hot_kind, hot_policy, stream_kind, stream_policy, stream;  // stream 0: the control, no stream
} Case;

int main(void) {
    require_hopper();
    const size_t hot_bytes = (size_t)24 << 20, stream_bytes = (size_t)1 << 30;
    require_device_memory("the 24 MiB and 1 GiB buffers", hot_bytes + stream_bytes);
    int sms = 0, persist_max = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&persist_max, cudaDevAttrMaxPersistingL2CacheSize, 0));
    g_grid = sms * 8;
    uint4 *hot = NULL, *stream = NULL;
    CUDA_CHECK(cudaMalloc(&hot, hot_bytes));
    CUDA_CHECK(cudaMalloc(&stream, stream_bytes));
    CUDA_CHECK(cudaMalloc(&g_sink, 4));
    CUDA_CHECK(cudaMemset(hot, 1, hot_bytes));
    CUDA_CHECK(cudaMemset(stream, 2, stream_bytes));
    CUDA_CHECK(cudaEventCreate(&g_e0));
    CUDA_CHECK(cudaEventCreate(&g_e1));
    print_gpu();
    const size_t hn = hot_bytes / 16, sn = stream_bytes / 16;

    // A. evict_last cases last: lines marked evict_last keep their mark, so they would bias what follows.
    const Case cases[] = {
        {"control: H read twice, no stream between", PLAIN, EVICT_NORMAL, PLAIN, EVICT_NORMAL, 0},
        {"H plain,            S plain", PLAIN, EVICT_NORMAL, PLAIN, EVICT_NORMAL, 1},
        {"H plain,            S evict_first", PLAIN, EVICT_NORMAL, HINTED, EVICT_FIRST, 1},
        {"H plain,            S .cs", PLAIN, EVICT_NORMAL, STREAMING, EVICT_NORMAL, 1},
        {"H evict_last,       S plain", HINTED, EVICT_LAST, PLAIN, EVICT_NORMAL, 1},
        {"H evict_last,       S evict_first", HINTED, EVICT_LAST, HINTED, EVICT_FIRST, 1},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int set_aside = 0; set_aside < 2; ++set_aside) {
        if (set_aside) {
            CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)persist_max));
            size_t got = 0;
            CUDA_CHECK(cudaDeviceGetLimit(&got, cudaLimitPersistingL2CacheSize));
            printf("-- with cudaLimitPersistingL2CacheSize = %.1f MiB (the maximum)\n", got / 1048576.0);
        } else {
            printf(
                "-- with the default L2 set-aside for persisting lines (cudaLimitPersistingL2CacheSize 0)\n");
        }
        for (int c = set_aside ? 4 : 0; c < ncases; ++c) {
            const Case* k = &cases[c];
            float hot_ms[5], stream_ms[5];
            for (int r = 0; r < 5; ++r) {
                launch(k->hot_kind, hot, hn, 1, k->hot_policy);
                stream_ms[r] = k->stream ? timed(k->stream_kind, stream, sn, 1, k->stream_policy) : 0.f;
                hot_ms[r] = timed(k->hot_kind, hot, hn, 1, k->hot_policy);
            }
            const float h = median_of(hot_ms, 5), s = median_of(stream_ms, 5);
            printf("HOT   %-42s H again %.4f ms (%6.0f GB/s)", k->name, h, hot_bytes / (h * 1e-3) / 1e9);
            if (k->stream) printf("; S %.3f ms (%5.0f GB/s)", s, stream_bytes / (s * 1e-3) / 1e9);
            printf("\n");
        }
    }
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    CUDA_CHECK(cudaCtxResetPersistingL2Cache());  // every persisting line back to normal

    // B. Prefetch sizes: dense, and 16 B of every 256 B (a stride of 16 uint4).
    const char* names[] = {"plain", "", "", ".L2::64B", ".L2::128B", ".L2::256B"};
    const int kinds[] = {PLAIN, PREFETCH_64, PREFETCH_128, PREFETCH_256};
    for (int i = 0; i < 4; ++i) {
        float dense[5], sparse[5];
        for (int r = 0; r < 5; ++r) {
            dense[r] = timed(kinds[i], stream, sn, 1, EVICT_NORMAL);
            sparse[r] = timed(kinds[i], stream, sn / 16, 16, EVICT_NORMAL);
        }
        const float d = median_of(dense, 5), s = median_of(sparse, 5);
        printf(
            "PREFETCH %-10s dense 1 GiB %.3f ms (%5.0f GB/s); 16 B of every 256 B %.3f ms (%5.0f GB/s asked "
            "for)\n",
            names[kinds[i]], d, stream_bytes / (d * 1e-3) / 1e9, s, stream_bytes / 16 / (s * 1e-3) / 1e9);
    }
    CUDA_CHECK(cudaEventDestroy(g_e0));
    CUDA_CHECK(cudaEventDestroy(g_e1));
    CUDA_CHECK(cudaFree(hot));
    CUDA_CHECK(cudaFree(stream));
    CUDA_CHECK(cudaFree(g_sink));
    return 0;
}
