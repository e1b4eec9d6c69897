// Step 08's own host-side plan and checks, compiled from
// 08_descriptor_update/descriptor_update.cu itself and checked on the CPU
// (nothing here launches): make_groups lays out groups that a TMA map can
// describe (16-byte aligned starts and row strides, rows of whole 16-byte
// chunks), that never overlap (a copy into a wrong group cannot pass), and
// whose items cover every box exactly once (a box never copied stays poison, a
// box copied twice is not the lesson's). A part (COPY_PART) re-poisons the
// destination pool before it runs: a part that copies nothing cannot pass on
// the output of the part before it; cross_cta's part, run whole (its
// allocation and cooperative launch faked, tests/unit_fake_device.h), does the
// same. And a field probe's check compares the device-edited map's box with the
// host map's, and refuses a probe whose host box is the template's (a check
// that could not fail). The pools are host memory here; a part's "launch" is a
// host copy. Built and run by tests/test_tutorial_host.py.
#include <sys/wait.h>
#include <unistd.h>

#define UNIT_FAKE_PARTS              // cross_cta's allocation and cooperative launch: host memory, no launch
#include "tests/unit_fake_device.h"  // before the program: its poisons and readbacks act on host memory
#define main descriptor_update_main  // the program's main, renamed: this file's main runs the cases
#include "08_descriptor_update/descriptor_update.cu"
#undef main
#include "tests/unit_expect.h"

// A part's work on the host: the first `groups` groups of the source copied into the destination
// pool, row by row, exactly where they belong (c->want holds what a right copy leaves).
static void host_copy(const Copy* c, uint32_t groups) {
    for (uint32_t g = 0; g < groups; ++g) {
        const Group* gr = &c->gs->groups[g];
        for (uint32_t r = 0; r < gr->rows; ++r)
            memcpy(c->dst + gr->offset + (size_t)r * gr->ld, c->want + gr->offset + (size_t)r * gr->ld,
                   gr->cols * 4);
    }
}

// cross_cta's work on the host, after the pool's poison: its first g_copy_groups groups copied.
static const Copy* g_copy = NULL;
static uint32_t g_copy_groups = 0;
static void cross_cta_on_host(void* p, size_t) {
    if (g_copy && p == g_copy->dst) host_copy(g_copy, g_copy_groups);
}

// A field probe's readback (the device-edited map's box, then the host map's) and the template's box.
static void field_cases(void) {
    static uint32_t got[2 * PROBE_WORDS], tbox[PROBE_WORDS];
    for (uint32_t i = 0; i < PROBE_WORDS; ++i) {
        got[i] = got[PROBE_WORDS + i] = seeded_word(21, i);
        tbox[i] = seeded_word(22, i);
    }
    g_checks_failed = 0;
    check_field("unit_field_right", got, tbox);
    EXPECT("field_right_passes", g_checks_failed == 0);
    got[100] ^= 1;  // one word of the device-edited box differs from the host's
    char counted[64];
    snprintf(counted, sizeof counted, "FAIL  (1 of %d wrong)", PROBE_WORDS);
    UNIT_CAPTURE(check_field("unit_field_one_word", got, tbox));
    EXPECT("field_one_word_found", g_checks_failed == 1 && unit_printed_has(counted));
    memcpy(got, tbox, sizeof tbox);  // the edit never happened: the device box is the template's
    snprintf(counted, sizeof counted, "FAIL  (%d of %d wrong)", PROBE_WORDS, PROBE_WORDS);
    UNIT_CAPTURE(check_field("unit_field_not_edited", got, tbox));
    EXPECT("field_not_edited_found", g_checks_failed == 2 && unit_printed_has(counted));
    // A probe whose host map loads the template's box could not fail: the program stops (exit 2).
    memcpy(got + PROBE_WORDS, tbox, sizeof tbox);
    fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
        freopen("/dev/null", "w", stderr);
        check_field("unit_field_cannot_fail", got, tbox);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT("field_that_cannot_fail_refused", WIFEXITED(status) && WEXITSTATUS(status) == 2);
}

static void check_set(const char* name, const GroupSet* gs) {
    bool aligned = true, apart = true, inside = true;
    uint64_t bytes = 0;
    for (uint32_t g = 0; g < gs->ngroups; ++g) {
        const Group* gr = &gs->groups[g];
        aligned &= gr->offset % 4 == 0 && gr->ld % 4 == 0 && gr->cols % 4 == 0 && gr->ld >= gr->cols + 4;
        const uint64_t end = gr->offset + (uint64_t)(gr->rows - 1) * gr->ld + gr->cols;
        inside &= end <= gs->pool_words;
        if (g + 1 < gs->ngroups) apart &= end < gs->groups[g + 1].offset;
        bytes += (uint64_t)gr->rows * gr->cols * 4;
    }
    // Every box of every group in exactly one item.
    bool covered = true;
    for (uint32_t g = 0; g < gs->ngroups && covered; ++g) {
        uint32_t* seen = (uint32_t*)calloc(gs->groups[g].boxes, 4);
        for (uint32_t i = 0; i < gs->nitems; ++i) {
            const Item* it = &gs->items[i];
            if (it->group != g) continue;
            covered &= it->nboxes >= 1 && it->nboxes <= ITEM_BOXES &&
                       it->first_box + it->nboxes <= gs->groups[g].boxes;
            for (uint32_t b = it->first_box; covered && b < it->first_box + it->nboxes; ++b) ++seen[b];
        }
        for (uint32_t b = 0; b < gs->groups[g].boxes; ++b) covered &= seen[b] == 1;
        free(seen);
    }
    char what[96];
    snprintf(what, sizeof what, "%s_aligned", name);
    EXPECT(what, aligned);
    snprintf(what, sizeof what, "%s_apart", name);
    EXPECT(what, apart && inside);
    snprintf(what, sizeof what, "%s_items_cover_every_box_once", name);
    EXPECT(what, covered);
    snprintf(what, sizeof what, "%s_data_bytes", name);
    EXPECT(what, bytes == gs->data_bytes);
}

int main(void) {
    GroupSet gs;
    make_groups(&gs, 64, 2048, 2048, 1, false);  // the program's grouped copy at its defaults
    check_set("grouped", &gs);
    make_groups(&gs, 8, 200, 256, 1, false);  // at --quick
    check_set("quick", &gs);
    make_groups(&gs, 7, 33, 9, 5, false);  // small and odd: a column count rounded to whole chunks
    check_set("odd", &gs);
    make_groups(&gs, 64, 1024, 1024, 2,
                true);  // the array case at the defaults: one shape, only the address differs
    check_set("same_shape", &gs);
    bool one_shape = true;
    for (uint32_t g = 1; g < gs.ngroups; ++g)
        one_shape &= gs.groups[g].rows == gs.groups[0].rows && gs.groups[g].ld == gs.groups[0].ld &&
                     gs.groups[g].cols == gs.groups[0].cols;
    EXPECT("same_shape_one_shape", one_shape);

    // Two parts on one destination pool: the first copies every group, the second all but the
    // last. The second must fail with exactly the last group's words wrong (never written).
    make_groups(&gs, 7, 33, 9, 5, false);
    Copy c;
    memset(&c, 0, sizeof c);
    c.gs = &gs;
    c.dst = (float*)xmalloc(gs.pool_words * 4, "the destination pool");
    c.want = (uint32_t*)xmalloc(gs.pool_words * 4, "the expected pool");
    for (size_t i = 0; i < gs.pool_words; ++i) c.want[i] = POISON_WORD;
    for (uint32_t g = 0; g < gs.ngroups; ++g)
        for (uint32_t r = 0; r < gs.groups[g].rows; ++r)
            for (uint32_t j = 0; j < gs.groups[g].cols; ++j) {
                const size_t at = gs.groups[g].offset + (size_t)r * gs.groups[g].ld + j;
                c.want[at] = seeded_word(11, at);
            }
    const Cli* untimed = NULL;
    g_checks_failed = 0;
    const int poisons = unit_poisons;
    COPY_PART("unit_every_group", &c, untimed, host_copy(&c, gs.ngroups));
    EXPECT("right_part_passes", g_checks_failed == 0 && unit_poisons == poisons + 1);
    const Group* last = &gs.groups[gs.ngroups - 1];
    char counted[64];
    snprintf(counted, sizeof counted, "FAIL  (%u of %zu wrong)", last->rows * last->cols, gs.pool_words);
    UNIT_CAPTURE(COPY_PART("unit_a_group_left_out", &c, untimed, host_copy(&c, gs.ngroups - 1)));
    EXPECT("next_part_repoisoned", g_checks_failed == 1 && unit_poisons == poisons + 2);
    EXPECT("left_out_group_counted",
           unit_printed_has(counted) && unit_printed_has("(poison: never written)"));

    // cross_cta's part, run whole: its pool poisoned before its launch, so after a run that copied every
    // group, one that copies all but the last fails with exactly that group's words never written.
    g_copy = &c;
    unit_on_poison = cross_cta_on_host;
    g_copy_groups = gs.ngroups;
    g_checks_failed = 0;
    part_cross_cta(&c);
    EXPECT("cross_cta_right_passes", g_checks_failed == 0);
    g_copy_groups = gs.ngroups - 1;
    snprintf(counted, sizeof counted, "FAIL  (%u of %zu wrong)", last->rows * last->cols, gs.pool_words);
    UNIT_CAPTURE(part_cross_cta(&c));
    EXPECT("cross_cta_repoisoned",
           g_checks_failed == 1 && unit_printed_has(counted) && unit_printed_has("(poison: never written)"));
    unit_on_poison = NULL;
    free(c.dst);
    free(c.want);

    field_cases();
    return UNIT_RESULT();
}
