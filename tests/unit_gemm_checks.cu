// Step 09's own host-side checks, compiled from 09_gemm/gemm.cu itself and fed
// wrong answers on the CPU (no GPU: nothing here launches or copies). A check
// weakened in the program fails here, in `make test`, not only on a GPU.
// Built and run by tests/test_tutorial_host.py::test_gemm_host_checks.
#define main gemm_main  // the program's main, renamed: this file's main runs the cases
#include "09_gemm/gemm.cu"
#undef main
#include "tests/unit_expect.h"
#include "tests/unit_framed.h"

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

int main(void) {
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

    free(want);
    free(got);
    return UNIT_RESULT();
}
