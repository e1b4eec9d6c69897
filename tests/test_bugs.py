"""The planted mistakes (NN_topic/bugs/N.diff, tools/bugs.py): the programs carry
no hook for them, every diff still applies and builds, and each one changes
the machine code it claims to change, so that no planted mistake is the
correct program under another name. On a GPU `make bench` records each
one's run; the lessons quote those runs and the diffs themselves."""

from __future__ import annotations

import concurrent.futures
import re
import subprocess

import pytest

from conftest import FAST_STEP, REPO, STEP_DIRS, binary
import bugs
from sass import dump_sass, instruction

PLANTED = [(s, n) for s in STEP_DIRS for n in sorted(bugs.diff_paths(s))]


def test_every_step_has_planted_mistakes():
    assert {s for s, _ in PLANTED} == set(STEP_DIRS), PLANTED


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_no_program_carries_a_test_hook(step_dir):
    for path in [*(REPO / step_dir).glob("*.cu"), *(REPO / step_dir).glob("*.cuh"), *(REPO / step_dir).glob("*.h")]:
        code = re.sub(r"//.*", "", path.read_text())  # comments may name a rule's mistake
        assert not re.search(r"\bbug\b|--bug", code), f"{path.relative_to(REPO)} still has a `bug` hook"


def sass_of(path):
    return {k: [instruction(ln) for ln in v] for k, v in dump_sass(path).items()}


def build_side_by_side(step_dir, n, tmp_path, plant_b=True):
    """The step's copy built twice at once, at a/ and at b/ (paths of one length, so that the file names the
    binaries hold lie at the same offsets): a/ as it is, b/ with bugs/n.diff applied (plant_b)."""
    nvcc = "nvcc " + (REPO / "build" / "flags.txt").read_text().strip()
    trees = [bugs.planted_tree(step_dir, n, tmp_path / side, plant=side == "b" and plant_b) for side in "ab"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        built = list(pool.map(lambda t: bugs.build(step_dir, t, nvcc, bench_link(step_dir)), trees))
    return [(sass_of(b), host_text(b)) for b in built]


def test_a_copy_builds_the_same_at_either_path(built, tmp_path):
    # What makes the next test able to fail: the same sources built at a/ and at b/ give the same kernels and
    # the same host code, so that only the diff can make them differ.
    before, same = build_side_by_side(FAST_STEP, 1, tmp_path, plant_b=False)
    assert before == same, "the copy's machine code depends on where it is built: a diff could change nothing"


@pytest.mark.parametrize("step_dir,n", PLANTED, ids=lambda x: str(x))
def test_the_diff_applies_builds_and_changes_the_program(built, step_dir, n, tmp_path):
    # The copy built before and after the diff (side by side, at two paths of one length): a diff that
    # changes neither the kernels' SASS nor the host code would leave the correct program under another
    # name, a mistake that cannot fail.
    bugs.describe(bugs.diff_paths(step_dir)[n])
    before, after = build_side_by_side(step_dir, n, tmp_path)
    assert after != before, f"bugs/{n}.diff changes nothing in the program: it cannot fail"


def host_text(binary_path):
    """The host code's bytes (.text): a diff of host code only (a refused option) changes them."""
    out = binary_path.with_suffix(".text")
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.text", str(binary_path), str(out)], check=True)
    return out.read_bytes()


def bench_link(step_dir):
    from bench import step_link
    return step_link(step_dir)


@pytest.mark.parametrize("step_dir,n", PLANTED, ids=lambda x: str(x))
def test_the_lesson_shows_the_diff_next_to_its_recorded_run(step_dir, n):
    lesson = (REPO / step_dir / "README.md").read_text()
    assert f"<!-- diff:{n} -->" in lesson, f"{step_dir}'s lesson does not show bugs/{n}.diff"
    assert f"make bug-{step_dir[:2]} N={n}" in lesson, f"{step_dir}'s lesson does not say how to run bug {n}"
    run = REPO / "results" / "runs" / "NVIDIA_H200" / f"{step_dir}.bug{n}.txt"
    assert run.is_file() and f"bugs/{n}.diff" in run.read_text().partition("\n")[0], \
        f"no H200 run of {step_dir}/bugs/{n}.diff: record it with make bench"


def test_the_tool_lists_and_refuses_clearly(tmp_path):
    from conftest import run
    p = run(["python3", "tools/bugs.py", "list", "03_tma_load"])
    assert p.returncode == 0 and "make bug-03 N=1" in p.stdout
    p = run(["python3", "tools/bugs.py", "run", "03_tma_load", "99", "--nvcc", "nvcc"])
    assert p.returncode == 2 and "has no bugs/99.diff" in p.stdout


def test_a_diff_that_no_longer_applies_is_an_error(tmp_path, monkeypatch):
    step, n = PLANTED[0]
    stale = tmp_path / "1.diff"
    text = bugs.diff_paths(step)[n].read_text()
    stale.write_text(re.sub(r"^-(?!--)(.*)$", r"-\1 /* no such line */", text, count=1, flags=re.M))
    monkeypatch.setattr(bugs, "diff_paths", lambda s: {1: stale})
    with pytest.raises(ValueError, match="does not apply"):
        bugs.planted_tree(step, 1, tmp_path / "tree")


def test_without_a_gpu_a_bug_shows_its_diff_and_its_recorded_run(built):
    # `make bug-NN N=k` on a machine with no GPU: not a bare "skipped", but what the mistake plants and what
    # it did on the H200, both builds (exit 77: nothing was judged here).
    from conftest import run
    nvcc = "nvcc " + (REPO / "build" / "flags.txt").read_text().strip()
    p = run(["python3", "tools/bugs.py", "run", "03_tma_load", "1", "--nvcc", nvcc])
    if p.returncode != 77:
        pytest.skip("a GPU is here: the bug ran (make bug-03 N=1)")
    out = p.stdout
    assert "cannot run here" in out and "what:" in out, out
    assert "--- a/03_tma_load/" in out, "the diff is not shown:\n" + out
    recorded = (REPO / "results" / "runs" / "NVIDIA_H200" / "03_tma_load.bug1.txt").read_text().splitlines()[0]
    assert "Recorded on the H200" in out and recorded in out, "the recorded H200 run is not shown:\n" + out
    shadow = (REPO / "results" / "runs" / "NVIDIA_H200" / "03_tma_load.bug1.shadow.txt").read_text().splitlines()[0]
    assert shadow in out, "the recorded shadow run is not shown:\n" + out
