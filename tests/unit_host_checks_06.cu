// Step 06's own host-side check, compiled from 06_transpose/transpose.cu itself
// and fed wrong outputs on the CPU (nothing here launches): tma_store_tail
// excuses, in a TMA part, exactly the words a TMA store writes past a row of
// the output (zeros in the row's last 16-byte chunk, the load's fill) and
// restores them to poison; any other value there, any zero elsewhere, stays
// for check_words to report. Built and run by tests/test_tutorial_host.py.
#define main transpose_main  // the program's main, renamed: this file's main runs the cases
#include "06_transpose/transpose.cu"
#undef main
#include "tests/unit_expect.h"
#include "tests/unit_framed.h"

int main(void) {
    // A 5 x 3 input: its transpose is 3 rows of 5 words, each ending inside a 16-byte chunk (3 words
    // of tail per row, 9 in all).
    Transpose t;
    memset(&t, 0, sizeof t);
    t.rows = 5, t.cols = 3, t.ld_out = output_ld(5);
    uint32_t* got;
    uint32_t* want = framed_want(t.cols, t.rows, t.ld_out, 1000u, &t.framed_words, &got);
    const size_t tail0 = (size_t)FRAME * t.ld_out + FRAME + t.rows;  // output row 0's first word past it

    memcpy(got, want, t.framed_words * 4);
    fill_tails(got, t.cols, t.rows, t.ld_out, 0u);
    EXPECT("tail_zeros_counted", tma_store_tail(got, &t) == 9);
    EXPECT("tail_zeros_restored", check_words("unit_tail_zeros", got, want, t.framed_words) == 0);

    memcpy(got, want, t.framed_words * 4);
    got[tail0] = 7u;  // not what the store's box holds there
    EXPECT("tail_value_not_excused",
           tma_store_tail(got, &t) == 0 && check_words("unit_tail_value", got, want, t.framed_words) == 1);

    memcpy(got, want, t.framed_words * 4);
    got[tail0 + 3] = 0u;  // one past the chunk: the guard frame
    EXPECT("frame_zero_not_excused",
           tma_store_tail(got, &t) == 0 && check_words("unit_frame_zero", got, want, t.framed_words) == 1);

    memcpy(got, want, t.framed_words * 4);
    got[(FRAME + 2) * t.ld_out + FRAME + 4] = 0u;  // an element of the transpose itself
    EXPECT("interior_zero_reported",
           tma_store_tail(got, &t) == 0 && check_words("unit_interior_zero", got, want, t.framed_words) == 1);
    free(want);
    free(got);
    return UNIT_RESULT();
}
