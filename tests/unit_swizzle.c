/* 05_swizzle/swizzle.h compiled as plain C (no CUDA): for each case on stdin,
 * "mode elem_bytes abs_base rows cols", prints one line with the logical
 * element index swizzle.h puts at each physical position of the box.
 * tests/test_swizzle.py compares it with the H200 recording. */
#include <stdio.h>
#include <stdlib.h>

#include "05_swizzle/swizzle.h"

int main(void) {
    int mode;
    unsigned esize, base, rows, cols;
    while (scanf("%d %u %u %u %u", &mode, &esize, &base, &rows, &cols) == 5) {
        const unsigned n = rows * cols;
        long* at = (long*)malloc(n * sizeof(long));
        for (unsigned p = 0; p < n; ++p) at[p] = -1;
        for (unsigned r = 0; r < rows; ++r)
            for (unsigned c = 0; c < cols; ++c) {
                const unsigned p = swizzle_element(base, mode, r, c, esize, cols * esize);
                if (p < n) at[p] = (long)(r * cols + c);
            }
        for (unsigned p = 0; p < n; ++p) printf("%s%ld", p ? " " : "", at[p]);
        printf("\n");
        free(at);
    }
    return 0;
}
