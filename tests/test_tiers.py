"""The two tiers of this suite (tests/conftest.py): `make test` runs the fast one, `make test-all` (CI)
everything. The fast tier is chosen by data, FAST_SAMPLE and FULL_ONLY, and must still touch every kind
of rule: every test file, and every test function but those FULL_ONLY maps to the fast test that
exercises their kind. Stale data (a name no test has, a sample that matches nothing) is refused, since it
would drop a test from `make test` without a word."""

import collections
import re
import subprocess
import sys

from conftest import FAST_SAMPLE, FULL_ONLY, REPO


def collected(*args: str) -> list[str]:
    """The node ids pytest collects in tests/ with these options, e.g. tests/test_x.py::test_y[p]."""
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "tests",
                        *args], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return [ln.strip() for ln in p.stdout.splitlines() if "::" in ln]


def function_of(node: str) -> str:
    """'tests/test_x.py::test_y[p]' -> 'test_x.py::test_y', the key the tiers' data uses."""
    return re.sub(r"\[.*$", "", node).removeprefix("tests/")


def test_the_fast_tier_touches_every_kind_of_rule():
    everything, fast = collected(), collected("--tier=fast")
    assert fast and set(fast) < set(everything), "the fast tier must be a proper part of the suite"
    per_function = collections.Counter(map(function_of, fast))
    functions = set(map(function_of, everything))
    files = {f.split("::")[0] for f in functions}
    assert not files - {f.split("::")[0] for f in per_function}, "test files with no test in the fast tier"
    lost = sorted(f for f in functions - set(per_function) if f not in FULL_ONLY)
    assert not lost, f"tests that left the fast tier without FULL_ONLY naming their fast stand-in: {lost}"
    for name, stand_in in FULL_ONLY.items():
        assert name in functions, f"FULL_ONLY names {name}, which no test is"
        assert name not in per_function, f"{name} is FULL_ONLY, yet in the fast tier"
        assert per_function[stand_in], f"{name}'s stand-in {stand_in} is not in the fast tier"
    for name in FAST_SAMPLE:
        assert name in functions, f"FAST_SAMPLE names {name}, which no test is"
