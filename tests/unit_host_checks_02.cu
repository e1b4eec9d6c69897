// Step 02's own host-side reference, compiled from 02_cp_async/cp_async.cu
// itself and fed on the CPU (nothing here launches): poly_cpu, against which
// every poly_* part is checked bit for bit, is Horner's rule from x with one
// rounding per step (fmaf), as the kernels' __fmaf_rn does; a reference that
// rounded the product and the sum apart would disagree with a correct kernel,
// and one that agreed with that would let a kernel that lost its fusion pass.
// Built and run by tests/test_tutorial_host.py.
#define main cp_async_main  // the program's main, renamed: this file's main runs the cases
#include "02_cp_async/cp_async.cu"
#undef main
#include "tests/unit_expect.h"

int main(void) {
    float c[MAX_DEGREE];
    for (int k = 0; k < MAX_DEGREE; ++k) c[k] = (k % 2 ? -1.0f : 1.0f) / (float)(k + 2);  // the program's
    EXPECT("degree_0_is_the_identity", poly_cpu(0.375f, 0, c) == 0.375f && poly_cpu(-1.0f, 0, c) == -1.0f);
    // x = 1/2, c = {1/2, -1/3}: 1/2 * 1/2 + 1/2 = 3/4 (exact), then 3/4 * 1/2 - 1/3, rounded once.
    EXPECT("degree_2_by_hand", poly_cpu(0.5f, 2, c) == fmaf(0.75f, 0.5f, c[1]));
    EXPECT("coefficients_in_order", poly_cpu(0.5f, 2, c) != fmaf(fmaf(0.5f, 0.5f, c[1]), 0.5f, c[0]));
    // One rounding per step: over inputs in [-1, 1), some differ from the same steps rounded twice.
    int differ = 0;
    for (int i = 0; i < 4096; ++i) {
        const float x = -1.0f + (float)i / 2048.0f;
        volatile float acc = x;  // volatile: each product and sum rounded to float on its own
        for (int k = 0; k < 8; ++k) {
            volatile float prod = acc * x;
            acc = prod + c[k];
        }
        differ += poly_cpu(x, 8, c) != acc;
    }
    EXPECT("one_rounding_per_step", differ > 0);
    return UNIT_RESULT();
}
