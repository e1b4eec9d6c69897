"""common/cli.h's command line, compiled and run on the CPU: what --quick changes (the defaults: small
sizes, 2 timed runs, 1 warm-up) and what it leaves alone (an option given beside it, in either order).
The programs' refusals (exit 2 naming the rule) are tests/test_exit_codes.py's."""

from conftest import run_unit


def test_quick_changes_only_the_defaults(tmp_path):
    p = run_unit("tests/unit_cli.cu", tmp_path)
    passed = {ln.split()[1] for ln in p.stdout.splitlines() if ln.startswith("ok ")}
    assert {"defaults", "quick_defaults", "quick_keeps_a_given_reps", "quick_keeps_a_given_reps_in_either_order",
            "quick_keeps_a_given_size", "reps_without_quick"} <= passed, p.stdout
