// Step 10's check of a batch (check_batch), compiled from 10_grouped_gemm/grouped_gemm.cu
// itself and fed wrong outputs on the CPU: the framed output is host memory
// (tests/unit_fake_device.h), read back and compared word for word with the
// batch's expected output, and on a failure the check says how many experts
// are wrong (a stale map shows as whole experts) and how many words were
// written outside C (frame and row padding). Nothing here launches. Built and
// run by tests/test_tutorial_host.py::test_grouped_gemm_host_checks.
#include "tests/unit_fake_device.h"  // before the program: its readbacks act on host memory
#define main grouped_main            // the program's main, renamed: this file's main runs the cases
#include "10_grouped_gemm/grouped_gemm.cu"
#undef main
#include "tests/unit_expect.h"

static Problem q;  // large: off the stack

// Word (row, col) of C in the framed output, row counted over every expert's rows.
static size_t at(uint32_t row, uint32_t col) {
    return (size_t)(FRAME + row) * q.ldc + FRAME + col;
}

static size_t checked(const char* name) {
    size_t wrong = 0;
    UNIT_CAPTURE(wrong = check_batch(&q, name));
    return wrong;
}

int main(void) {
    // Batch 0: 4 experts of 3, 0, 4 and 1 rows (8 in all), N = 6: each row of C ends inside a
    // 16-byte chunk, so two padding words follow it. Batch 1 (the other buffer set): 2 experts.
    const uint32_t rows0[] = {0, 3, 3, 7, 8}, rows1[] = {0, 5, 8};
    q.experts_of[BATCH_0] = 4, q.experts_of[BATCH_1] = 2;
    memcpy(q.host[BATCH_0].first_row, rows0, sizeof rows0);
    memcpy(q.host[BATCH_1].first_row, rows1, sizeof rows1);
    q.total = 8, q.n = 6, q.ldc = output_ld(q.n);
    q.framed_words = (size_t)(q.total + 2 * FRAME) * q.ldc;
    for (int set = 0; set < 2; ++set) q.out[set] = (float*)xmalloc(q.framed_words * 4, "an output");
    for (int i = BATCH_0; i <= BATCH_1; ++i) {
        q.want[i] = (uint32_t*)xmalloc(q.framed_words * 4, "an expected output");
        for (size_t w = 0; w < q.framed_words; ++w) q.want[i][w] = POISON_WORD;
        for (uint32_t r = 0; r < q.total; ++r)
            for (uint32_t j = 0; j < q.n; ++j) q.want[i][at(r, j)] = seeded_word(100 + i, at(r, j));
    }
    float* const out = q.out[set_of(BATCH_0)];
    uint32_t* const got = (uint32_t*)out;
    q.batch = BATCH_0;

    memcpy(out, q.want[BATCH_0], q.framed_words * 4);
    EXPECT("right_answer_passes", checked("unit_right") == 0 && !unit_printed_has("wrong in"));

    // Expert 2's rows hold an older batch's C (a stale map): every word of it, one expert.
    for (uint32_t r = 3; r < 7; ++r)
        for (uint32_t j = 0; j < q.n; ++j) got[at(r, j)] = q.want[BATCH_1][at(r, j)];
    EXPECT("stale_expert_counted", checked("unit_stale_expert") == 4 * 6 &&
                                       unit_printed_has("wrong in 1 of 4 experts; 0 words written"));

    // A word of the row padding right after C, and one of the frame: outside C, no expert.
    memcpy(out, q.want[BATCH_0], q.framed_words * 4);
    got[at(2, q.n)] = 0u;
    got[q.ldc + 5] = 0u;
    EXPECT("words_outside_c_counted",
           checked("unit_outside") == 2 &&
               unit_printed_has("wrong in 0 of 4 experts; 2 words written outside C"));

    // One word of expert 0, one of expert 3 (the last row) and one in the guard rows under C.
    memcpy(out, q.want[BATCH_0], q.framed_words * 4);
    got[at(0, 0)] ^= 1u;
    got[at(7, 5)] ^= 1u;
    got[at(8, 1)] = 0u;
    EXPECT("experts_and_outside_apart",
           checked("unit_two_experts") == 3 &&
               unit_printed_has("wrong in 2 of 4 experts; 1 words written outside C"));

    // Never written at all: every word of C wrong, in every expert with rows (not expert 1).
    memset(out, POISON_BYTE, q.framed_words * 4);
    EXPECT("never_written_counted", checked("unit_never_written") == 8 * 6 &&
                                        unit_printed_has("wrong in 3 of 4 experts; 0 words written"));

    // Batch 1 is checked in its own buffer set, against its own expected output.
    q.batch = BATCH_1;
    memcpy(q.out[set_of(BATCH_1)], q.want[BATCH_1], q.framed_words * 4);
    EXPECT("other_set_passes", checked("unit_batch_1") == 0);
    q.out[set_of(BATCH_1)][at(4, 2)] = 1.0f;
    EXPECT("other_set_expert_counted", checked("unit_batch_1_wrong") == 1 &&
                                           unit_printed_has("wrong in 1 of 2 experts; 0 words written"));

    for (int i = 0; i < 2; ++i) free(q.out[i]);
    for (int i = BATCH_0; i <= BATCH_1; ++i) free(q.want[i]);
    return UNIT_RESULT();
}
