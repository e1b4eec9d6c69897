// 10_grouped_gemm/parts/schedule.cuh: which tile of which expert a unit is:
// step 10's Schedule for 09's loader and consumers (09_gemm/parts/schedule.cuh
// says what a schedule provides).
#pragma once
#include "03_tma_load/tensor_map.h"
#include "09_gemm/parts/schedule.cuh"
#include "10_grouped_gemm/parts/batch.cuh"

// ---- The schedule: which tile is unit u -----------------------------------------
// The experts are visited in Batch.order, their tiles numbered one expert after
// the other (first_tile), within an expert in bands of `band` tile rows walked
// column by column (09's raster). The order puts the experts of two tile rows
// or more first (units 0 .. split - 1) and those of one tile row after: an
// expert of 128 rows or fewer fetches a 2 MB slice of B_g per tile for those
// few rows, so its tiles wait on memory, while a larger expert's tiles reuse
// each slice and wait on the MMAs. Walked in that order the two kinds would
// take the GPU in turns; `mixed` deals the memory-bound units out evenly among
// the others instead, so that every wave holds some of each. split = units
// (the experts in their own order, unmixed) leaves the numbering as it is.
// Which of the two a batch gets is the host's plan (fill_batch).
static __host__ __device__ __forceinline__ uint32_t mixed(uint32_t u, uint32_t units, uint32_t split) {
    const uint32_t small = units - split;  // memory-bound units, numbered from `split`
    const uint32_t before = (uint32_t)((uint64_t)u * small / units);  // of them, among units 0 .. u - 1
    const uint32_t through = (uint32_t)((uint64_t)(u + 1) * small / units);  // among units 0 .. u
    return through > before ? split + before : u - before;
}

// The grouped kernel's arguments: what the schedule and the maps read.
typedef struct {
    uint32_t experts, n, kblocks, ldc, tiles_n, band;
    const Batch* batch;
    const CUtensorMap* maps;  // HOST_MAPS, DEVICE_MAPS: [3 g + 0, 1, 2] = A_g, B_g, C_g
    CUtensorMap* slots;       // EDIT: 2 A/B pairs and 2 C maps (one per consumer) per CTA
    uint32_t ld_ab;           // elements from one row of A (and B) to the next
    const uint16_t* b;        // G N x ld_ab: every expert's B, in expert order
} GroupArgs;

// The range x falls in: the last i < count with start[i] <= x (a binary
// search; over first_tile, in shared memory, for the i-th expert visited; over
// first_row for the expert of a row).
static __host__ __device__ __forceinline__ uint32_t range_of(const uint32_t* start, uint32_t count,
                                                             uint32_t x) {
    uint32_t lo = 0, hi = count;  // start[lo] <= x < start[hi]
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) / 2;
        if (start[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

// Unit u (mixed) is the i-th tile of the expert visited at-th (first_tile, in
// shared memory); within the expert, bands of `band` tile rows walked column
// by column (09's raster). A warpgroup whose rows all lie past its expert's
// skips the MMAs: an expert of 64 rows or fewer leaves the second warpgroup
// of its tile row nothing to compute.
template <class Cfg>
struct ExpertSchedule {
    const GroupArgs* p;
    const uint32_t* first_row;   // the batch's
    const uint32_t* first_tile;  // the batch's, copied to shared memory: searched for every tile
    uint32_t split;              // the batch's
    uint32_t first, stride, units;
    static constexpr bool SkipEmptyRows = true;
    static constexpr bool StreamK = false;  // every unit ends in the kernel's own epilogue

    // This CTA's units of the batch p names (first_tile: its copy in shared memory).
    static __device__ __forceinline__ ExpertSchedule of(const GroupArgs& p, const uint32_t* first_tile) {
        return {&p,         p.batch->first_row, first_tile,           p.batch->split,
                blockIdx.x, gridDim.x,          first_tile[p.experts]};
    }

    __device__ __forceinline__ Work work(uint32_t u) const {
        const uint32_t v = mixed(u, units, split), at = range_of(first_tile, p->experts, v);
        Work w;
        w.group = p->batch->order[at];
        w.rows = first_row[w.group + 1] - first_row[w.group];
        const uint32_t i = v - first_tile[at], tiles_m = (w.rows + Cfg::BM - 1) / Cfg::BM;
        const uint32_t per_band = p->band * p->tiles_n, first = i / per_band * p->band, rest = i % per_band;
        const uint32_t band_rows = min(p->band, tiles_m - first);
        w.row0 = (first + rest % band_rows) * Cfg::BM;  // within the expert
        w.col0 = rest / band_rows * BN;
        w.kb_begin = 0, w.kb_end = p->kblocks;
        return w;
    }
};
