// 09_gemm/parts/stream_k.cuh: part 5's last lever, stream-K's tail. A
// persistent kernel deals C's cluster tiles to its resident clusters in
// rounds; 1024 tiles over 66 clusters is 15.52 rounds, so the 16th round
// runs 34 tiles and leaves 32 clusters idle (the program's waves line). Here
// the tiles of that last round are cut along K instead, into one equal share
// of k-blocks per cluster: every cluster runs its whole rounds, then its share
// of the tail, and all end together (15.52 rounds of work in 15.52, not 16).
//
// A share can start inside a tile and end inside another, so a tile of the
// tail is computed in pieces by two or more clusters, and its sums must be
// added. The piece that starts the tile (WORK_FIRST) stores it; then, after
// its warpgroup's barrier, one thread raises the tile's flag with
// st.release.gpu (08's cross-CTA flag): every store of the warpgroup is
// ordered before it. A later piece (WORK_ADD) waits for the flag with
// ld.acquire.gpu (a bounded wait, which names the flag), meets its warpgroup,
// and adds its sums with red.global.add (the adds may come in any order; every
// sum here is exact in fp32 in any order). A cluster runs its pieces that start
// a tile first and its one piece that may wait last, so no cluster waits for
// a cluster that waits for it. The flags are never reset: each launch raises
// them to its own epoch, a number the host counts up.
#pragma once
#include "08_descriptor_update/tensormap_edit.cuh"  // st_release_gpu, ld_acquire_gpu
#include "09_gemm/parts/epilogue.cuh"
#include "09_gemm/parts/schedule.cuh"

// Cluster c's share of the tail, [a, b) counted in k-blocks tile after tile:
// how many pieces it is (the tiles it touches), and the first of those tiles.
static __host__ __device__ __forceinline__ uint32_t tail_pieces(const GemmArgs& g, uint32_t c,
                                                                uint32_t clusters, uint64_t* a,
                                                                uint32_t* ta) {
    const uint64_t all = (uint64_t)g.sk_tiles * g.kblocks;
    *a = all * c / clusters;
    const uint64_t b = all * (c + 1) / clusters;
    if (b == *a) return 0;
    *ta = (uint32_t)(*a / g.kblocks);
    return (uint32_t)((b - 1) / g.kblocks) - *ta + 1;
}

// 09's raster (RasterSchedule) for the dealt tiles, then the tail. The units
// are numbered per cluster (first 0, stride 1): unit i of this cluster's
// `units` is its i-th dealt tile, then its tail pieces in the order ta + 1,
// ..., tb, ta (every piece but ta's starts its tile).
template <class Cfg>
struct StreamKSchedule {
    RasterSchedule<Cfg> raster;  // the tiles' positions; its g and rank
    uint32_t cluster, clusters;  // this one, of all resident
    uint32_t dealt;              // its dealt tiles (whole rounds)
    uint32_t ta, pieces;         // its share of the tail: the first tile it touches, how many
    uint64_t a, b;               // the share, [a, b) in k-blocks counted tile after tile
    uint32_t first, stride, units;
    static constexpr bool SkipEmptyRows = false;
    static constexpr bool StreamK = true;

    static __host__ __device__ __forceinline__ StreamKSchedule of(const GemmArgs& g, uint32_t rank,
                                                                  uint32_t c, uint32_t clusters) {
        StreamKSchedule s;
        s.raster = {&g, rank, 0, 1, 0};
        s.cluster = c, s.clusters = clusters;
        s.dealt = c < g.dp_tiles ? (g.dp_tiles - c + clusters - 1) / clusters : 0;
        s.ta = 0, s.pieces = tail_pieces(g, c, clusters, &s.a, &s.ta);
        s.b = (uint64_t)g.sk_tiles * g.kblocks * (c + 1) / clusters;
        s.first = 0, s.stride = 1, s.units = s.dealt + s.pieces;
        return s;
    }

    __host__ __device__ __forceinline__ Work work(uint32_t i) const {
        const GemmArgs& g = *raster.g;
        if (i < dealt) {
            Work w = raster.work(cluster + i * clusters);
            w.kind = WORK_TILE, w.flag = 0;
            return w;
        }
        const uint32_t j = i - dealt, t = j + 1 < pieces ? ta + 1 + j : ta;  // ta's piece last
        const uint64_t t0 = (uint64_t)t * g.kblocks;
        Work w = raster.work(g.dp_tiles + t);
        w.kb_begin = (uint32_t)((a > t0 ? a : t0) - t0);
        w.kb_end = (uint32_t)((b < t0 + g.kblocks ? b : t0 + g.kblocks) - t0);
        w.kind = w.kb_begin == 0 && w.kb_end == g.kblocks ? WORK_TILE
                 : w.kb_begin == 0                        ? WORK_FIRST
                                                          : WORK_ADD;
        w.flag = (t * Cfg::ClusterSize + raster.rank) * 2;  // + the consumer warpgroup
        return w;
    }

    // The epilogue of a piece of a cut tile, for the consumer warpgroup wg.
    template <class Out>
    __device__ __forceinline__ void piece_epilogue(const float (&d)[128], const Out& out, const Work& w,
                                                   uint32_t row0, uint32_t tid, uint32_t wg) const {
        const GemmArgs& g = *raster.g;
        uint32_t* flag = g.flags + w.flag + wg;
        if (w.kind == WORK_FIRST) {
            store_tile(d, out.c, out.m, out.n, out.ldc, row0, w.col0);
            warpgroup_barrier(wg);
            if (tid == 0) st_release_gpu(flag, g.epoch);
        } else {
            if (tid == 0)
                bounded_wait([&] { return ld_acquire_gpu(flag) == g.epoch; }, "the cut tile's flag", __FILE__,
                             __LINE__, "epoch", g.epoch);
            warpgroup_barrier(wg);
            red_tile(d, out, row0, w.col0, tid);
        }
    }
};

// The host's plan: the tiles of the last, partly idle round (units %
// clusters of them) form the tail; where each cluster's share of it would
// be under TAIL_MIN_SHARE k-blocks (too few to keep the ring full between two
// epilogues), one more round joins it. No tail when the rounds are whole.
#define TAIL_MIN_SHARE 16
static void plan_tail(GemmArgs* a, uint32_t units, uint32_t clusters, uint32_t* flags) {
    static uint32_t epoch = 0;
    uint32_t tail = units > clusters ? units % clusters : 0;
    if (tail && (uint64_t)tail * a->kblocks < (uint64_t)TAIL_MIN_SHARE * clusters && units >= tail + clusters)
        tail += clusters;
    a->sk_tiles = tail, a->dp_tiles = units - tail, a->flags = flags, a->epoch = ++epoch;
}
