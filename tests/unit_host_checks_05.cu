// Step 05's own host-side judges, compiled from 05_swizzle/swizzle.cu itself
// and fed layouts built on the CPU (nothing here launches): `misplaced`, which
// counts the elements the TMA put anywhere but where the swizzle formula says,
// is 0 for the formula's own layout in every mode and counts exactly the
// elements moved in a wrong one; `conflict_degree`, the bank-conflict model
// every bank pattern is judged by, gives 1 for a row of consecutive words and
// for a broadcast, 32 for a column of a 128-byte-pitch tile, 2 for a 2-way
// pattern. Built and run by tests/test_tutorial_host.py.
#define main swizzle_main  // the program's main, renamed: this file's main runs the cases
#include "05_swizzle/swizzle.cu"
#undef main
#include "tests/unit_expect.h"

// The layout the formula predicts: a rows x cols box of esize-byte elements at
// absolute base `abs_base`, each element's index written where it lands.
static Layout formula_layout(int mode, uint32_t esize, uint32_t rows, uint32_t cols, uint32_t abs_base) {
    const uint32_t region = rows * cols * esize, slots = region / esize;
    Layout L = {mode, esize, 0, rows, cols, region, abs_base, (int64_t*)malloc(slots * sizeof(int64_t))};
    for (uint32_t p = 0; p < slots; ++p) L.logical_at[p] = -1;
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < cols; ++c)
            L.logical_at[swizzle_element(abs_base, mode, r, c, esize, cols * esize)] =
                (int64_t)(r * cols + c);
    return L;
}

int main(void) {
    // Every mode, its widest box row (the span: 32, 64, 128 bytes; 128 unswizzled), 2- and 4-byte elements.
    int exact = 1;
    for (int mode = 0; mode < 4; ++mode)
        for (uint32_t esize = 2; esize <= 4; esize += 2) {
            const uint32_t span = mode ? 16u << mode : 128u;
            Layout L = formula_layout(mode, esize, 16, span / esize, 1024);
            exact &= misplaced(&L, 0, 0) == 0;
            free(L.logical_at);
        }
    EXPECT("formula_layout_has_none_misplaced", exact);
    Layout L = formula_layout(3, 4, 16, 32, 1024);
    const int64_t t = L.logical_at[5];
    L.logical_at[5] = L.logical_at[77], L.logical_at[77] = t;  // two elements swapped
    EXPECT("two_swapped_counted", misplaced(&L, 0, 0) == 2);
    L.logical_at[77] = L.logical_at[5], L.logical_at[5] = -1;  // one lost (nothing landed there)
    EXPECT("one_lost_counted", misplaced(&L, 0, 0) >= 1);
    free(L.logical_at);
    Layout other = formula_layout(2, 4, 16, 32, 1024);  // 64B's formula over 128-byte rows, judged as 128B's
    other.mode = 3;
    EXPECT("wrong_mode_caught", misplaced(&other, 0, 0) > 0);
    free(other.logical_at);
    // Relative to the buffer against absolute: the same layout at a base that is no multiple of the
    // pattern's span (1024 B for 128B) differs from what base 0 predicts.
    Layout off = formula_layout(3, 4, 16, 32, 1024 + 256);
    EXPECT("absolute_base_matters", misplaced(&off, 0, 0) == 0 && misplaced(&off, 1, 0) > 0);
    free(off.logical_at);

    uint32_t a[32];
    for (int i = 0; i < 32; ++i) a[i] = 4u * i;
    EXPECT("row_of_words_conflict_free", conflict_degree(a, 32) == 1);
    for (int i = 0; i < 32; ++i) a[i] = 128u * i;
    EXPECT("column_of_128B_rows_32_way", conflict_degree(a, 32) == 32);
    for (int i = 0; i < 32; ++i) a[i] = 64u;
    EXPECT("broadcast_free", conflict_degree(a, 32) == 1);
    for (int i = 0; i < 32; ++i) a[i] = 8u * i;
    EXPECT("stride_2_words_2_way", conflict_degree(a, 32) == 2);
    for (int i = 0; i < 32; ++i) a[i] = swizzle_address(128u * i + 0u, 3);  // 128B: a column, 8 rows a period
    EXPECT("swizzled_column_4_way", conflict_degree(a, 32) == 4);
    return UNIT_RESULT();
}
