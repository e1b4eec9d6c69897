// Step 07's split-K check, compiled from 07_reduce_multicast/reduce_multicast.cu
// itself and fed wrong sums on the CPU (no GPU). The check accepts an f32 sum
// within a bound of the exact (double) sum; a bound widened until it accepts
// anything would pass every GPU run, and fails here. Built and run by
// tests/test_tutorial_host.py::test_reduce_host_checks.
#define main reduce_main  // the program's main, renamed: this file's main runs the cases
#include "07_reduce_multicast/reduce_multicast.cu"
#undef main
#include "tests/unit_expect.h"

#define N 4096

int main(void) {
    static float init[N], in_order[N];
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
    return UNIT_RESULT();
}
