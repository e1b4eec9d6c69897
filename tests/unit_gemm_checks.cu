// Step 09's own host-side checks, compiled from 09_gemm/gemm.cu itself and fed
// wrong answers on the CPU (no GPU: the "device" output is host memory,
// tests/unit_fake_device.h, and the one launch, the reference's, runs nothing).
// A check weakened in the program fails here, in `make test`, not only on a
// GPU. Built and run by tests/test_tutorial_host.py::test_gemm_host_checks.
#include "tests/unit_fake_device.h"  // before the program: its poisons and readbacks act on host memory
#define main gemm_main               // the program's main, renamed: this file's main runs the cases
#include "09_gemm/gemm.cu"
#undef main
#include "tests/unit_expect.h"
#include "tests/unit_framed.h"

// The reference kernel's work, done on the host right after run_reference poisons the output:
// C = A B^T from the CPU's int8 copies, into the framed output.
static Gemm* g_ref = NULL;
static void reference_on_host(void* p, size_t) {
    if (!g_ref || p != g_ref->out) return;
    for (uint32_t r = 0; r < g_ref->m; ++r)
        for (uint32_t j = 0; j < g_ref->n; ++j) {
            int32_t sum = 0;
            for (uint32_t kk = 0; kk < g_ref->k; ++kk)
                sum += g_ref->host_a[r * g_ref->k + kk] * g_ref->host_b[j * g_ref->k + kk];
            g_ref->c[(size_t)r * g_ref->ldc + j] = (float)sum;
        }
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

int main(void) {
    unit_no_device();
    // A 3 x 5 C: rows of 5 floats end inside a 16-byte chunk, so the TMA
    // store's tail covers columns 5..7 of each row (9 words in all).
    Gemm g;
    memset(&g, 0, sizeof g);
    g.m = 3, g.n = 5, g.ldc = output_ld(5);
    uint32_t* got;
    uint32_t* want = framed_want(g.m, g.n, g.ldc, 1u, &g.framed_words, &got);
    g.want = want;
    const size_t tail0 = (size_t)FRAME * g.ldc + FRAME + g.n;  // row 0's first word past C

    // What the hardware writes past C: zeros (either sign). Counted, restored, nothing wrong.
    memcpy(got, want, g.framed_words * 4);
    fill_tails(got, g.m, g.n, g.ldc, 0u);
    fill_tails(got + g.ldc, 1, g.n, g.ldc, 0x80000000u);  // row 1: negative zeros
    EXPECT("tail_zeros_counted", tma_store_tail(got, &g, TAIL_STORE) == 9);
    EXPECT("tail_zeros_restored", check_words("unit_tail_zeros", got, want, g.framed_words) == 0);

    // Anything else there is not what a TMA store of this box writes: kept, and reported wrong.
    memcpy(got, want, g.framed_words * 4);
    got[tail0] = float_bits(1.0f);
    EXPECT("tail_value_not_excused", tma_store_tail(got, &g, TAIL_STORE) == 0);
    EXPECT("tail_value_reported", check_words("unit_tail_value", got, want, g.framed_words) == 1);

    // Only the tail: a word one past it (column 8 of the row, the guard frame) is never excused.
    memcpy(got, want, g.framed_words * 4);
    got[tail0 + 3] = 0u;
    EXPECT("frame_zero_not_excused", tma_store_tail(got, &g, TAIL_STORE) == 0);
    EXPECT("frame_zero_reported", check_words("unit_frame_zero", got, want, g.framed_words) == 1);

    // An element of C itself zero where it must not be: the tail rule does not touch it.
    memcpy(got, want, g.framed_words * 4);
    got[(FRAME + 2) * g.ldc + FRAME + 4] = 0u;
    EXPECT("interior_zero_reported", tma_store_tail(got, &g, TAIL_STORE) == 0 &&
                                         check_words("unit_interior_zero", got, want, g.framed_words) == 1);

    // A TMA reduce adds zeros to the poison there: a NaN (not the poison's own bits) is what it leaves.
    memcpy(got, want, g.framed_words * 4);
    fill_tails(got, g.m, g.n, g.ldc, 0x7FFFFFFFu);
    EXPECT("reduce_tail_nan_counted", tma_store_tail(got, &g, TAIL_REDUCE) == 9);
    EXPECT("reduce_tail_restored", check_words("unit_reduce_tail", got, want, g.framed_words) == 0);
    memcpy(got, want, g.framed_words * 4);
    got[tail0] = 0u;  // overwritten, not added to: a reduce does not leave a zero there
    got[tail0 + 1] = float_bits(2.0f);
    EXPECT("reduce_tail_zero_not_excused", tma_store_tail(got, &g, TAIL_REDUCE) == 0);
    EXPECT("reduce_tail_reported", check_words("unit_reduce_tail_wrong", got, want, g.framed_words) == 2);
    memcpy(got, want, g.framed_words * 4);
    got[tail0] = 0x7FFFFFFFu;  // and a store never leaves a NaN
    EXPECT("store_tail_nan_not_excused", tma_store_tail(got, &g, TAIL_STORE) == 0);

    // The inputs: nonzero integers in -4..4 (a skipped or doubled k cannot sum right), and the
    // padding NaN is none of them.
    int inputs_ok = 1;
    for (uint64_t i = 0; i < 100000; ++i) {
        const int v = input_value(9, i);
        inputs_ok &= v != 0 && v >= -4 && v <= 4 && bf16_bits((float)v) != PAD_BF16;
    }
    EXPECT("inputs_nonzero_small", inputs_ok);

    // A PERF line's reference: its own paired cuBLAS time; a reference line (…cublas) its own;
    // any other line without a pair gets none (0), never its own time (100 % of nothing).
    snprintf(g_paired[0].name, sizeof g_paired[0].name, "persistent");
    g_paired[0].ms = 2.0f, g_npaired = 1;
    record_perf("cublas", 1.5f, 1.0);
    record_perf("wgmma_sync", 3.0f, 1.0);  // timed, but (a bug) not beside the reference
    MachineLine part, ref, stray;
    snprintf(part.text, sizeof part.text, "persistent");
    snprintf(ref.text, sizeof ref.text, "cublas");
    snprintf(stray.text, sizeof stray.text, "wgmma_sync");
    EXPECT("paired_reference", cublas_reference_ms(&part) == 2.0);
    EXPECT("reference_line_itself", cublas_reference_ms(&ref) == 1.5);
    EXPECT("unpaired_line_gets_none", cublas_reference_ms(&stray) == 0.0);

    // ---- The checks that read the output back: run_reference and check_gemm ----
    // A 3 x 5 x 2 problem. run_reference poisons the framed output, "launches" the reference (its
    // work done on the host after the poison), checks it against the CPU's sums and every frame
    // and padding word, and keeps it as the expected output.
    Gemm r;
    memset(&r, 0, sizeof r);
    r.m = 3, r.n = 5, r.k = 2, r.ldc = output_ld(5), r.prefix = "unit_";
    r.framed_words = (size_t)(r.m + 2 * FRAME) * r.ldc;
    r.out = (float*)xmalloc(r.framed_words * 4, "the output");
    r.c = r.out + (size_t)FRAME * r.ldc + FRAME;
    int8_t ha[3 * 2] = {1, -2, 3, 4, -1, 2}, hb[5 * 2] = {2, 1, -3, 4, 1, 1, -4, -2, 3, -1};
    r.host_a = ha, r.host_b = hb;
    uint32_t* const expected = (uint32_t*)xmalloc(r.framed_words * 4, "the expected output");
    r.want = expected;
    g_ref = &r, unit_on_poison = reference_on_host, g_checks_failed = 0;
    run_reference(&r);
    unit_on_poison = NULL;
    EXPECT("reference_checked_against_the_cpu", g_checks_failed == 0);
    EXPECT("reference_kept_as_the_expected_output",
           r.want == expected && expected[(FRAME + 1) * r.ldc + FRAME + 2] == float_bits(7.0f) &&
               expected[0] == POISON_WORD && expected[(FRAME + 1) * r.ldc + FRAME + r.n] == POISON_WORD);
    uint32_t* const kept = (uint32_t*)xmalloc(r.framed_words * 4, "a copy of it");
    memcpy(kept, r.want, r.framed_words * 4);

    // The right answer passes; a word of C wrong, a word written outside C and an output never
    // written are each found, and no readback changes the expected output (the harness's readback
    // buffer is reused by every check: an expectation kept there compares the output with itself).
    memcpy(r.out, kept, r.framed_words * 4);
    EXPECT("right_output_passes", check_gemm("unit_right", &r, TAIL_NONE) == 0);
    r.c[r.ldc + 2] = 12.0f;
    EXPECT("wrong_word_in_c_found", check_gemm("unit_wrong_word", &r, TAIL_NONE) == 1);
    memcpy(r.out, kept, r.framed_words * 4);
    r.out[(size_t)(FRAME + r.m) * r.ldc + 1] = 0.0f;  // the guard row under C
    EXPECT("word_outside_c_found", check_gemm("unit_outside", &r, TAIL_STORE) == 1);
    memset(r.out, POISON_BYTE, r.framed_words * 4);
    EXPECT("never_written_found", check_gemm("unit_never_written", &r, TAIL_NONE) == r.m * r.n);
    EXPECT("expected_output_unchanged_by_readbacks", memcmp(r.want, kept, r.framed_words * 4) == 0);

    // The reference among cuBLAS's candidates: the fastest EXACT one, by median; an inexact one is never
    // taken while an exact one exists, however fast; with none exact, the fastest of all.
    const float medians[4] = {1.30f, 1.20f, 1.10f, 1.25f};
    const bool exacts[4] = {true, true, false, true}, none[4] = {false, false, false, false};
    EXPECT("reference_is_the_fastest_exact_candidate", fastest_candidate(medians, exacts, 4) == 1);
    EXPECT("reference_never_the_slowest_exact", fastest_candidate(medians, exacts, 4) != 0);
    EXPECT("reference_of_no_exact_is_the_fastest", fastest_candidate(medians, none, 4) == 2);

    free(expected);
    free(kept);
    free(r.out);
    free(want);
    free(got);
    return UNIT_RESULT();
}
