// Step 03's own host-side check, compiled from 03_tma_load/tma_load.cu itself
// and fed wrong positions on the CPU (nothing here launches): expected_word,
// the value every loaded element must hold, is its row-major index inside
// the matrix and 0 (the out-of-bounds fill) outside it on every side, so that
// a box loaded one row or column off, or a fill that is not zero, cannot pass.
// Built and run by tests/test_tutorial_host.py.
#define main tma_load_main  // the program's main, renamed: this file's main runs the cases
#include "03_tma_load/tma_load.cu"
#undef main
#include "tests/unit_expect.h"

int main(void) {
    const uint64_t rows = 100, cols = 36;
    EXPECT("inside_is_index", expected_word(0, 0, rows, cols) == 0u &&
                                  expected_word(1, 0, rows, cols) == 36u &&
                                  expected_word(99, 35, rows, cols) == 99u * 36u + 35u);
    EXPECT("neighbours_differ", expected_word(5, 6, rows, cols) != expected_word(6, 5, rows, cols) &&
                                    expected_word(5, 6, rows, cols) != expected_word(5, 7, rows, cols));
    // Every side of the matrix, one step out: the fill, 0.
    EXPECT("left_is_fill", expected_word(10, -1, rows, cols) == 0u);
    EXPECT("top_is_fill", expected_word(-1, 10, rows, cols) == 0u);
    EXPECT("right_is_fill", expected_word(10, 36, rows, cols) == 0u);
    EXPECT("bottom_is_fill", expected_word(100, 10, rows, cols) == 0u);
    EXPECT("corner_is_fill",
           expected_word(-8, -8, rows, cols) == 0u && expected_word(100, 36, rows, cols) == 0u);
    // A box shifted by one row or column, element by element: every element differs from the right one
    // (only element (0, 0) codes 0, so the fill and the first element are the one ambiguity).
    size_t same = 0;
    for (int64_t r = 0; r < (int64_t)rows; ++r)
        for (int64_t c = 0; c < (int64_t)cols; ++c)
            same += expected_word(r, c, rows, cols) == expected_word(r, c + 1, rows, cols) ||
                    expected_word(r, c, rows, cols) == expected_word(r + 1, c, rows, cols);
    EXPECT("shift_by_one_never_matches", same == 0);
    return UNIT_RESULT();
}
