// Host-side unit tests of common/tutorial.cuh (no GPU: functions that make no
// CUDA call, and a part's poison, readback and check on host memory standing in
// for the device's, tests/unit_fake_device.h). Built and run by
// tests/test_tutorial_host.py. Prints one line per case, "ok NAME" or
// "FAIL NAME: why", and exits 1 on any failure.
#include "tests/unit_fake_device.h"  // before the harness: its poisons and readbacks act on host memory
#include "common/tutorial.cuh"
#include "tests/unit_expect.h"

int main(void) {
    float odd[] = {5.f, 1.f, 3.f}, even[] = {4.f, 1.f, 3.f, 2.f};
    EXPECT("median_odd", median_of(odd, 3) == 3.f);
    EXPECT("median_even", median_of(even, 4) == 2.5f);

    enum { N = 1 << 20 };
    uint32_t* want = (uint32_t*)malloc(N * sizeof(uint32_t));
    uint32_t* got = (uint32_t*)malloc(N * sizeof(uint32_t));
    fill_seeded_words(want, N, 7);
    int poison_free = 1, neighbours_differ = 1;
    for (size_t i = 0; i < N; ++i) {
        poison_free &=
            want[i] != POISON_WORD && (want[i] & ~SEEDED_MASK) == 0;  // the mask the proof rests on
        if (i) neighbours_differ &= want[i] != want[i - 1];
    }
    EXPECT("fill_never_poison", poison_free);
    // The poison must be the byte repeated (cudaMemset writes bytes), and not
    // zero: a TMA zero-fills out-of-bounds elements, which poison 0 would hide.
    EXPECT("poison_word_is_the_byte", POISON_WORD == 0x01010101u * POISON_BYTE && POISON_BYTE != 0);
    EXPECT("fill_neighbours_differ", neighbours_differ);
    uint32_t other[4];
    fill_seeded_words(other, 4, 8);
    EXPECT("fill_seed_matters", memcmp(other, want, sizeof other) != 0);
    // Every float a seeded word can give (2^24 values of k = w >> 7): never
    // the poison, never NaN, inside [-1, 1). A proof by trying them all.
    int floats_ok = 1;
    for (uint32_t k = 0; k < (1u << 24); ++k) {
        const float f = seeded_float(k << 7);
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        floats_ok &= bits != POISON_WORD && f == f && f >= -1.0f && f < 1.0f;
    }
    EXPECT("fill_floats_never_poison_every_k", floats_ok);

    // The comparator, against the three ways a copy goes wrong.
    memcpy(got, want, N * sizeof(uint32_t));
    EXPECT("compare_equal", check_words("unit_equal", got, want, N) == 0);
    got[12345] = want[12346];  // a wrong index
    EXPECT("compare_wrong_index", check_words("unit_wrong_index", got, want, N) == 1);
    memcpy(got, want, N * sizeof(uint32_t));
    got[N - 1] = POISON_WORD;  // a missing (never written) element
    EXPECT("compare_missing", check_words("unit_missing", got, want, N) == 1);
    memset(got, POISON_BYTE, N * sizeof(uint32_t));  // nothing written
    EXPECT("compare_nothing", check_words("unit_nothing", got, want, N) == N);
    // A part whose bounded wait gave up fails with nothing wrong in its output: its data may be late.
    EXPECT("hung_part_fails", report_check_hung("unit_hung", 0, 1, "a wait gave up (unit test)") == 1);
    EXPECT("failed_checks_counted", g_checks_failed == 4);
    EXPECT("result_line_fails_with_them", print_result() == EXIT_WRONG);
    g_checks_failed = 0;
    EXPECT("result_line_passes_without", print_result() == EXIT_PASS);

    // CHECK_AND_TIME, the usual part: poison the output, run, check. A part that writes nothing after
    // one that wrote the right answer must fail, every word never written.
    enum { PART = 64 };
    uint32_t* out = (uint32_t*)malloc(PART * sizeof(uint32_t));  // "device" memory
    const Cli* untimed = NULL;
    CHECK_AND_TIME("unit_part_right", untimed, 0, out, want, PART, 0, memcpy(out, want, PART * 4));
    CHECK_AND_TIME("unit_part_writes_nothing", untimed, 0, out, want, PART, 0, (void)0);
    EXPECT("each_part_poisoned_first", g_checks_failed == 1 && out[0] == POISON_WORD);
    g_checks_failed = 0;
    free(out);

    free(want);
    free(got);
    return UNIT_RESULT();
}
