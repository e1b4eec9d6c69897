"""The harness (common/), as a learner meets it: small enough to read in one sitting, and the command
line's rule, compiled and run on the CPU: what --quick changes (the defaults: small sizes, 2 timed runs,
1 warm-up) and what it leaves alone (an option given beside it, in either order). The programs' refusals
(exit 2 naming the rule) are tests/test_exit_codes.py's; the rest of the harness, test_tutorial_host.py's."""

from conftest import REPO, run_unit

# common/tutorial.cuh was 762 lines before the steps took their parts back, and must not grow again.
HARNESS_LINES = 520


def test_the_harness_reads_in_one_sitting():
    lines = len((REPO / "common" / "tutorial.cuh").read_text().splitlines())
    assert lines < HARNESS_LINES, f"common/tutorial.cuh has {lines} lines: keep it under {HARNESS_LINES}"


def test_quick_changes_only_the_defaults(tmp_path):
    p = run_unit("tests/unit_cli.cu", tmp_path)
    passed = {ln.split()[1] for ln in p.stdout.splitlines() if ln.startswith("ok ")}
    assert {"defaults", "quick_defaults", "quick_keeps_a_given_reps", "quick_keeps_a_given_reps_in_either_order",
            "quick_keeps_a_given_size", "reps_without_quick"} <= passed, p.stdout
