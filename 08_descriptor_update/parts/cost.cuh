// A part of 08_descriptor_update/descriptor_update.cu, whose main() runs the parts in order.
#pragma once
#include <time.h>

#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"
#include "08_descriptor_update/parts/problem.cuh"

// ===========================================================================
// Part 7: what an update costs
// ===========================================================================
// One warp retargets one map ITERS times between two tensors (the smem path:
// copy the template, replace the address, cp_fenceproxy, acquire), timed
// with %globaltimer. With `load`, each update is followed by a load through
// the new map (and, with `prefetch`, a prefetch.tensormap before it), and
// the box's first word tells which tensor it came from.
#define COST_ITERS 1000

__global__ void __launch_bounds__(32)
    update_cost(const __grid_constant__ CUtensorMap tmpl, CUtensorMap* slot, const float* a, const float* b,
                int load, int prefetch, unsigned long long* out) {
    __shared__ alignas(128) CUtensorMap m;
    __shared__ alignas(128) float box[BOX_ROWS * BOX_COLS];
    __shared__ uint64_t bar;
    const uint32_t lane = threadIdx.x;
    if (lane == 0) {
        mbar_init(&bar, 1);
        mbar_fence_init();
    }
    if (lane < 8) ((uint4*)&m)[lane] = ((const uint4*)&tmpl)[lane];
    __syncwarp();
    uint32_t wrong = 0;
    const uint64_t t0 = globaltimer_ns();
    for (int i = 0; i < COST_ITERS; ++i) {
        if (lane == 0) tmap_replace_address(&m, (i & 1) ? b : a);
        __syncwarp();
        tmap_cp_fenceproxy(slot, &m);
        if (lane == 0) {
            tmap_acquire_gpu(slot);
            if (prefetch) tmap_prefetch(slot);
            if (load) {
                mbar_arrive_expect_tx(&bar, BOX_BYTES);
                tma_load_2d(box, slot, 0, 0, &bar);
                const bool landed = MBAR_WAIT(&bar, i & 1);  // no break: the warp must stay together
                wrong += !landed || __float_as_uint(box[0]) != __float_as_uint(((i & 1) ? b : a)[0]);
            }
        }
        __syncwarp();
    }
    if (lane == 0) {
        out[0] = globaltimer_ns() - t0;
        out[1] = wrong;
    }
}

// ---- Part 7 (host): the cost table -------------------------------------------
static double host_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__global__ void empty_kernel(const __grid_constant__ CUtensorMap m, int never) {
    if (never) tmap_prefetch(&m);
}

// Device: ns per update (alone, then followed by a load, with and without a
// prefetch). Host: what one update replaces: an encode, a copy of the map to
// the device, a launch. Machine-dependent: TIME lines; the check is on the
// loads' data (every one from the tensor the update named).
static void part_cost(const Copy* c) {
    const Group* g0 = &c->gs->groups[0];
    unsigned long long* out = NULL;
    CUtensorMap* slot = NULL;
    CUDA_CHECK(cudaMalloc(&out, 16));
    CUDA_CHECK(cudaMalloc(&slot, sizeof(CUtensorMap)));
    const float* a = c->src;
    const float* b = c->src + g0->offset + 64;  // another place, other words
    double ns[3];
    unsigned long long stale = 0;
    for (int v = 0; v < 3; ++v) {
        update_cost<<<1, 32, 0, c->s>>>(c->src_tmpl, slot, a, b, v > 0, v == 2, out);
        CHECK_LAUNCH();
        unsigned long long r[2];
        CUDA_CHECK(cudaMemcpyAsync(r, out, 16, cudaMemcpyDeviceToHost, c->s));  // on the kernel's stream
        CUDA_CHECK(cudaStreamSynchronize(c->s));
        ns[v] = (double)r[0] / COST_ITERS;
        stale += r[1];
    }
    check_value("cost_loads_saw_each_update", stale, 0);
    // The host round trip.
    TensorMapSpec sp = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, a, g0->rows, g0->cols,
                                      (uint64_t)g0->ld * 4, BOX_ROWS, BOX_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    CUtensorMap m;
    const int reps = 2000;
    double t0 = host_seconds();
    for (int i = 0; i < reps; ++i) {
        sp.address = (i & 1) ? (const void*)b : (const void*)a;
        if (encode_tensor_map(&sp, &m) != CUDA_SUCCESS) die_internal("the encoder refused a valid map");
    }
    const double encode_us = (host_seconds() - t0) / reps * 1e6;
    t0 = host_seconds();
    for (int i = 0; i < reps; ++i)
        CUDA_CHECK(cudaMemcpyAsync(slot, c->host_maps_pinned, sizeof m, cudaMemcpyHostToDevice, c->s));
    CUDA_CHECK(cudaStreamSynchronize(c->s));
    const double h2d_us = (host_seconds() - t0) / reps * 1e6;
    t0 = host_seconds();
    for (int i = 0; i < reps; ++i) empty_kernel<<<1, 32, 0, c->s>>>(m, 0);
    CUDA_CHECK(cudaStreamSynchronize(c->s));
    const double launch_us = (host_seconds() - t0) / reps * 1e6;
    const double host_us = encode_us + h2d_us + launch_us;
    record_time_line(
        "device update (smem edit + cp_fenceproxy + acquire): %.0f ns; with a load through it: %.0f "
        "ns; with prefetch.tensormap before the load: %.0f ns",
        ns[0], ns[1], ns[2]);
    record_time_line(
        "host round trip per update: encode %.2f us + 128-byte H2D %.2f us + launch %.2f us = %.2f us: "
        "%.0fx the device update",
        encode_us, h2d_us, launch_us, host_us, host_us * 1e3 / ns[0]);
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(slot));
}
