"""Shared fixtures for the CPU test suite (no GPU needed; CI runs it).

Every step is discovered from the NN_topic folders, so a new step is tested
as soon as its folder exists.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

from checker import load_step  # noqa: E402
from contract import step_dirs  # noqa: E402

STEP_DIRS = step_dirs()


def cute_include():
    """CuTe's headers, from the pinned nvidia-cutlass package (requirements.txt): nothing is vendored."""
    import importlib.util

    spec = importlib.util.find_spec("cutlass_library")
    assert spec and spec.submodule_search_locations, "nvidia-cutlass is not installed: run `make venv`"
    inc = pathlib.Path(list(spec.submodule_search_locations)[0]) / "source" / "include"
    assert (inc / "cute" / "swizzle.hpp").is_file(), inc
    return inc


# A line of a build log that counts as a warning: the compilers' own, and ptxas's wgmma advisories
# ("Potential Performance Loss", C7520: wgmma serialized; "warpgroup.arrive is injected ... by compiler",
# C7519: a missing wgmma.fence that ptxas repaired).
WARNING_RE = r"\bwarning\b|Potential Performance Loss|injected .* by compiler"


def no_gpu_env() -> dict[str, str]:
    """The environment of a machine with no visible GPU, even on a GPU machine."""
    return dict(os.environ, CUDA_VISIBLE_DEVICES="")


def run(cmd, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("cwd", REPO)
    kw.setdefault("timeout", 900)
    if cmd and cmd[0] == "make":
        # Under `make test` the tests' own make calls would be sub-makes: they
        # would print "Entering directory" lines and share the outer flags.
        env = dict(kw.get("env") or os.environ)
        for k in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS"):
            env.pop(k, None)
        kw["env"] = env
    return subprocess.run(cmd, **kw)


def run_unit(source: str, tmp_path: pathlib.Path, flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Build a host-only unit test (tests/unit_*.cu; no warnings allowed; `flags`: more nvcc
    arguments, e.g. a step's architecture and libraries), run it, and require its "UNIT: PASS"."""
    exe = tmp_path / pathlib.Path(source).stem
    p = run(["nvcc", "-std=c++17", "-I.", "-Xcompiler", "-Wall,-Wextra", *flags, source, "-o", str(exe)])
    assert p.returncode == 0 and "warning" not in (p.stdout + p.stderr).lower(), p.stdout + p.stderr
    p = run([str(exe)])
    assert p.returncode == 0 and "UNIT: PASS" in p.stdout, p.stdout
    return p


@pytest.fixture(scope="session")
def built() -> None:
    """Every step built (make all); the build logs are what the warnings test reads."""
    p = run(["make", "all"])
    assert p.returncode == 0, f"make all failed:\n{p.stdout}\n{p.stderr}"


def binary(step_dir: str) -> pathlib.Path:
    return REPO / "build" / step_dir


@pytest.fixture(params=STEP_DIRS)
def step_dir(request) -> str:
    return request.param


@pytest.fixture
def step(step_dir):
    return load_step(step_dir)
