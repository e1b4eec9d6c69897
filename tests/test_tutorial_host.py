"""common/tutorial.cuh's host helpers, compiled and run on the CPU: median,
seeded fill, and the comparator against a wrong index, a missing element and
an output never written."""

import re

from checker import CHECK_RE

from conftest import REPO, run


def test_tutorial_host_functions(tmp_path):
    exe = tmp_path / "unit_tutorial"
    p = run(["nvcc", "-std=c++17", "-Icommon", "-Xcompiler", "-Wall,-Wextra", "tests/unit_tutorial.cu",
             "-o", str(exe)])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "warning" not in (p.stdout + p.stderr).lower()
    p = run([str(exe)])
    assert p.returncode == 0 and "UNIT: PASS" in p.stdout, p.stdout
    checks = [ln for ln in p.stdout.splitlines() if ln.startswith("check")]
    assert len(checks) == 4 and all(CHECK_RE.match(ln) for ln in checks), checks
    assert "(1 of 1048576 wrong)" in checks[1] and "FAIL" in checks[1]
    assert re.search(r"\[1048575\] got 0xffffffff want 0x[0-9a-f]{8}  \(poison: never written\)", p.stdout)
