// Step 04's own host-side input, compiled from 04_tma_store/tma_store.cu
// itself and checked on the CPU (nothing here launches): input_word, the
// value each element starts as, must be one-to-one (a box stored one column
// or row off cannot pass), stay below 2^31 so that +1 is never the poison
// nor the guard word, and never be the next element's word minus one (so
// "plus one" cannot be mistaken for "the next element").
// Built and run by tests/test_tutorial_host.py.
#define main tma_store_main  // the program's main, renamed: this file's main runs the cases
#include "04_tma_store/tma_store.cu"
#undef main
#include "tests/unit_expect.h"

#include <stdlib.h>

static int cmp_u32(const void* a, const void* b) {
    const uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
    return x < y ? -1 : x > y;
}

int main(void) {
    enum { N = 1 << 20 };
    uint32_t* w = (uint32_t*)malloc(N * sizeof(uint32_t));
    int small = 1, plus_one_safe = 1, not_next = 1;
    for (uint64_t i = 0; i < N; ++i) {
        w[i] = input_word(i);
        small &= w[i] < (1u << 31);
        plus_one_safe &= w[i] + 1u != POISON_WORD && w[i] + 1u != GUARD_WORD;
        if (i > 0) not_next &= w[i - 1] + 1u != w[i] && w[i] + 1u != w[i - 1];
    }
    EXPECT("below_2_to_31", small);
    EXPECT("plus_one_never_poison_or_guard", plus_one_safe);
    EXPECT("plus_one_is_not_the_neighbour", not_next);
    // A row of 1024 elements apart: the words one row down differ too.
    int rows_differ = 1;
    for (uint64_t i = 0; i + 1024 < N; i += 97) rows_differ &= input_word(i) + 1u != input_word(i + 1024);
    EXPECT("plus_one_is_not_the_next_row", rows_differ);
    qsort(w, N, sizeof(uint32_t), cmp_u32);
    int distinct = 1;
    for (uint64_t i = 1; i < N; ++i) distinct &= w[i] != w[i - 1];
    EXPECT("one_to_one", distinct);
    free(w);
    return UNIT_RESULT();
}
