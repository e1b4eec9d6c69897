"""Category 1: every step builds, with no warnings, with the required flags."""

import re

from conftest import REPO, binary, run


def test_step_builds_without_warnings(built, step_dir):
    log = REPO / "build" / f"{step_dir}.log"
    assert binary(step_dir).is_file()
    assert log.is_file(), "the Makefile keeps each step's compiler output in build/NN_topic.log"
    warnings = [ln for ln in log.read_text().splitlines() if re.search(r"\bwarning\b", ln, re.I)]
    assert not warnings, "compiler warnings:\n" + "\n".join(warnings)


def test_build_flags_and_common_dependency(step_dir):
    # -W pretends common/tutorial.cuh just changed: the binary must be rebuilt
    # (binaries depend on common/), with the flags DESIGN.md fixes.
    p = run(["make", "-n", "-W", "common/tutorial.cuh", f"build/{step_dir}"])
    assert p.returncode == 0, p.stderr
    cmd = next((ln for ln in p.stdout.splitlines() if "nvcc" in ln and step_dir in ln), "")
    assert cmd, f"touching common/tutorial.cuh does not rebuild {step_dir}:\n{p.stdout}"
    for flag in ("-O3", "-lineinfo", "-gencode arch=compute_90a,code=sm_90a", "-Wall", "-Wextra"):
        assert flag in cmd, f"missing {flag} in: {cmd}"
    assert not re.search(r"(^|\s)-w(\s|$)", cmd), "warnings must not be hidden (-w)"
