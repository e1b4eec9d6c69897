"""Every planted defect (tests/defects/*.diff and NN_topic/bugs/N.diff) still
applies, names a catcher that exists, and the check lines of every expected
output are mapped to a defect that must make them FAIL (tools/mutation.py
runs them: `make mutation`, `make mutation GPU=1`)."""

import fnmatch
import re
import subprocess

import pytest

import mutation
import patches
from conftest import REPO, STEP_DIRS
from contract import check_lines, twin_dirs

DEFECTS = mutation.defects()
UNCOVERED = REPO / "tests" / "defects" / "UNCOVERED.txt"
# Every program with check lines: the steps and their twins (NN_topic/twins).
PROGRAMS = STEP_DIRS + twin_dirs()


@pytest.mark.parametrize("d", DEFECTS, ids=lambda d: d.name)
def test_the_defect_applies(d):
    try:
        patches.plan(d.path.read_text(), REPO)
    except ValueError as e:
        raise AssertionError(f"{d.name} no longer applies: {e}") from None


def pytest_targets(expr: str) -> list[tuple[str, str]]:
    """'tests/a.py::test_x[p] -k y' -> [('tests/a.py', 'test_x')] (the node ids named)."""
    return [(f, n) for f, n in re.findall(r"(tests/\w+\.py)(?:::(\w+))?", expr)]


@pytest.mark.parametrize("d", DEFECTS, ids=lambda d: d.name)
def test_the_catcher_exists(d):
    kind, _, what = d.catcher.partition(":")
    assert kind in ("cpu", "gpu", "shadow"), f"{d.name}: catcher kind {kind!r} (cpu:, gpu: or shadow:)"
    if kind == "shadow":  # the step's shadow build must name one of these rules
        step, *rules = what.split()
        assert step in STEP_DIRS and rules, f"{d.name}: shadow:<step> RULE ..."
        known = re.findall(r"^\s+X\((\w+),", (REPO / "common" / "shadow" / "rules.h").read_text(), re.M)
        assert set(rules) <= set(known), f"{d.name}: {set(rules) - set(known)} are no rules of common/shadow/rules.h"
        return
    if kind == "cpu":
        targets = pytest_targets(what)
        assert targets, f"{d.name}: a cpu catcher names tests/<file>.py[::test]"
        for f, name in targets:
            assert (REPO / f).is_file(), f"{d.name}: {f} does not exist"
            if name:
                assert re.search(rf"^def {name}\(", (REPO / f).read_text(), re.M), f"{d.name}: no {f}::{name}"
        return
    step, _, _, patterns = mutation.parse_gpu_catcher(d.catcher)
    assert step in PROGRAMS, f"{d.name}: {step} is not a step or a step's twins"
    names = [m["name"] for m in check_lines((REPO / step / "expected_output.txt").read_text())]
    for pat in patterns:
        assert any(fnmatch.fnmatchcase(n, pat) for n in names), f"{d.name}: no check line {pat} in {step}"


def covered_lines() -> dict[str, set[str]]:
    """{step: check lines of its expected output that some GPU defect names}."""
    out: dict[str, set[str]] = {}
    for step in PROGRAMS:
        names = [m["name"] for m in check_lines((REPO / step / "expected_output.txt").read_text())]
        pats = [p for d in DEFECTS if d.catcher.startswith("gpu:") and mutation.parse_gpu_catcher(d.catcher)[0] == step
                for p in mutation.parse_gpu_catcher(d.catcher)[3]]
        out[step] = {n for n in names if any(fnmatch.fnmatchcase(n, p) for p in pats)}
    return out


def test_every_check_line_has_a_negative_control_or_is_listed_as_a_gap():
    # UNCOVERED.txt lists "<step> <check line>" for the lines no planted defect
    # is aimed at yet: the known gap, exactly. A new check line without a
    # defect fails here, and so does a listed line that a defect now covers.
    covered = covered_lines()
    gap = set()
    for step in PROGRAMS:
        for m in check_lines((REPO / step / "expected_output.txt").read_text()):
            if m["name"] not in covered[step]:
                gap.add(f"{step} {m['name']}")
    listed = {ln.strip() for ln in UNCOVERED.read_text().splitlines() if ln.strip() and not ln.startswith("#")}
    assert not gap - listed, "check lines with no planted defect aimed at them:\n" + "\n".join(sorted(gap - listed))
    assert not listed - gap, "listed as uncovered but covered (or gone): remove from UNCOVERED.txt:\n" + \
        "\n".join(sorted(listed - gap))


def test_a_planted_run_is_judged_by_its_named_lines():
    out = ("check  tiling ........................ FAIL  (5 of 9 wrong)\n"
           "check  bulk_load ..................... PASS  (0 of 9 wrong)\n")
    assert mutation.judge_run(out, 1, ["tiling"])[0] == "caught"
    assert mutation.judge_run(out, 1, ["bulk_*"])[0] == "MISSED"  # the aimed line passed
    assert mutation.judge_run(out, 1, ["*"])[0] == "MISSED"  # one of the named lines failed, not all
    assert mutation.judge_run(out, 1, ["tiling", "bulk_load"])[0] == "MISSED"
    assert mutation.judge_run(out, 0, ["tiling"])[0] == "MISSED"  # exit 0: nothing was caught
    assert mutation.judge_run(out, 1, ["nonesuch"])[0] == "STALE"  # the line is not printed
    assert mutation.judge_run("", 2, [], want=2)[0] == "caught"  # a refusal, where one is the catch
    assert mutation.parse_gpu_catcher("gpu:07_reduce_multicast --full --exit 2 a b") == \
        ("07_reduce_multicast", True, 2, ["a", "b"])


def test_each_planted_copy_has_its_own_folder():
    # make mutation GPU=1 JOBS=N (and --build-only / --prebuilt) builds each gpu: defect in its own copy of the
    # sources: two defects must never share a folder (one would run the other's program), and a twin's program
    # lies under its step's twins/ folder, where tools/bugs.py builds it.
    gpu = [d for d in DEFECTS if d.catcher.startswith("gpu:")]
    folders = [d.planted.relative_to(mutation.BUILT).parts[0] for d in gpu]
    assert len(set(folders)) == len(folders), "two planted defects share a folder"
    twin = next(d for d in gpu if mutation.parse_gpu_catcher(d.catcher)[0].endswith("/twins"))
    step = mutation.parse_gpu_catcher(twin.catcher)[0]
    assert twin.planted.parent.relative_to(mutation.BUILT).as_posix().endswith(step), twin.planted
