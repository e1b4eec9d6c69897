// 09_gemm/parts/kernel.cuh: parts 2 to 6, gemm_ws, the warp-specialized
// kernel built from the ring's two sides (loader.cuh, consume.cuh), and its
// launch: one CTA (one cluster) per unit, or persistent; split-K.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include "09_gemm/parts/consume.cuh"
#include "09_gemm/parts/loader.cuh"
#include "09_gemm/parts/maps.cuh"
#include "09_gemm/parts/problem.cuh"
#include "09_gemm/parts/stream_k.cuh"

// ---- Parts 2-6: one warp-specialized kernel, its mechanisms as knobs ----------
// The ring (loader.cuh) between two roles:
//   producer   warpgroup 0 (ProducerWarpgroup): one elected lane of its first
//              warp issues every TMA load (loader.cuh); the other 127 threads
//              only give their registers away (setmaxnreg.dec) and wait at
//              the end;
//   consumers  two warpgroups, each 64 rows x 256 columns of accumulators,
//              128 fp32 registers per thread (consume.cuh).
// A consumer waits on full[s], issues the stage's 4 MMAs, commits them, and
// waits until at most ONE batch is pending (wgmma_wait_group<1>): the batch
// just issued keeps the tensor cores busy while the one before is known
// done reading ITS stage, which the consumer then hands back (empty). It
// cannot hand back the stage it just issued on: its MMAs still read it.
// Here the units are C's tiles in a banded raster (RasterSchedule) and the
// maps are the kernel's own (KernelMaps); step 10 runs the same two sides
// over many experts' tiles, its maps switched per expert.
// The kernel's body, for any schedule of 09's: the ring, the two roles, the
// cluster's last barrier.
template <class Cfg, class Schedule>
static __device__ __forceinline__ void gemm_ring(const CUtensorMap* a_map, const CUtensorMap* b_map,
                                                 const CUtensorMap* c_map, const GemmArgs& g,
                                                 const Schedule& sched, uint32_t rank) {
    __shared__ __align__(8) uint64_t full[Cfg::Stages], empty[Cfg::Stages];
    const StageRing ring = {tma_smem_base<1024>(), full, empty};
    float* epi_boxes =
        (float*)(ring.stages + Cfg::Stages * Cfg::StageBytes);  // [2 consumers][2][64][32] fp32
    KernelMaps maps = {a_map, b_map, c_map, &g};
    ring_init<Cfg>(ring);
    Loader<Cfg, Schedule, KernelMaps> loader = {maps, ring, &sched, rank};
    loader.start(sched.first);
    if (Cfg::ProducerWarpgroup && threadIdx.x < 128) {
        if constexpr (Cfg::Setmaxnreg) setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x < 32) {
            if (elect_one_sync())
                while (loader.issue()) {
                }
            __syncwarp();
        }
    } else {
        if constexpr (Cfg::Setmaxnreg) setmaxnreg_inc<CONSUMER_REGS>();
        consume<Cfg>(sched, maps, loader, ring, epi_boxes);
    }
    // No CTA leaves while a peer may still arrive on its barriers: every
    // multicast into this CTA has landed (its consumers waited for each full
    // stage), but the peers' consumers may still be releasing stages here.
    if (Cfg::ClusterSize > 1) cluster_sync();
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::Threads, 1)
    gemm_ws(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
            const __grid_constant__ CUtensorMap c_map, const __grid_constant__ GemmArgs g) {
    const uint32_t rank = Cfg::ClusterSize > 1 ? cluster_ctarank() : 0;
    const RasterSchedule<Cfg> sched = {&g, rank, blockIdx.x / Cfg::ClusterSize, gridDim.x / Cfg::ClusterSize,
                                       g.ctiles_m * g.ctiles_n * g.splits};  // this cluster's units
    gemm_ring<Cfg>(&a_map, &b_map, &c_map, g, sched, rank);
}

// The same kernel over a stream-K schedule (stream_k.cuh): persistent, its
// last round's tiles cut along K.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::Threads, 1)
    gemm_stream_k(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                  const __grid_constant__ CUtensorMap c_map, const __grid_constant__ GemmArgs g) {
    const uint32_t rank = Cfg::ClusterSize > 1 ? cluster_ctarank() : 0;
    const StreamKSchedule<Cfg> sched =
        StreamKSchedule<Cfg>::of(g, rank, blockIdx.x / Cfg::ClusterSize, gridDim.x / Cfg::ClusterSize);
    gemm_ring<Cfg>(&a_map, &b_map, &c_map, g, sched, rank);
}

template <class Cfg>
static CUtensorMap a_map_for(const Gemm* g) {
    return g->a_box[Cfg::SliceRowsA == 128 ? 0 : Cfg::SliceRowsA == 64 ? 1 : 2];
}
template <class Cfg>
static CUtensorMap b_map_for(const Gemm* g) {
    return g->b_box[Cfg::SliceRowsB == 256 ? 0 : 1];
}

// The launch of `clusters` clusters of this kernel: the cluster dimension is
// a launch attribute (ClusterSize CTAs along x), none for a cluster of 1. attr must outlive cfg.
template <class Cfg>
static cudaLaunchConfig_t cluster_launch(uint32_t clusters, cudaStream_t s, cudaLaunchAttribute* attr) {
    cudaLaunchConfig_t cfg = {};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = Cfg::ClusterSize, attr->val.clusterDim.y = attr->val.clusterDim.z = 1;
    cfg.gridDim = dim3(clusters * Cfg::ClusterSize), cfg.blockDim = dim3(Cfg::Threads);
    cfg.dynamicSmemBytes = Cfg::SmemBytes, cfg.stream = s;
    cfg.attrs = attr, cfg.numAttrs = Cfg::ClusterSize > 1;
    return cfg;
}

// How many clusters of this kernel run at once (one CTA per SM: the stages
// leave room for one), asked once per kernel.
template <class Cfg>
static int resident_clusters(void) {
    static int clusters = 0;
    if (!clusters) {
        CUDA_CHECK(cudaFuncSetAttribute((const void*)gemm_ws<Cfg>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)Cfg::SmemBytes));
        if (Cfg::ClusterSize == 1) {
            clusters = persistent_grid((const void*)gemm_ws<Cfg>, Cfg::Threads, Cfg::SmemBytes);
        } else {
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t cfg = cluster_launch<Cfg>(1, 0, &attr);
            CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, (const void*)gemm_ws<Cfg>, &cfg));
        }
        if (clusters < 1) die_internal("gemm_ws: no cluster of %d CTAs fits on this GPU", Cfg::ClusterSize);
    }
    return clusters;
}

// persistent: as many CTAs as run at once, each looping over units; else one
// CTA (one cluster) per unit.
template <class Cfg>
static GemmArgs gemm_args(const Gemm* g, uint32_t band, uint32_t splits) {
    const uint32_t tiles_m = (g->m + Cfg::BM - 1) / Cfg::BM, tiles_n = (g->n + BN - 1) / BN;
    GemmArgs a;
    memset(&a, 0, sizeof a);
    a.c = g->c, a.m = g->m, a.n = g->n, a.ldc = g->ldc;
    a.kblocks = (g->k + BK - 1) / BK, a.splits = splits;
    a.ctiles_m = (tiles_m + Cfg::ClusterM - 1) / Cfg::ClusterM,
    a.ctiles_n = (tiles_n + Cfg::ClusterN - 1) / Cfg::ClusterN;
    a.band = band;
    return a;
}

template <class Cfg>
static void launch_gemm(const Gemm* g, bool persistent, uint32_t band, uint32_t splits) {
    const GemmArgs a = gemm_args<Cfg>(g, band, splits);
    const uint32_t units = a.ctiles_m * a.ctiles_n * splits, resident = (uint32_t)resident_clusters<Cfg>();
    const uint32_t clusters = persistent && resident < units ? resident : units;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_launch<Cfg>(clusters, g->s, &attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, gemm_ws<Cfg>, a_map_for<Cfg>(g), b_map_for<Cfg>(g), g->c_box, a));
}

// Split-K adds every piece into C: C starts at zero (the interior only: the
// frame stays poisoned), and the zeroing is part of the timed work.
template <class Cfg>
static void launch_split_k(const Gemm* g) {
    CUDA_CHECK(cudaMemset2DAsync(g->c, (size_t)g->ldc * 4, 0, (size_t)g->n * 4, g->m, g->s));
    launch_gemm<Cfg>(g, true, g->band, g->splits);
}

// Stream-K: persistent, the last round's tiles cut along K (stream_k.cuh).
// The flags of the cut tiles need no reset: each launch has its own epoch.
template <class Cfg>
static void launch_stream_k(const Gemm* g, uint32_t band) {
    static bool sized = false;  // gemm_stream_k asks for the shared memory gemm_ws does
    if (!sized)
        CUDA_CHECK(cudaFuncSetAttribute((const void*)gemm_stream_k<Cfg>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)Cfg::SmemBytes));
    sized = true;
    GemmArgs a = gemm_args<Cfg>(g, band, 1);
    const uint32_t units = a.ctiles_m * a.ctiles_n, resident = (uint32_t)resident_clusters<Cfg>();
    const uint32_t clusters = resident < units ? resident : units;
    plan_tail(&a, units, clusters, g->flags);
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_launch<Cfg>(clusters, g->s, &attr);
    CUDA_CHECK(
        cudaLaunchKernelEx(&cfg, gemm_stream_k<Cfg>, a_map_for<Cfg>(g), b_map_for<Cfg>(g), g->c_box, a));
}
