// Step 09's stream-K schedule (09_gemm/parts/stream_k.cuh), on the CPU: every
// cluster's units (StreamKSchedule), dealt tiles and tail pieces together, cover every
// (tile, k-block) of C exactly once, for every CTA rank; the tail's pieces of a
// cluster store before they wait (at most one WORK_ADD, and last); every cut
// tile has exactly one WORK_FIRST piece, the one that starts it; no round is
// left partly idle (every cluster's share of k-blocks is within one of the
// others'). Shapes: the main problem, the edge problem, --quick's, and odd
// ones around them. Built and run by tests/test_tutorial_host.py.
#include "tests/unit_fake_device.h"
#define main gemm_main
#include "09_gemm/gemm.cu"
#undef main
#include "tests/unit_expect.h"

#include <vector>

static bool covers_once(uint32_t m, uint32_t n, uint32_t k, uint32_t clusters, uint32_t group, char* why,
                        size_t cap) {
    using Cfg = Best;
    GemmArgs a;
    memset(&a, 0, sizeof a);
    const uint32_t tiles_m = (m + Cfg::BM - 1) / Cfg::BM, tiles_n = (n + BN - 1) / BN;
    a.m = m, a.n = n, a.kblocks = (k + BK - 1) / BK, a.splits = 1, a.band = group;
    a.ctiles_m = (tiles_m + Cfg::ClusterM - 1) / Cfg::ClusterM,
    a.ctiles_n = (tiles_n + Cfg::ClusterN - 1) / Cfg::ClusterN;
    const uint32_t units = a.ctiles_m * a.ctiles_n;
    if (units <= clusters || units % clusters == 0) return true;  // no tail: launch_gemm plans none
    plan_tail(&a, units, clusters, NULL);
    for (uint32_t rank = 0; rank < (uint32_t)Cfg::ClusterSize; ++rank) {
        // seen[tile position][k-block]: tiles keyed by their top-left corner in units of tiles.
        std::vector<uint8_t> seen((size_t)tiles_m * Cfg::ClusterM * tiles_n * a.kblocks + a.kblocks, 0);
        std::vector<uint8_t> firsts((size_t)tiles_m * Cfg::ClusterM * tiles_n + 1, 0);
        uint64_t least = UINT64_MAX, most = 0;
        for (uint32_t c = 0; c < clusters; ++c) {
            const StreamKSchedule<Cfg> s = StreamKSchedule<Cfg>::of(a, rank, c, clusters);
            uint64_t mine = 0;
            bool waited = false;
            for (uint32_t i = s.first; i < s.units; i += s.stride) {
                const Work w = s.work(i);
                if (waited) return snprintf(why, cap, "cluster %u: a unit after its WORK_ADD", c), false;
                waited = w.kind == WORK_ADD;
                if (w.kb_begin >= w.kb_end || w.kb_end > a.kblocks)
                    return snprintf(why, cap, "cluster %u unit %u: k-blocks [%u, %u)", c, i, w.kb_begin,
                                    w.kb_end),
                           false;
                const size_t tile = (size_t)(w.row0 / Cfg::BM) * tiles_n + w.col0 / BN;
                if (w.kind == WORK_FIRST && (w.kb_begin != 0 || firsts[tile]++))
                    return snprintf(why, cap, "tile %zu: a second or misplaced WORK_FIRST", tile), false;
                for (uint32_t kb = w.kb_begin; kb < w.kb_end; ++kb)
                    if (seen[tile * a.kblocks + kb]++)
                        return snprintf(why, cap, "tile %zu k-block %u twice (rank %u)", tile, kb, rank),
                               false;
                if (w.kind != WORK_TILE && w.flag / 2 / Cfg::ClusterSize >= a.sk_tiles)
                    return snprintf(why, cap, "a flag past the tail's"), false;
                mine += w.kb_end - w.kb_begin;
            }
            least = mine < least ? mine : least, most = mine > most ? mine : most;
        }
        // Every tile whose rows or columns lie inside the grid of cluster tiles is covered whole.
        for (uint32_t tm = 0; tm < a.ctiles_m * Cfg::ClusterM; ++tm)
            for (uint32_t tn = 0; tn < a.ctiles_n * Cfg::ClusterN; ++tn) {
                if ((tm % Cfg::ClusterM) * Cfg::ClusterN + tn % Cfg::ClusterN != rank) continue;
                for (uint32_t kb = 0; kb < a.kblocks; ++kb)
                    if (seen[((size_t)tm * tiles_n + tn) * a.kblocks + kb] != 1)
                        return snprintf(why, cap, "tile (%u, %u) k-block %u not covered", tm, tn, kb), false;
            }
        if (most - least > a.kblocks + 1)  // dealt whole tiles differ by one at most, the tail shares by one
            return snprintf(why, cap, "shares from %llu to %llu k-blocks", (unsigned long long)least,
                            (unsigned long long)most),
                   false;
    }
    return true;
}

int main(void) {
    unit_no_device();
    const uint32_t shapes[][3] = {{8192, 8192, 8192},  {7990, 4097, 3001}, {1024, 1024, 1024},
                                  {1050, 777, 1001},   {8192, 8192, 64},   {257, 8191, 129},
                                  {16384, 4096, 4096}, {4096, 4096, 4096}};
    const uint32_t clusters[] = {66, 65, 33, 7};
    const uint32_t groups[] = {1, 8, 1024};
    char why[160] = "";
    bool all = true;
    for (const auto& s : shapes)
        for (uint32_t p : clusters)
            for (uint32_t gr : groups)
                if (!covers_once(s[0], s[1], s[2], p, gr, why, sizeof why)) {
                    printf("  %u x %u x %u over %u clusters, band %u: %s\n", s[0], s[1], s[2], p, gr, why);
                    all = false;
                }
    EXPECT("stream_k_covers_every_tile_and_k_block_once", all);
    // No tail when the rounds are whole or there is only one.
    GemmArgs z;
    memset(&z, 0, sizeof z);
    z.kblocks = 128;
    plan_tail(&z, 66 * 15, 66, NULL);
    const bool whole = z.sk_tiles == 0 && z.dp_tiles == 66 * 15;
    plan_tail(&z, 40, 66, NULL);
    EXPECT("stream_k_no_tail_when_rounds_are_whole", whole && z.sk_tiles == 0 && z.dp_tiles == 40);
    // The main problem on the H200: 1024 cluster tiles over 66 clusters, 34 in the tail.
    GemmArgs a;
    memset(&a, 0, sizeof a);
    a.kblocks = 128;
    plan_tail(&a, 1024, 66, NULL);
    EXPECT("stream_k_tail_is_the_last_round", a.sk_tiles == 34 && a.dp_tiles == 990);
    a.kblocks = 2;  // two k-blocks a tile: 34 tiles share too little; one more round joins
    plan_tail(&a, 1024, 66, NULL);
    EXPECT("stream_k_small_tail_takes_one_more_round", a.sk_tiles == 100 && a.dp_tiles == 924);
    return UNIT_RESULT();
}
