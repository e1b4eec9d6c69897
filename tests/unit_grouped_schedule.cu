// Step 10's schedule, compiled from 10_grouped_gemm/grouped_gemm.cu itself and
// run on the CPU (nothing here launches or copies): the numbering of units is a
// permutation whatever the batch, the memory-bound units are dealt evenly
// among the others, the plan mixes the 64-expert batch and keeps the
// 128-expert one in expert order (the measured choice), and `other` gives the
// other schedule. Built and run by tests/test_tutorial_host.py.
#define main grouped_main  // the program's main, renamed: this file's main runs the cases
#include "10_grouped_gemm/grouped_gemm.cu"
#undef main
#include "tests/unit_expect.h"

// Every unit 0 .. units - 1 once, and each (expert, tile) of the batch once.
static bool schedule_is_permutation(const Batch* b, uint32_t experts, uint32_t n) {
    const uint32_t units = b->first_tile[experts];
    uint8_t* seen = (uint8_t*)calloc(units ? units : 1, 1);
    bool ok = true;
    for (uint32_t u = 0; u < units && ok; ++u) {
        const uint32_t v = mixed(u, units, b->split);
        ok = v < units && !seen[v];
        if (ok) seen[v] = 1;
    }
    uint32_t covered = 0;  // the visiting order names every expert with tiles exactly once
    uint8_t named[MAX_EXPERTS] = {0};
    for (uint32_t i = 0; i < experts && ok; ++i) {
        const uint32_t g = b->order[i], tiles = b->first_tile[i + 1] - b->first_tile[i];
        ok = g < experts && !named[g] && tiles == tiles_of(b->first_row[g + 1] - b->first_row[g], n);
        named[g] = 1, covered += tiles;
    }
    free(seen);
    return ok && covered == units;
}

// In every run of `window` consecutive units, the memory-bound ones (v >= split)
// number within 1 of their share.
static bool dealt_evenly(const Batch* b, uint32_t experts, uint32_t window) {
    const uint32_t units = b->first_tile[experts], small = units - b->split;
    for (uint32_t start = 0; start + window <= units; ++start) {
        uint32_t got = 0;
        for (uint32_t u = start; u < start + window; ++u) got += mixed(u, units, b->split) >= b->split;
        const double share = (double)window * small / units;
        if (got + 1 < share || got > share + 1) return false;
    }
    return true;
}

static void batch_of(Batch* b, uint32_t experts, uint32_t total, double skew, uint32_t seed, bool other) {
    uint32_t rows[MAX_EXPERTS];
    expert_rows(rows, experts, total, skew, seed);
    fill_batch(b, rows, experts, 4096, other);
}

int main(void) {
    static Batch b;  // large: off the stack
    // The program's two problems at their defaults (seed 1, batch 0).
    batch_of(&b, 64, 16384, 1.00, 1, false);
    EXPECT("first_problem_mixed", b.split < b.first_tile[64]);
    EXPECT("first_problem_permutation", schedule_is_permutation(&b, 64, 4096));
    EXPECT("first_problem_dealt_evenly", dealt_evenly(&b, 64, 132));
    batch_of(&b, 64, 16384, 1.00, 1, true);
    EXPECT("first_problem_other_in_expert_order", b.split == b.first_tile[64] && b.order[5] == 5);
    EXPECT("first_problem_other_permutation", schedule_is_permutation(&b, 64, 4096));

    batch_of(&b, 128, 8192, 1.20, 1, false);
    EXPECT("second_problem_in_expert_order", b.split == b.first_tile[128]);
    for (uint32_t u = 0; u < b.first_tile[128]; ++u)
        if (mixed(u, b.first_tile[128], b.split) != u) EXPECT("second_problem_identity", false);
    batch_of(&b, 128, 8192, 1.20, 1, true);
    EXPECT("second_problem_other_mixed", b.split < b.first_tile[128]);
    EXPECT("second_problem_other_permutation", schedule_is_permutation(&b, 128, 4096));
    EXPECT("second_problem_other_dealt_evenly", dealt_evenly(&b, 128, 132));

    // Edge batches: one expert, an expert of none, every expert small, N of one tile.
    const uint32_t one[1] = {1}, none_and_big[3] = {0, 1000, 3}, all_small[4] = {1, 128, 0, 77};
    fill_batch(&b, one, 1, 8, false);
    EXPECT("one_expert_one_row", schedule_is_permutation(&b, 1, 8) && b.first_tile[1] == 1);
    fill_batch(&b, none_and_big, 3, 300, false);
    EXPECT("empty_expert", schedule_is_permutation(&b, 3, 300) && b.first_tile[3] == 8 * 2 + 2);
    fill_batch(&b, none_and_big, 3, 300, true);
    EXPECT("empty_expert_other", schedule_is_permutation(&b, 3, 300));
    fill_batch(&b, all_small, 4, 4096, true);
    EXPECT("all_small_mixed", schedule_is_permutation(&b, 4, 4096) && b.split == 0);
    return UNIT_RESULT();
}
