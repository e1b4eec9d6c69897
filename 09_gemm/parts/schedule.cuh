// 09_gemm/parts/schedule.cuh: which tile of C, and which k-blocks, a unit of
// work is. A SCHEDULE is what a CTA's producer and consumers agree on
// without talking: this CTA's units (first, first + stride, ... below
// units) and, for each, its Work. Each side walks the same units in the same
// order, counting ring positions as it goes, so they meet in the ring. A
// schedule provides:
//   first, stride, units   the units of this CTA (of its cluster, all alike)
//   work(u)                unit u's tile and k-blocks
//   SkipEmptyRows          whether a consumer warpgroup whose 64 rows all lie
//                          past its C's skips the MMAs (consume.cuh)
//   StreamK                whether a unit may be a piece of a tile cut along
//                          K, whose epilogue the schedule does (piece_epilogue)
// 09's are RasterSchedule (below) and StreamKSchedule (stream_k.cuh); step
// 10's walks the tiles of many experts (10_grouped_gemm/parts/schedule.cuh).
#pragma once
#include "09_gemm/parts/config.cuh"

typedef struct {
    float* c;  // C's first element; rows ldc floats apart
    uint32_t m, n, ldc;
    uint32_t kblocks, splits;     // k-blocks of 64 in K; split-K pieces per tile (1: none)
    uint32_t ctiles_m, ctiles_n;  // the grid of cluster tiles (ClusterM x ClusterN tiles of BM x 256)
    uint32_t band;                // raster: bands of `band` cluster-tile rows (1: row-major)
    // Stream-K's tail (stream_k.cuh; sk_tiles 0: none): the first dp_tiles
    // cluster tiles dealt whole, the last sk_tiles cut along K into one equal
    // share of k-blocks per cluster; flags[] and this launch's epoch order the
    // pieces of a cut tile.
    uint32_t dp_tiles, sk_tiles, epoch;
    uint32_t* flags;
} GemmArgs;

// A unit of work: a tile of C number `group` (rows row0.., columns col0..;
// that C has `rows` rows) and a range of k-blocks. 09 has one C (group 0);
// step 10 one per expert.
// A stream-K schedule (stream_k.cuh) also says what the unit's epilogue
// does: WORK_TILE the kernel's own; WORK_FIRST stores the first piece of a
// tile cut along K and raises its flag; WORK_ADD waits for that flag and adds.
enum { WORK_TILE, WORK_FIRST, WORK_ADD };
typedef struct {
    uint32_t row0, col0, kb_begin, kb_end, group, rows;
    uint32_t kind, flag;  // the epilogue's kind; a cut tile's flag (stream-K schedules only)
} Work;

// Units number the cluster tiles split-major (all tiles of split 0, then of
// split 1, ...); within a split, bands of `band` cluster-tile rows, each
// walked column by column, top to bottom: the tiles in flight at once share
// few rows of A and few columns of B, which stay in L2 while they are reused
// (band 1: plain row-major).
template <class Cfg>
struct RasterSchedule {
    const GemmArgs* g;
    uint32_t rank;                  // this CTA's in its cluster
    uint32_t first, stride, units;  // this cluster's units
    // Its only empty rows are the padding of the edge problem's last cluster
    // tile: rare, and the TMA's zero fill makes their MMAs harmless.
    static constexpr bool SkipEmptyRows = false;
    static constexpr bool StreamK = false;  // every unit ends in the kernel's own epilogue

    __host__ __device__ __forceinline__ Work work(uint32_t u) const {
        const uint32_t ctiles = g->ctiles_m * g->ctiles_n, tile = u % ctiles, split = u / ctiles;
        const uint32_t per_band = g->band * g->ctiles_n, first = tile / per_band * g->band,
                       rest = tile % per_band;
        const uint32_t band_rows = min(g->band, g->ctiles_m - first);
        const uint32_t ctm = first + rest % band_rows, ctn = rest / band_rows;
        Work w;
        w.row0 = (ctm * Cfg::ClusterM + rank / Cfg::ClusterN) * Cfg::BM;
        w.col0 = (ctn * Cfg::ClusterN + rank % Cfg::ClusterN) * BN;
        w.kb_begin = split * g->kblocks / g->splits;  // splits <= kblocks: no range is empty
        w.kb_end = (split + 1) * g->kblocks / g->splits;
        w.group = 0, w.rows = g->m;
        return w;
    }
};
template <class Cfg>
static __device__ __forceinline__ Work unit_work(const GemmArgs& g, uint32_t u, uint32_t rank) {
    const RasterSchedule<Cfg> s = {&g, rank, 0, 0, 0};
    return s.work(u);
}
