"""The Makefile as a newcomer meets it: bad input stops make at once with one line naming the valid
values (exit 2); every target that runs a program says SKIP and why when the program cannot run here
(exit 77: never a pass); make notebooks talks to its kernels without ipykernel's TCP warning; and each
target installs only the part of the Python environment it needs (requirements/*.txt), which says its
size first."""

import os
import pathlib
import re
import subprocess
import shutil

import pytest

from conftest import REPO, STEP_DIRS, binary, no_gpu_env, run

STEPS = " ".join(d[:2] for d in STEP_DIRS)


def one_line(p) -> str:
    lines = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1, f"want one line, got:\n{p.stdout}{p.stderr}"
    return lines[0]


@pytest.mark.parametrize("goal", ["check-11", "lab-11", "build-1", "run-99", "sass-1", "shadow-11", "bug-00",
                                  "grade-12", "profile-3", "sanitize-11", "compile-command-7"])
def test_a_step_that_is_not_there_is_one_line_naming_the_steps(goal):
    p = run(["make", "-s", goal])
    line = one_line(p)
    assert p.returncode == 2 and f"make {goal}: there is no step" in line and f"NN is one of {STEPS}" in line, line


def test_the_targets_whose_names_look_per_step_are_not_refused():
    # shadow-tool, shadow-probe, lab-dist and grade-class share a prefix with the per-step targets: the check of
    # the step number must leave them alone (a dry run: none of them may say "there is no step").
    for goal in ("shadow-tool", "shadow-probe", "lab-dist", "grade-class"):
        p = run(["make", "-n", goal, "NN=03", "DIR=x"])
        assert "there is no step" not in p.stdout + p.stderr, (goal, p.stdout + p.stderr)


@pytest.mark.parametrize("args,message", [
    (["bug-03", "N=abc"], "N=abc is not one of step 03's planted mistakes: N is one of 1 2 3 4"),
    (["bug-03", "N=9"], "N=9 is not one of step 03's planted mistakes"),
    (["bug-03", "N=1 2"], "N=1 2 is not one number"),
    (["grade-class"], f"NN is missing: NN is one of {STEPS}"),
    (["grade-class", "NN=11", "DIR=x"], f"NN=11 is not a step: NN is one of {STEPS}"),
    (["grade-class", "NN=03"], "DIR is missing"),
    (["check-01", "CHECK_TIMEOUT=abc"], "CHECK_TIMEOUT=abc is not a whole number of seconds"),
    (["build-01", "MBAR_TIMEOUT_NS=1e9"], "MBAR_TIMEOUT_NS=1e9 is not a whole number of nanoseconds"),
])
def test_a_bad_value_is_one_line_naming_the_rule(args, message):
    p = run(["make", "-s", *args])
    line = one_line(p)
    assert p.returncode == 2 and message in line, line


def test_a_program_that_cannot_run_ends_in_skip_and_its_reason(built):
    # make run-01 and make bug-01 N=1 with no GPU: the program's own line, then make's SKIP line naming it.
    for goal in (["run-01"], ["bug-01", "N=1"]):
        p = run(["make", "--no-print-directory", *goal], env=no_gpu_env())
        assert p.returncode != 0, f"make {goal[0]} passed on a skip"
        last = p.stdout.strip().splitlines()[-1]
        assert last.startswith(f"make {goal[0]}: SKIP (exit 77): ") and "no CUDA device" in last, p.stdout[-2000:]


def test_bench_stops_at_the_first_skip_and_records_nothing(built):
    results = REPO / "results"
    before = {p: p.stat().st_mtime for p in results.rglob("*") if p.is_file()}
    p = run(["python3", "tools/bench.py", "01_memcpy_baseline", "02_cp_async"], env=no_gpu_env())
    assert p.returncode == 77 and "bench: SKIP (exit 77): no CUDA device" in p.stdout, p.stdout + p.stderr
    assert "02_cp_async" not in p.stdout, "bench went on after a skip"
    assert {p: p.stat().st_mtime for p in results.rglob("*") if p.is_file()} == before, "a skip recorded a result"


def fake_tool(folder: pathlib.Path, name: str, program_after: str) -> pathlib.Path:
    """A stand-in for ncu or compute-sanitizer on this machine: it runs the program it is given (the word
    after `program_after`, or the first that starts with ./) with the program's own arguments."""
    tool = folder / name
    tool.write_text("#!/usr/bin/env bash\n"
                    f'while [ $# -gt 0 ] && [ "$1" != "{program_after}" ] && [ "${{1#./}}" = "$1" ]; do shift; done\n'
                    f'[ "$1" = "{program_after}" ] && shift\n'
                    'exec "$@"\n')
    tool.chmod(0o755)
    return tool


def test_profile_and_sanitize_say_skip_when_the_program_cannot_run(built, tmp_path):
    fake_tool(tmp_path, "ncu", "--csv")
    env = dict(no_gpu_env(), PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    p = run(["make", "--no-print-directory", "profile-06"], env=env)
    assert p.returncode != 0 and "profile 06_transpose: SKIP (exit 77): no CUDA device" in p.stdout, p.stdout
    sanitizer = fake_tool(tmp_path, "compute-sanitizer", "--quick")
    p = run(["make", "--no-print-directory", "sanitize-01", f"SANITIZER={sanitizer}"], env=no_gpu_env())
    assert p.returncode != 0 and "sanitize-01: SKIP" in p.stdout and "no CUDA device" in p.stdout, p.stdout


def test_make_notebooks_runs_its_kernels_without_the_tcp_warning():
    nb = "notebooks/swizzle.ipynb"
    p = run(["make", "--no-print-directory", "notebooks", f"NOTEBOOKS={nb}"])
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "TCP" not in p.stdout + p.stderr, "ipykernel warned about its TCP transport"
    assert (REPO / "build" / "notebooks" / "swizzle.html").is_file()


def parts_installed(goal: str, tmp_path: pathlib.Path) -> set[str]:
    """The parts of the Python environment `make GOAL` would install into an empty environment (a dry run:
    nothing is installed or built), where no cuobjdump or nvdisasm is on PATH or in CUDA_HOME, as in a
    minimal toolkit."""
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if not any((pathlib.Path(d) / t).exists() for t in ("cuobjdump", "nvdisasm")))
    env = dict(os.environ, PATH=path)
    env.pop("VENV", None)
    p = run(["make", "-n", goal, f"VENV={tmp_path / 'venv'}", f"CUDA_HOME={tmp_path / 'no-toolkit'}"], env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    return set(re.findall(r"pip install .*-r requirements/(\w+)\.txt", p.stdout))


def test_each_target_installs_only_the_part_it_needs(tmp_path):
    parts = sorted(p.stem for p in (REPO / "requirements").glob("*.txt"))
    assert parts == ["notebooks", "sass", "shadow", "test", "twins"], parts
    for part in parts:  # each says its size before it downloads; the twins' CuTe headers come alone
        text = (REPO / "requirements" / f"{part}.txt").read_text()
        assert re.search(r"^# size: \d+ MB to download", text, re.M), f"requirements/{part}.txt states no size"
    assert "# pip: --no-deps" in (REPO / "requirements" / "twins.txt").read_text()
    listed = re.findall(r"^-r (requirements/\w+\.txt)$", (REPO / "requirements.txt").read_text(), re.M)
    assert sorted(listed) == [f"requirements/{p}.txt" for p in parts], "requirements.txt is every part"
    want = {"build-03": set(), "run-05": set(), "check-03": {"twins"}, "sass-09": {"twins", "sass"},
            "grader-tools": {"sass"}, "notebooks": {"notebooks"}, "test": {"test", "notebooks", "twins", "sass"},
            "venv": set(parts)}
    for goal, expected in want.items():
        assert parts_installed(goal, tmp_path) == expected, goal
    # with cuobjdump in the toolkit, make sass-NN installs nothing for it
    toolkit = tmp_path / "toolkit" / "bin"
    toolkit.mkdir(parents=True)
    for t in ("cuobjdump", "nvdisasm"):
        shutil.copy(fake_tool(tmp_path, t, "--"), toolkit / t)
    p = run(["make", "-n", "sass-09", f"VENV={tmp_path / 'venv'}", f"CUDA_HOME={toolkit.parent}"])
    assert "requirements/sass.txt" not in p.stdout and "requirements/twins.txt" in p.stdout, p.stdout[-3000:]


def test_one_steps_shadow_build_builds():
    # make SHADOW=1 build-NN for one step, the quickest to build (01): the fast tier's sample of the shadow
    # build, which make test-all builds for every step (tests/test_shadow.py).
    step = STEP_DIRS[0]
    p = run(["make", "--no-print-directory", "SHADOW=1", f"build-{step[:2]}"])
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    from sass import find_tool
    elf = subprocess.run([str(find_tool("cuobjdump")), "-elf", str(REPO / "build" / "shadow" / step)],
                         capture_output=True, text=True).stdout
    assert "g_shadow_state" in elf, "the build with the hooks has no g_shadow_state: the checker's tool cannot reach it"
