// Groundwork for step 08: what a device-side tensor-map update costs, what the host alternative costs, and
// whether a missing fence shows. One warp retargets a map between two tensors A and B (all of A's words are
// 1, all of B's are 2), many times, and after each update loads a box through it: a box with the OTHER
// tensor's words came through a stale descriptor.
//   mode 0 smem path: copy the template to shared memory, replace
//          global_address, cp_fenceproxy (release.gpu) to a global slot,
//          fence.proxy.tensormap acquire, load
//   mode 1 the same without the acquire (step 08's bugs/1.diff)
//   mode 2 global path: replace in the global slot itself, release fence,
//          acquire, load
//   mode 3 global path without the release fence (bugs/2.diff), acquire kept
//   mode 4 mode 0 plus prefetch.tensormap after the acquire
//   mode 5 mode 0 without the load: the update alone
// It uses the steps' headers for every instruction: the edit, publish, acquire and prefetch of
// 08_descriptor_update/tensormap_edit.cuh, step 03's barrier and load. A missing fence (modes 1 and 3) is the
// header's wrapper left uncalled, so no private wrapper remains.
// Output: tensormap_update_cost_<GPU>.txt beside this file.
// Re-run with this source on an NVIDIA H200 (2026-11-24): the same findings as the first recording,
// made with private copies of the wrappers; re-run with `make experiments` and build/experiments/<name>.
// Build (the steps' flags, into build/experiments/tensormap_update_cost), from the repository root:
//   make experiments
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"

#include <time.h>

#define BOX_ROWS 8
#define BOX_COLS 32
#define ITERS 2000

__global__ void __launch_bounds__(32)
    update_loop(const __grid_constant__ CUtensorMap tmpl, CUtensorMap* slot, const float* a, const float* b,
                int mode, unsigned int* stale, unsigned long long* ns) {
    __shared__ alignas(128) CUtensorMap m;
    __shared__ alignas(128) float box[BOX_ROWS * BOX_COLS];
    __shared__ uint64_t bar;
    const uint32_t lane = threadIdx.x;
    if (lane == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    if (lane < 8) ((uint4*)&m)[lane] = ((const uint4*)&tmpl)[lane];
    if (lane < 8) ((uint4*)slot)[lane] = ((const uint4*)&tmpl)[lane];
    __syncwarp();
    if (mode >= 2 && mode <= 3) {
        tmap_release_gpu();
    }
    unsigned int wrong = 0;
    const uint64_t t0 = globaltimer_ns();
    for (int i = 0; i < ITERS; ++i) {
        const float* target = (i & 1) ? b : a;
        const float want = (i & 1) ? 2.0f : 1.0f;
        if (mode == 2 || mode == 3) {
            if (lane == 0) {
                tmap_replace_address_global(slot, target);
                if (mode == 2) tmap_release_gpu();
            }
        } else {
            if (lane == 0) tmap_replace_address(&m, target);
            __syncwarp();
            tmap_cp_fenceproxy(slot, &m);
        }
        __syncwarp();
        if (lane == 0) {
            if (mode != 1) tmap_acquire_gpu(slot);
            if (mode == 4) tmap_prefetch(slot);
            if (mode != 5) {
                mbar_arrive_expect_tx(&bar, BOX_ROWS * BOX_COLS * 4);
                tma_load_2d(box, slot, 0, 0, &bar);
                MBAR_WAIT(&bar, i & 1);
                wrong += box[0] != want || box[BOX_ROWS * BOX_COLS - 1] != want;
            }
        }
        __syncwarp();
    }
    const uint64_t t1 = globaltimer_ns();
    if (lane == 0) {
        *stale = wrong;
        *ns = t1 - t0;
    }
}

static double host_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// Its 128-byte parameter is copied at every launch, read or not (ptxas keeps it: KPARAM_INFO size 0x80).
// The never-taken printf it had once only added a local-memory frame, which -warn-lmem-usage reports.
__global__ void empty_kernel(const __grid_constant__ CUtensorMap) {}

int main(void) {
    require_hopper();
    const size_t n = BOX_ROWS * BOX_COLS * 64;
    float *a = NULL, *b = NULL;
    CUtensorMap* slot = NULL;
    unsigned int* stale = NULL;
    unsigned long long* ns = NULL;
    CUDA_CHECK(cudaMalloc(&a, n * 4));
    CUDA_CHECK(cudaMalloc(&b, n * 4));
    CUDA_CHECK(cudaMalloc(&slot, 128));
    CUDA_CHECK(cudaMalloc(&stale, 4));
    CUDA_CHECK(cudaMalloc(&ns, 8));
    float* host = (float*)xmalloc(n * 4, "fill");
    for (size_t i = 0; i < n; ++i) host[i] = 1.0f;
    CUDA_CHECK(cudaMemcpy(a, host, n * 4, cudaMemcpyHostToDevice));
    for (size_t i = 0; i < n; ++i) host[i] = 2.0f;
    CUDA_CHECK(cudaMemcpy(b, host, n * 4, cudaMemcpyHostToDevice));
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a, 64 * BOX_ROWS, BOX_COLS,
                                              BOX_COLS * 4, BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap tmpl = make_tensor_map(&spec, "A");
    const char* names[] = {"smem path (edit, cp_fenceproxy, acquire, load)",
                           "smem path WITHOUT the acquire (bug 1)",
                           "global path (edit in global, release, acquire, load)",
                           "global path WITHOUT the release (bug 2)",
                           "smem path + prefetch.tensormap",
                           "smem path, update only (no load)"};
    for (int rep = 0; rep < 3; ++rep)
        for (int mode = 0; mode < 6; ++mode) {
            update_loop<<<1, 32>>>(tmpl, slot, a, b, mode, stale, ns);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
            unsigned int st = 0;
            unsigned long long t = 0;
            CUDA_CHECK(cudaMemcpy(&st, stale, 4, cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(&t, ns, 8, cudaMemcpyDeviceToHost));
            char hung[320];
            const int h = take_wait_report(hung, sizeof hung);
            printf("run %d mode %d %-52s %7.1f ns per update; %u of %d loads stale%s%s\n", rep, mode,
                   names[mode], (double)t / ITERS, st, mode == 5 ? 0 : ITERS, h ? "; " : "", h ? hung : "");
        }
    // The host round trip one update replaces: encode, copy the map to the device, launch.
    {
        CUtensorMap m;
        TensorMapSpec s2 = spec;
        const int reps = 10000;
        const double t0 = host_seconds();
        for (int i = 0; i < reps; ++i) {
            s2.address = (i & 1) ? (const void*)b : (const void*)a;
            if (encode_tensor_map(&s2, &m) != CUDA_SUCCESS) die_internal("encode");
        }
        const double enc = (host_seconds() - t0) / reps;
        cudaEvent_t e0, e1;
        CUDA_CHECK(cudaEventCreate(&e0));
        CUDA_CHECK(cudaEventCreate(&e1));
        CUtensorMap* pinned = NULL;
        CUDA_CHECK(cudaMallocHost(&pinned, 128));
        *pinned = m;
        for (int w = 0; w < 10; ++w) CUDA_CHECK(cudaMemcpy(slot, pinned, 128, cudaMemcpyHostToDevice));
        double t1 = host_seconds();
        for (int i = 0; i < 1000; ++i) CUDA_CHECK(cudaMemcpy(slot, pinned, 128, cudaMemcpyHostToDevice));
        const double h2d_sync = (host_seconds() - t1) / 1000;
        for (int w = 0; w < 10; ++w) empty_kernel<<<1, 32>>>(m);
        CUDA_CHECK(cudaDeviceSynchronize());
        t1 = host_seconds();
        for (int i = 0; i < 1000; ++i) {
            empty_kernel<<<1, 32>>>(m);
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        const double launch_sync = (host_seconds() - t1) / 1000;
        CUDA_CHECK(cudaEventRecord(e0));
        for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 32>>>(m);
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        printf(
            "host: cuTensorMapEncodeTiled %.3f us; cudaMemcpy H2D of one 128-byte map %.2f us (synchronous, "
            "pinned); launch + synchronize %.2f us; back-to-back launches %.2f us each (GPU timeline)\n",
            enc * 1e6, h2d_sync * 1e6, launch_sync * 1e6, ms * 1e3 / 1000);
        CUDA_CHECK(cudaFreeHost(pinned));
    }
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(slot));
    CUDA_CHECK(cudaFree(stale));
    CUDA_CHECK(cudaFree(ns));
    free(host);
    return 0;
}
