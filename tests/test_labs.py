"""The classroom labs (tools/lab.py, `make lab-NN`, `make grade-NN`, `make lab-dist`).

Every step has at least one hole with balanced markers; outside its holes the
student copy is the solution, line for line; every student copy builds with
the tutorial's flags and no warning; the grader fails a recorded run of an
unfilled lab on the H200 and passes the recorded run of the solution.
"""

import re
import sys
import tarfile

import pytest

from conftest import REPO, STEP_DIRS, run

sys.path.insert(0, str(REPO / "tools"))
import lab  # noqa: E402

REFERENCE_RUNS = REPO / "results" / "runs" / "NVIDIA_H200"
MARKER = re.compile(r"^\s*// LAB-(BEGIN|STUB|END)")


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_every_step_has_balanced_holes(step_dir):
    text = lab.step_program(step_dir).read_text()
    found = lab.holes(text)
    assert found, f"{step_dir} has no lab hole"
    assert sum(1 for ln in text.splitlines() if MARKER.match(ln) and "LAB-BEGIN" in ln) == len(found)
    for _, _, hint, _, _ in found:
        assert len(hint) > 20, f"{step_dir}: a hole needs a real hint, got {hint!r}"


def test_markers_are_checked():
    for bad, why in [("// LAB-BEGIN: a\nx;\n", "no LAB-END"), ("x;\n// LAB-END\n", "without a LAB-BEGIN"),
                     ("// LAB-BEGIN: a\n// LAB-BEGIN: b\n// LAB-END\n", "inside the hole"),
                     ("// LAB-STUB: y;\n", "outside a hole")]:
        with pytest.raises(lab.MarkerError, match=why):
            lab.holes(bad)


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_student_copy_is_the_solution_outside_its_holes(step_dir, tmp_path):
    solution = lab.step_program(step_dir).read_text().splitlines()
    lab.make_lab(step_dir, tmp_path)
    student = (tmp_path / step_dir / lab.step_program(step_dir).name).read_text().splitlines()
    # The solution without its holes' lines; the student copy without the TODO line and the stubs of each hole.
    kept, inside = [], False
    for ln in solution:
        if "// LAB-BEGIN:" in ln:
            inside = True
        elif "// LAB-END" in ln:
            inside = False
        elif not inside:
            kept.append(ln)
    stubs = [s for _, _, _, st, _ in lab.holes("\n".join(solution)) for s in st]
    rest, skip = [], 0
    for ln in student:
        if "// TODO(lab " in ln:
            skip = len(next(h for h in lab.holes("\n".join(solution)) if h[2] in ln)[3])
            continue
        if skip:
            assert ln.strip() in stubs, f"{step_dir}: expected a stub line, got {ln!r}"
            skip -= 1
            continue
        rest.append(ln)
    assert rest == kept
    assert "LAB-BEGIN" not in "\n".join(student), "the solution leaked into the student copy"
    # the other files of the step are copied unchanged, but for the lesson's quotes of a hole's solution
    for f in (REPO / step_dir).iterdir():
        if f.is_file() and f.suffix != ".cu":
            want = lab.scrub_lesson(f.read_text(), step_dir, "\n".join(solution)) if f.name == "README.md" \
                else f.read_text()
            assert (tmp_path / step_dir / f.name).read_text() == want


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_student_copy_builds_without_warnings(step_dir, tmp_path):
    # `make grade-NN` itself: it builds the copy with the tutorial's flags (no GPU here, so the run then
    # exits 77 and the grade is a SKIP, never a pass).
    p = run(["make", f"lab-{step_dir[:2]}", f"LAB={tmp_path}"])
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(["make", f"grade-{step_dir[:2]}", f"LAB={tmp_path}"])
    log = tmp_path / "build" / f"{step_dir}.log"
    assert log.is_file() and (tmp_path / "build" / step_dir).is_file(), p.stdout + p.stderr
    assert "warning" not in log.read_text().lower(), log.read_text()
    assert p.returncode != 0 and "SKIP" in p.stdout, "without a GPU a grade is a skip, not a pass:\n" + p.stdout


def saved_run(path):
    first, _, out = path.read_text().partition("\n")
    code = int(re.search(r"exit (\d+)$", first)[1])
    out = "".join(ln + "\n" for ln in out.splitlines() if not ln.startswith("# stderr:"))
    return out, code


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_grader_fails_an_unfilled_lab_and_passes_the_solution(step_dir, tmp_path):
    unfilled = REFERENCE_RUNS / f"{step_dir}.lab.txt"
    assert unfilled.is_file(), f"no recorded run of {step_dir}'s unfilled lab: record it on the H200"
    for path, want_pass in [(unfilled, False), (REFERENCE_RUNS / f"{step_dir}.txt", True)]:
        out, code = saved_run(path)
        saved = tmp_path / "out.txt"
        saved.write_text(out)
        p = run([sys.executable, "tools/lab.py", "grade", step_dir, "--output", str(saved), "--exit-code", str(code)])
        assert (p.returncode == 0) == want_pass, f"{path.name}:\n{p.stdout}{p.stderr}"
        assert re.search(rf"^score {step_dir}: \d+ of \d+ checked parts passed$", p.stdout, re.M), p.stdout
        if not want_pass:
            assert re.search(r"^  part \S+ +(FAILED|HUNG)", p.stdout, re.M), p.stdout


def test_lab_dist_holds_no_solution(tmp_path):
    out = tmp_path / "labs.tar.gz"
    p = run([sys.executable, "tools/lab.py", "dist", "--out", str(out)])
    assert p.returncode == 0, p.stderr
    with tarfile.open(out) as tar:
        names = tar.getnames()
        for step in STEP_DIRS:
            prog = f"tutorial-labs/{step}/{lab.step_program(step).name}"
            assert prog in names
            text = tar.extractfile(prog).read().decode()
            assert "TODO(lab" in text and "LAB-BEGIN" not in text
        assert "tutorial-labs/common/tutorial.cuh" in names and "tutorial-labs/Makefile" in names
        assert "tutorial-labs/labs/README.md" in names


def leaks(text, solutions):
    """The solution lines of the holes that a text quotes (whitespace collapsed)."""
    flat = lab.squash(text)
    return sorted(s for s in solutions if s in flat)


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_no_student_copy_holds_a_solution(step_dir, tmp_path):
    # Every line of every hole's solution (trivial lines and lines the copy shows
    # anyway excluded) must be absent from every file of the student copy: the
    # program, the lesson (its quotes become the hole's TODO), everything else.
    solutions = lab.solution_lines(lab.step_program(step_dir).read_text())
    assert solutions, f"{step_dir}: no solution line to look for"
    lab.make_lab(step_dir, tmp_path)
    for f in (tmp_path / step_dir).rglob("*"):
        if f.is_file():
            assert not leaks(f.read_text(), solutions), f"{f.name} in the student copy quotes {leaks(f.read_text(), solutions)}"


def test_the_bundle_holds_no_solution(tmp_path):
    run(["python3", "tools/lab.py", "dist", "--out", str(tmp_path / "labs.tar.gz")])
    solutions = {s: d for d in STEP_DIRS for s in lab.solution_lines(lab.step_program(d).read_text())}
    with tarfile.open(tmp_path / "labs.tar.gz") as tar:
        for m in tar.getmembers():
            if m.isfile():
                text = tar.extractfile(m).read().decode(errors="replace")
                assert not leaks(text, solutions), f"{m.name} in the bundle quotes {leaks(text, solutions)}"


def test_the_leak_check_sees_a_quoted_answer():
    program = "int f() {\n    // LAB-BEGIN: compute the answer\n    return compute_the_answer(42);\n    // LAB-STUB: return 0;\n    // LAB-END\n}\n"
    sols = lab.solution_lines(program)
    assert leaks("the lesson shows `return compute_the_answer(42);`", sols)
    assert not leaks(lab.scrub_lesson("```cuda\n    return compute_the_answer(42);\n```\n", "09", program), sols)
