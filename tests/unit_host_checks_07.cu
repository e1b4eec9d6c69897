// Step 07's host-side checks, compiled from 07_reduce_multicast/reduce_multicast.cu
// itself and fed right and wrong answers on the CPU (no GPU: the device memory a
// check reads back is host memory here, tests/unit_fake_device.h). A check that
// a weakened program would pass on every GPU run fails here:
// - split-K: the bound (one real f32 order within it, tight, a lost or doubled
//   contributor outside it), and check_splitk on a readback (a sum one
//   contributor short, a NaN: the poison);
// - the reduce ops: apply_op as the PTX ISA defines each op, the reference
//   folding every contributor, and every contributor showing in the result;
// - the broadcast: B's words even, so no checksum is the poison word; the
//   reference equal to the consumers' checksum, computed here the kernel's
//   way; check_broadcast on right, moved, never written and foreign sums; and
//   each variant poisoning its sums first (one that writes nothing cannot pass
//   on the output of the one before);
// - the dsmem ring: its words under SEEDED_MASK (never the poison word), and
//   the reference taking the previous rank's words, never a CTA's own.
// Built and run by tests/test_tutorial_host.py::test_reduce_host_checks.
#define UNIT_FAKE_PARTS  // the broadcast's cluster launch runs nothing: unit_on_poison does its work
#include "tests/unit_fake_device.h"  // before the program: its poisons and readbacks act on host memory
#define main reduce_main             // the program's main, renamed: this file's main runs the cases
#include "07_reduce_multicast/reduce_multicast.cu"
#undef main
#include "tests/unit_expect.h"

#define N 4096

static void split_k_cases(void) {
    static float init[N], in_order[N], out[N];
    static double ref[N], bound[N];
    fill_seeded_floats(init, N, 11);
    SplitKRun r;
    memset(&r, 0, sizeof r);
    r.p.k_per_tile = kContributors[SPLITK_RUNS - 1], r.p.seed = 5, r.n = N;
    r.init = init, r.ref = ref, r.bound = bound, r.in_order = in_order;
    splitk_reference(&r);

    size_t in_order_ok = 0, tight = 0, missing_caught = 0, doubled_caught = 0;
    for (uint32_t i = 0; i < N; ++i) {
        double mag = fabs(init[i]);
        for (uint32_t k = 0; k < r.p.k_per_tile; ++k) mag += fabs(partial_f32(r.p.seed, k, i));
        // One real f32 order (one thread, contributor by contributor) lies within the bound.
        in_order_ok += fabs((double)in_order[i] - ref[i]) <= bound[i];
        // The bound is the rounding of 65 additions, no more: under 2^-17 of the terms' magnitudes.
        tight += bound[i] <= ldexp(mag, -17);
        // A sum that lost one contributor, or added one twice, is far outside it.
        const double v = partial_f32(r.p.seed, 3, i);
        missing_caught += v != 0.0 && !(fabs(ref[i] - v - ref[i]) <= bound[i]);
        doubled_caught += v != 0.0 && !(fabs(ref[i] + v - ref[i]) <= bound[i]);
    }
    EXPECT("in_order_sum_within_bound", in_order_ok == N);
    EXPECT("bound_is_tight", tight == N);
    EXPECT("missing_contributor_caught", missing_caught == N);
    EXPECT("doubled_contributor_caught", doubled_caught == N);

    // check_splitk on what a run leaves in the output: the in-order sums pass; one sum a contributor
    // short, and one never written (the poison, a NaN), each fail as exactly one wrong element.
    r.p.out = out;
    memcpy(out, in_order, sizeof out);
    g_checks_failed = 0;
    EXPECT("splitk_right_sums_pass", check_splitk("unit_splitk_right", &r) == 0 && g_checks_failed == 0);
    out[17] = in_order[17] - partial_f32(r.p.seed, 63, 17);
    char counted[64];
    snprintf(counted, sizeof counted, "FAIL  (1 of %d wrong)", N);
    UNIT_CAPTURE(EXPECT("splitk_lost_contributor_found", check_splitk("unit_splitk_lost", &r) == 1));
    EXPECT("splitk_lost_contributor_counted", unit_printed_has(counted) && unit_printed_has("[17] got"));
    out[17] = in_order[17];
    const uint32_t poison = POISON_WORD;
    memcpy(&out[4000], &poison, 4);
    UNIT_CAPTURE(EXPECT("splitk_poison_found", check_splitk("unit_splitk_poison", &r) == 1));
    EXPECT("splitk_poison_counted", unit_printed_has(counted) && unit_printed_has("[4000] got -nan"));
}

static void reduce_ops_cases(void) {
    // Each op as the PTX ISA defines it for .u32 / .b32 (inc and dec wrap at the bound v).
    EXPECT("apply_op_by_hand",
           apply_op(RED_ADD, 0xFFFFFFFFu, 2) == 1 && apply_op(RED_MIN, 5, 3) == 3 &&
               apply_op(RED_MIN, 3, 5) == 3 && apply_op(RED_MAX, 5, 3) == 5 && apply_op(RED_MAX, 3, 5) == 5 &&
               apply_op(RED_INC, 2, 3) == 3 && apply_op(RED_INC, 3, 3) == 0 && apply_op(RED_INC, 7, 3) == 0 &&
               apply_op(RED_DEC, 3, 5) == 2 && apply_op(RED_DEC, 0, 5) == 5 && apply_op(RED_DEC, 6, 5) == 5 &&
               apply_op(RED_AND, 0xF0u, 0x3Cu) == 0x30u && apply_op(RED_OR, 0xF0u, 0x0Fu) == 0xFFu &&
               apply_op(RED_XOR, 0xFFu, 0x0Fu) == 0xF0u);
    enum { NO = OPS_ROWS * OPS_COLS, SAMPLE = 4096 };
    static uint32_t init[NO], want[NO];
    bool folds = true, every_shows = true, min_max_show = true;
    for (int o = 0; o < NUM_REDUCE_OPS; ++o) {
        const ReduceOp op = (ReduceOp)o;
        reduce_ops_reference(op, 9, init, want, NO);
        for (uint32_t i = 0; i < SAMPLE; ++i) {
            uint32_t all = op_init(op, 9, i);
            for (uint32_t k = 0; k < OPS_K; ++k) all = apply_op(op, all, op_source(op, 9, k, i));
            folds &= init[i] == op_init(op, 9, i) && want[i] == all;
        }
        // A reduce that lost contributor k: for add, xor, and, or, inc and dec every element shows it;
        // for min and max, the elements where k held the extreme (some in every sample).
        for (uint32_t k = 0; k < OPS_K; ++k) {
            uint32_t changed = 0;
            for (uint32_t i = 0; i < SAMPLE; ++i) {
                uint32_t x = op_init(op, 9, i);
                for (uint32_t j = 0; j < OPS_K; ++j)
                    if (j != k) x = apply_op(op, x, op_source(op, 9, j, i));
                changed += x != want[i];
            }
            if (op == RED_MIN || op == RED_MAX)
                min_max_show &= changed > 0;
            else
                every_shows &= changed == SAMPLE;
        }
    }
    EXPECT("reference_folds_every_contributor", folds);
    EXPECT("a_lost_contributor_shows_in_every_element", every_shows);
    EXPECT("a_lost_contributor_shows_in_min_and_max", min_max_show);
}

// The broadcast's output, as unit_on_poison writes it after the sums' poison (the kernel's work):
// every CTA's sums, or none.
static Broadcast* g_bc = NULL;
static bool g_bc_writes = true;
static void broadcast_kernel_on_host(void* p, size_t) {
    if (g_bc && p == g_bc->sums && g_bc_writes) memcpy(g_bc->sums, g_bc->want, g_bc->nsums * 4);
}

static void broadcast_cases(void) {
    Broadcast b;
    memset(&b, 0, sizeof b);
    b.tiles = 4, b.ctas = 16, b.seed = 3;
    b.nsums = (size_t)b.ctas * b.tiles * BT_ROWS;
    const size_t rows = (size_t)b.tiles * BT_ROWS, words = rows * BT_COLS;
    uint32_t* host_b = (uint32_t*)xmalloc(words * 4, "B");
    b.row_sum = (uint32_t*)xmalloc(rows * 4, "the row checksums");
    b.want = (uint32_t*)xmalloc(b.nsums * 4, "the expected sums");
    b.sums = (uint32_t*)xmalloc(b.nsums * 4, "the sums");
    broadcast_reference(&b, host_b);

    bool even = true, never_poison = true, consumers = true, every_cta = true;
    for (size_t i = 0; i < words; ++i) even &= host_b[i] % 2 == 0 && host_b[i] == b_word(b.seed, i);
    for (size_t r = 0; r < rows; ++r) {
        never_poison &= b.row_sum[r] % 2 == 0 && b.row_sum[r] != POISON_WORD;
        // The consumers' checksum, computed as the kernel does: thread c = 2 x row + h sums half h of
        // the row as 8 chunks of 4 words in a rotated order, and the two halves are added (a shuffle).
        const uint32_t row = (uint32_t)(r % BT_ROWS);
        const uint32_t* tile_row = host_b + r * BT_COLS;
        uint32_t total = 0;
        for (uint32_t h = 0; h < 2; ++h) {
            uint32_t sum = 0;
            for (uint32_t j = 0; j < 8; ++j) {
                const uint32_t col = (h * 8 + (j + row + 4 * h) % 8) * 4;
                for (uint32_t w = 0; w < 4; ++w) sum += tile_row[col + w] * (2 * (col + w) + 1);
            }
            total += sum;
        }
        consumers &= total == b.row_sum[r];
    }
    for (uint32_t cta = 0; cta < b.ctas; ++cta)
        for (size_t r = 0; r < rows; ++r) every_cta &= b.want[cta * rows + r] == b.row_sum[r];
    EXPECT("b_words_even", even);
    EXPECT("checksums_never_the_poison_word", never_poison);
    EXPECT("reference_is_the_consumers_checksum", consumers);
    EXPECT("every_cta_wants_every_row", every_cta);

    // check_broadcast on the sums a run leaves.
    memcpy(b.sums, b.want, b.nsums * 4);
    g_checks_failed = 0;
    EXPECT("broadcast_right_sums_pass",
           check_broadcast("unit_broadcast_right", &b) == 0 && g_checks_failed == 0);
    b.sums[1 * rows + 2 * BT_ROWS + 5] =
        b.row_sum[1 * BT_ROWS + 7];            // CTA 1, tile 2, row 5 holds tile 1, row 7
    b.sums[3 * rows + 9] = POISON_WORD;        // CTA 3, tile 0, row 9 never written
    b.sums[5 * rows + 11] = b.row_sum[0] + 1;  // odd: no row's checksum
    UNIT_CAPTURE(EXPECT("broadcast_wrong_sums_found", check_broadcast("unit_broadcast_wrong", &b) == 3));
    char counted[64];
    snprintf(counted, sizeof counted, "FAIL  (3 of %zu wrong)", b.nsums);
    EXPECT("broadcast_wrong_sums_counted", unit_printed_has(counted));
    EXPECT("broadcast_moved_row_named",
           unit_printed_has("CTA 1, tile 2, row 5 holds the data of tile 1, row 7"));
    EXPECT("broadcast_kinds_told_apart",
           unit_printed_has(
               "1 hold another row of B (a slice in the wrong place), 1 were never written, 1 match no row"));

    // Each variant poisons its sums before its launch: after a variant that wrote every sum, one that
    // writes none fails with every sum never written.
    g_bc = &b;
    unit_on_poison = broadcast_kernel_on_host;
    const Cli* untimed = NULL;
    g_checks_failed = 0;
    g_bc_writes = true;
    broadcast_part(&b, &kBroadcast[0], untimed);
    EXPECT("broadcast_part_right_passes", g_checks_failed == 0);
    g_bc_writes = false;
    snprintf(counted, sizeof counted, "FAIL  (%zu of %zu wrong)", b.nsums, b.nsums);
    UNIT_CAPTURE(broadcast_part(&b, &kBroadcast[2], untimed));
    EXPECT("broadcast_part_repoisoned",
           g_checks_failed == 1 && unit_printed_has(counted) && unit_printed_has(" were never written"));
    unit_on_poison = NULL;
    g_bc = NULL;
    free(host_b);
    free(b.row_sum);
    free(b.want);
    free(b.sums);
}

static void dsmem_cases(void) {
    static uint32_t want[DS_CTAS * DS_WORDS];
    bool masked = true, from_previous = true, not_own = true;
    for (uint32_t cta = 0; cta < DS_CTAS; ++cta)
        for (uint32_t i = 0; i < DS_WORDS; ++i) masked &= (dsmem_word(13, cta, i) & ~SEEDED_MASK) == 0;
    dsmem_reference(want, 13);
    for (uint32_t cta = 0; cta < DS_CTAS; ++cta) {
        const uint32_t base = cta / DS_CLUSTER * DS_CLUSTER,
                       from = base + (cta % DS_CLUSTER + DS_CLUSTER - 1) % DS_CLUSTER;
        uint32_t own = 0;
        for (uint32_t i = 0; i < DS_WORDS; ++i) {
            from_previous &= want[(size_t)cta * DS_WORDS + i] == dsmem_word(13, from, i);
            own += want[(size_t)cta * DS_WORDS + i] == dsmem_word(13, cta, i);
        }
        not_own &= own < DS_WORDS;
    }
    EXPECT("dsmem_words_never_the_poison_word", masked);
    EXPECT("dsmem_reference_takes_the_previous_rank", from_previous);
    EXPECT("dsmem_reference_never_a_cta_s_own", not_own);
}

int main(void) {
    unit_no_device();
    split_k_cases();
    reduce_ops_cases();
    broadcast_cases();
    dsmem_cases();
    return UNIT_RESULT();
}
