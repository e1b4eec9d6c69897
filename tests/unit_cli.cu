// Host-side unit test of common/cli.h's parse_cli: what --quick changes and what it leaves alone. The rule:
// --quick changes defaults only (small sizes, 2 timed runs, 1 warm-up); an option given beside it, in
// either order, keeps its value. Built and run by tests/test_harness.py; one line per case, "ok NAME" or
// "FAIL NAME: why", and exit 1 on any failure.
#include "common/tutorial.cuh"
#include "tests/unit_expect.h"

static const IntOption kRows = {"--rows", "N", "rows of the test matrix", 1, 1 << 20, 4096, 64};
static const CliSpec kSpec = {"unit_cli: parse_cli's defaults", CLI_REPS | CLI_SEED, &kRows, 1, NULL};

// parse_cli on a command line of up to 4 words after the program's name.
static Cli parse(const char* a0 = NULL, const char* a1 = NULL, const char* a2 = NULL, const char* a3 = NULL) {
    const char* words[] = {"unit_cli", a0, a1, a2, a3};
    int argc = 1;
    while (argc < 5 && words[argc]) ++argc;
    return parse_cli(argc, (char**)words, &kSpec);
}

int main(void) {
    const Cli plain = parse();
    EXPECT("defaults", !plain.quick && plain.reps == 20 && plain.warmup == 3 && plain.value[0] == 4096);
    const Cli quick = parse("--quick");
    EXPECT("quick_defaults", quick.quick && quick.reps == 2 && quick.warmup == 1 && quick.value[0] == 64);
    const Cli reps_after = parse("--quick", "--reps", "5");
    EXPECT("quick_keeps_a_given_reps",
           reps_after.reps == 5 && reps_after.warmup == 1 && reps_after.value[0] == 64);
    const Cli reps_before = parse("--reps=5", "--quick");
    EXPECT("quick_keeps_a_given_reps_in_either_order", reps_before.reps == 5 && reps_before.value[0] == 64);
    const Cli rows = parse("--quick", "--rows", "128");
    EXPECT("quick_keeps_a_given_size", rows.value[0] == 128 && rows.reps == 2);
    const Cli reps_alone = parse("--reps", "7");
    EXPECT("reps_without_quick",
           reps_alone.reps == 7 && reps_alone.warmup == 3 && reps_alone.value[0] == 4096);
    return UNIT_RESULT();
}
