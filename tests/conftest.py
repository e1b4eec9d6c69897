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
def built(request) -> None:
    """Every step built, and every twin (make all), or in the fast tier the one twin it samples; the build
    logs are what the warnings test reads."""
    goals = ["all"] if request.config.getoption("--tier") == "all" else FAST_BUILDS
    p = run(["make", *goals])
    assert p.returncode == 0, f"make {' '.join(goals)} failed:\n{p.stdout}\n{p.stderr}"


def binary(step_dir: str) -> pathlib.Path:
    return REPO / "build" / step_dir


@pytest.fixture(params=STEP_DIRS)
def step_dir(request) -> str:
    return request.param


@pytest.fixture
def step(step_dir):
    return load_step(step_dir)


# ---- The two tiers ------------------------------------------------------------------------------------
# `make test-all` (CI) runs every test; `make test` runs the fast tier (pytest --tier=fast): every kind of
# rule at least once, the slow builds sampled. The fast tier is this data, nothing else:
#   FAST_SAMPLE  a parametrized test keeps, in the fast tier, only the parameters whose id the pattern
#                matches (re.search): one step, one twin, one planted mistake stand for all of them;
#   FULL_ONLY    a test that runs in the full tier only, mapped to the fast test that exercises its kind
#                of rule (tests/test_tiers.py checks that that test exists and is fast).
# Every other test is in both. tests/test_tiers.py also checks that every test file and every test
# function keeps at least one test in the fast tier, but those listed in FULL_ONLY.
FAST_STEP = "03_tma_load"  # the step the per-step samples take: TMA, mbarriers, a ring, twins, four bugs
FAST_TWIN = "08_descriptor_update"  # the quickest twins program to build (no CuTe)
FAST_BUILDS = [f"build-{d[:2]}" for d in STEP_DIRS] + [f"build/twins/{FAST_TWIN}"]
STEP = f"^{FAST_STEP}$"
FAST_SAMPLE: dict[str, str] = {
    # builds: one planted mistake, one lab, one step's PTX; the SASS read of one step
    "test_bugs.py::test_the_diff_applies_builds_and_changes_the_program": f"^{FAST_STEP}-1$",
    "test_docs.py::test_lesson_ptx_is_real_ptx": STEP,
    "test_docs.py::test_lesson_sass_is_real_sass": STEP,
    "test_sass.py::test_step_sass_contains_its_instructions": STEP,
    "test_sass.py::test_every_fence_is_pinned": STEP,
    "test_sass.py::test_sass_order": STEP,
    "test_checker.py::test_make_check_nn_fails_when_the_step_cannot_run": "^01$",  # no twins to build
    # the command line's rules are common/cli.h's: every program is run with bad arguments once
    # (test_bad_standard_arguments_exit_2_naming_the_rule, test_options_not_taken_are_refused), the
    # combinations on one program
    "test_exit_codes.py::test_the_command_line_rule": f"^{FAST_STEP}-",
    "test_exit_codes.py::test_every_number_option_reads_the_same_way": STEP,
    "test_exit_codes.py::test_every_option_given_twice_is_refused": STEP,
    "test_labs.py::test_student_copy_builds_without_warnings": STEP,
    "test_labs.py::test_grader_fails_an_unfilled_lab_and_passes_the_solution": STEP,
    "test_lab_grading.py::test_every_sample_fill_gets_its_mechanism_verdict": rf"^{FAST_STEP[:2]}\.",
    # one notebook executed; one ptxas case each way
    "test_notebooks.py::test_notebook_executes_and_draws": r"^swizzle\.ipynb$",
    "test_notebooks.py::test_every_figure_carries_its_description": r"^swizzle\.ipynb$",
    "test_reduce_types.py::test_ptxas_decides_the_1d_form": r"^(min\.f32-False|add\.f32-True)$",
    "test_reduce_types.py::test_the_wrapper_refuses_what_ptxas_would": r"^(RED_MIN-float-False|RED_ADD-float-True)$",
    # one twins program: built, run without a GPU, its SASS compared
    "test_twins.py::test_the_twin_is_the_ptx_kernel": f"^{FAST_TWIN[:2]}-",
    "test_twins.py::test_twins_program_builds_without_warnings": f"^{FAST_TWIN}/twins$",
    "test_twins.py::test_twins_program_keeps_the_contract_without_a_gpu": f"^{FAST_TWIN}/twins$",
    "test_twins.py::test_make_sass_shows_each_twins_instructions": f"^{FAST_TWIN}/twins$",
}
NAMED_DIFFERENCE = "test_twins.py::test_a_cta_scope_release_of_the_edited_map_compiles_to_the_same_sass"
FULL_ONLY: dict[str, str] = {
    # every step's shadow build, every experiment, every twin: one of each in the fast tier
    "test_shadow.py::test_every_step_builds_with_the_hooks": "test_make.py::test_one_steps_shadow_build_builds",
    "test_shadow.py::test_the_normal_build_is_the_build_without_the_shadow":
        "test_shadow.py::test_the_stripper_removes_every_shadow_line",
    "test_build.py::test_experiments_build": "test_build.py::test_step_builds_without_warnings",
    "test_bugs.py::test_a_copy_builds_the_same_at_either_path":
        "test_bugs.py::test_the_diff_applies_builds_and_changes_the_program",
    "test_build.py::test_headers_and_flags_trigger_rebuilds": "test_build.py::test_a_changed_flag_rebuilds",  # reads all twins
    "test_build.py::test_check_nn_fails_when_the_step_fails_and_its_twins_pass":
        "test_checker.py::test_make_check_nn_fails_when_the_step_cannot_run",
    "test_checker.py::test_make_check_reports_every_step_and_fails_when_skipped":
        "test_checker.py::test_make_check_nn_fails_when_the_step_cannot_run",
    # the other twins' named SASS differences: 08's is the fast tier's
    "test_twins.py::test_cute_tma_loads_differ_only_by_the_cache_hint": NAMED_DIFFERENCE,
    "test_twins.py::test_cute_tiled_multicast_keeps_the_atom_twin_s_loads_and_barriers": NAMED_DIFFERENCE,
    "test_twins.py::test_cooperative_groups_copy_adds_a_loop_and_a_block_barrier": NAMED_DIFFERENCE,
    "test_twins.py::test_memcpy_async_tx_before_the_arrive_is_the_same_instructions_reordered": NAMED_DIFFERENCE,
    "test_twins.py::test_cuda_barrier_waits_without_a_bound": NAMED_DIFFERENCE,
    "test_twins.py::test_memcpy_async_without_an_aligned_size_copies_byte_by_byte":
        "test_sass.py::test_memcpy_async_with_a_barrier",
    # each step's host checks fed wrong answers: the fast tier's step stands for the others
    **{f"test_tutorial_host.py::test_{name}_host_checks": "test_tutorial_host.py::test_tma_load_host_checks"
       for name in ("gemm", "reduce", "grouped_gemm", "cp_async", "tma_store", "swizzle", "transpose",
                    "descriptor_update")},
    "test_tutorial_host.py::test_grouped_schedule": "test_tutorial_host.py::test_tma_load_host_checks",
    # a class graded, the bundle built and graded: one lab graded stands for them
    "test_lab_grading.py::test_a_class_without_a_gpu_gets_every_verdict_a_cpu_can_give":
        "test_labs.py::test_grader_fails_an_unfilled_lab_and_passes_the_solution",
    "test_lab_grading.py::test_a_class_is_final_and_exits_0_when_every_row_is":
        "test_labs.py::test_grader_fails_an_unfilled_lab_and_passes_the_solution",
    "test_labs.py::test_the_bundle_stands_alone": "test_labs.py::test_lab_dist_holds_no_solution",
}


def pytest_addoption(parser):
    parser.addoption("--tier", choices=("fast", "all"), default="all",
                     help="fast: make test's tier, every kind of rule once (tests/conftest.py's FAST_SAMPLE and "
                          "FULL_ONLY); all: every test (make test-all, CI)")


def pytest_configure(config):
    config.addinivalue_line("markers", "full_tier: runs in `make test-all` only (tests/conftest.py, the two tiers)")


def full_tier_only(item) -> bool:
    """Whether the tiers' data keeps this test out of the fast tier."""
    import re
    key = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
    if key in FULL_ONLY:
        return True
    pattern = FAST_SAMPLE.get(key)
    return pattern is not None and not re.search(pattern, item.callspec.id if hasattr(item, "callspec") else "")


@pytest.hookimpl(tryfirst=True)  # marked before pytest's own -m selection runs
def pytest_collection_modifyitems(config, items):
    fast, full = [], []
    for item in items:
        if full_tier_only(item):
            item.add_marker(pytest.mark.full_tier)
            full.append(item)
        else:
            fast.append(item)
    if config.getoption("--tier") == "fast":
        config.hook.pytest_deselected(items=full)
        items[:] = fast
