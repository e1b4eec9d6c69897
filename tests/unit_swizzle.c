/* 05_swizzle/swizzle.h compiled as plain C (no CUDA): for each case on stdin,
 * "mode elem_bytes abs_base rows cols region", prints one line with the logical
 * element index swizzle.h puts at each physical element of the region the box
 * covers in shared memory (-1 where none). tests/test_swizzle.py compares it
 * with the H200 recording. */
#include <stdio.h>
#include <stdlib.h>

#include "05_swizzle/swizzle.h"

int main(void) {
    int mode;
    unsigned esize, base, rows, cols, region;
    while (scanf("%d %u %u %u %u %u", &mode, &esize, &base, &rows, &cols, &region) == 6) {
        const unsigned slots = region / esize;
        long* at = (long*)malloc(slots * sizeof(long));
        for (unsigned p = 0; p < slots; ++p) at[p] = -1;
        for (unsigned r = 0; r < rows; ++r)
            for (unsigned c = 0; c < cols; ++c) {
                const unsigned p = swizzle_element(base, mode, r, c, esize, cols * esize);
                if (p < slots) at[p] = (long)(r * cols + c);
            }
        for (unsigned p = 0; p < slots; ++p) printf("%s%ld", p ? " " : "", at[p]);
        printf("\n");
        free(at);
    }
    return 0;
}
