// 09_gemm/parts/maps.cuh: where the tensor maps come from. A MAP SOURCE
// gives the producer, for each unit, the maps it loads A and B through, and
// each consumer warpgroup the C its epilogue writes. It provides:
//   Switches              whether the maps can change from one unit to the
//                         next (if not, load_switch is never called)
//   WarpWide              whether load_switch needs the producer's whole
//                         warp (a .sync.aligned instruction in it): then the
//                         warp walks the units together and lane 0 loads
//   load_switch(w, pos, full)  the producer, as unit w begins (pos: its first
//                         ring position): the maps for it; false if a wait
//                         for loads still in flight gave up
//   a(), b()              the maps the producer loads through now
//   a_row(w), b_row(w)    the tile's first row in A's map and in B's
//   output(w, wg, tid)    every thread of a consumer warpgroup, before the
//                         epilogue of unit w: C as the epilogue writes it
//                         (epilogue.cuh: c, m, n, ldc)
//   c()                   then, the map of that C, for the TMA epilogues
// 09's is KernelMaps (below): the kernel's three maps, fixed for the launch.
// Step 10's switch per expert, four ways (10_grouped_gemm/parts/maps.cuh).
#pragma once
#include "03_tma_load/tensor_map.h"
#include "09_gemm/parts/schedule.cuh"

struct KernelMaps {
    const CUtensorMap *a_map, *b_map, *c_map;  // the kernel's parameters
    const GemmArgs* g;
    static constexpr bool Switches = false, WarpWide = false;

    __device__ __forceinline__ bool load_switch(const Work&, uint32_t, uint64_t*) { return true; }
    __device__ __forceinline__ const CUtensorMap* a() const { return a_map; }
    __device__ __forceinline__ const CUtensorMap* b() const { return b_map; }
    // The tile's rows of A are rows of the map; its columns of C, rows of B's.
    __device__ __forceinline__ uint32_t a_row(const Work& w) const { return w.row0; }
    __device__ __forceinline__ uint32_t b_row(const Work& w) const { return w.col0; }
    // The whole of C, the kernel's argument (its c, m, n and ldc).
    __device__ __forceinline__ const GemmArgs& output(const Work&, uint32_t, uint32_t) const { return *g; }
    __device__ __forceinline__ const CUtensorMap* c() const { return c_map; }
};
