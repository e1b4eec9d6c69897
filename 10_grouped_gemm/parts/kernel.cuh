// 10_grouped_gemm/parts/kernel.cuh: grouped_gemm, one persistent kernel for
// every expert's tiles: 09's loader and consumers (09_gemm/parts/) over step
// 10's schedule (which tile of which expert a unit is) and its maps (where
// each expert's operands are), and its launch.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/pipeline.cuh"
#include "09_gemm/parts/consume.cuh"
#include "09_gemm/parts/loader.cuh"
#include "10_grouped_gemm/parts/maps.cuh"
#include "10_grouped_gemm/parts/problem.cuh"
#include "10_grouped_gemm/parts/schedule.cuh"

// The stages, the epilogue's boxes, and the static shared memory: the batch's
// first_tile and EDIT's maps.
static_assert(Grouped<EDIT>::SmemBytes + 2048 <= MAX_SMEM_PER_BLOCK,
              "the stages, the boxes and the static shared memory fit in 227 KiB");

template <int SOURCE>
__global__ void __launch_bounds__(Grouped<SOURCE>::Threads, 1)
    grouped_gemm(const __grid_constant__ CUtensorMap a_tmpl, const __grid_constant__ CUtensorMap b_tmpl,
                 const __grid_constant__ CUtensorMap c_tmpl, const __grid_constant__ GroupArgs p) {
    using Cfg = Grouped<SOURCE>;
    __shared__ __align__(8) uint64_t full[Cfg::Stages], empty[Cfg::Stages];
    __shared__ uint32_t first_tile[MAX_EXPERTS + 1];  // searched for every tile: here, not in global memory
    __shared__ EditMaps edit;
    const StageRing ring = {tma_smem_base<1024>(), full, empty};
    float* epi_boxes =
        (float*)(ring.stages + Cfg::Stages * Cfg::StageBytes);  // [2 consumers][2][64][32] fp32
    for (uint32_t i = threadIdx.x; i <= p.experts; i += Cfg::Threads) first_tile[i] = p.batch->first_tile[i];
    if (SOURCE == EDIT && threadIdx.x < 32) edit_maps_from_templates(&edit, a_tmpl, b_tmpl, c_tmpl);
    ring_init<Cfg>(ring);
    const ExpertSchedule<Cfg> sched = ExpertSchedule<Cfg>::of(p, first_tile);
    ExpertMaps<SOURCE> maps = {&p, &a_tmpl, &b_tmpl, &edit, p.batch->first_row};
    Loader<Cfg, ExpertSchedule<Cfg>, ExpertMaps<SOURCE>> loader = {maps, ring, &sched, 0};
    if (threadIdx.x < 128) {  // the producer warpgroup: its first warp loads, lane 0 issuing
        if constexpr (Cfg::Setmaxnreg) setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x < 32) {
            loader.start(sched.first);
            while (loader.issue()) {
            }
        }
        return;
    }
    if constexpr (Cfg::Setmaxnreg) setmaxnreg_inc<CONSUMER_REGS>();
    consume<Cfg>(sched, maps, loader, ring, epi_boxes);
}

// The grouped kernel on the batch the device holds: `grid` CTAs (one per SM
// at most, fewer if there are fewer tiles). ONE_MAP reads the templates as
// its maps: A over every row of the buffer set, B over every expert's rows.
template <int SOURCE>
static void launch_grouped(const Problem* q, const GroupArgs& p, uint32_t grid) {
    const int set = set_of(q->batch);
    grouped_gemm<SOURCE><<<grid, Grouped<SOURCE>::Threads, Grouped<SOURCE>::SmemBytes, q->s>>>(
        q->a_tmpl[set], SOURCE == ONE_MAP ? q->b_all : q->b_tmpl, q->c_tmpl[set], p);
}
static uint32_t grid_for(const Problem* q, uint32_t tiles) {
    return tiles < q->grid ? (tiles ? tiles : 1) : q->grid;
}
template <int SOURCE>
static void run_grouped(const Problem* q) {
    const GroupArgs p = group_args(q);
    if (SOURCE == DEVICE_MAPS) {  // the maps of this batch, built on the GPU first
        const int set = set_of(q->batch);
        build_maps<<<(3 * p.experts + 127) / 128, 128, 0, q->s>>>(q->a_tmpl[set], q->b_tmpl, q->c_tmpl[set],
                                                                  p, q->maps);
    }
    launch_grouped<SOURCE>(q, p, grid_for(q, q->host[q->batch].first_tile[p.experts]));
}

// The HOST_MAPS part's work on the GPU: the maps the host encoded (pinned)
// copied to the array, then the kernel. The encoding itself is host time:
// a TIME line measures it.
static void run_host_maps(const Problem* q) {
    CUDA_CHECK(cudaMemcpyAsync(q->maps, q->host_maps, 3 * sizeof(CUtensorMap) * q->experts_of[q->batch],
                               cudaMemcpyHostToDevice, q->s));
    run_grouped<HOST_MAPS>(q);
}

// Each kernel's dynamic shared memory past the default 48 KiB, allowed once.
template <int SOURCE>
static void allow_shared_memory(void) {
    CUDA_CHECK(cudaFuncSetAttribute((const void*)grouped_gemm<SOURCE>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)Grouped<SOURCE>::SmemBytes));
}
