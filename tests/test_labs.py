"""The classroom labs (tools/lab.py, `make lab-NN`, `make grade-NN`, `make lab-dist`).

Every step has at least one hole with balanced markers; outside its holes the
student copy is the solution, line for line; every student copy builds with
the tutorial's flags and no warning; the grader fails a recorded run of an
unfilled lab on the H200 and passes the recorded run of the solution.
"""

import csv
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
            want = lab.relink(lab.scrub_lesson(f.read_text(), step_dir, "\n".join(solution)), step_dir,
                              lambda p: (tmp_path / p).exists()) if f.name == "README.md" else f.read_text()
            assert (tmp_path / step_dir / f.name).read_text() == want


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_student_copy_builds_without_warnings(step_dir, tmp_path):
    # `make grade-NN` itself: it builds the copy's program alone with the tutorial's flags; the copy as handed
    # out is UNFILLED whatever the GPU says (here there is none), and make's exit is not 0.
    p = run(["make", f"lab-{step_dir[:2]}", f"LAB={tmp_path}"])
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(["make", f"grade-{step_dir[:2]}", f"LAB={tmp_path}"])
    work = REPO / "build" / "grade" / step_dir / tmp_path.name
    assert (work / "program").is_file(), p.stdout + p.stderr
    assert "warning" not in (work / "build.log").read_text().lower(), (work / "build.log").read_text()
    assert p.returncode != 0 and f"{step_dir}: UNFILLED (hole {step_dir[:2]}.1" in p.stdout, p.stdout


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
        p = run([sys.executable, "tools/lab.py", "grade-output", step_dir, str(saved), "--exit-code", str(code)])
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
        assert "tutorial-labs/README.md" in names and "tutorial-labs/.lab-bundle" in names


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


# ---- the grader: what it trusts, what it reports -------------------------------------------------------------

COPY = "int main() {\n    int x = 1;\n    // TODO(lab 09.1): set y\n    int y = 0;\n    return x + y;\n}\n"
SPANS = [(2, 3)]  # the TODO line and its stub


@pytest.mark.parametrize("submitted, edits, untouched", [
    (COPY, [], ["09.1"]),                                                    # as handed out
    (COPY.replace("int y = 0;", "int y = 41;"), [], []),                      # the stub replaced
    (COPY.replace("    // TODO(lab 09.1): set y\n", ""), [], []),            # the TODO line removed
    (COPY.replace("    int y = 0;\n", "    int y = 2;\n    y += x;\n"), [], []),  # lines added in the hole
    (COPY.replace("int x = 1;", "int x = 2;"), ["line 2 changed"], ["09.1"]),  # a line outside changed
    (COPY.replace("return x + y;", "return 0;").replace("int y = 0;", "int y = 1;"), ["line 5 changed"], []),
    (COPY + "// a note\n", ["lines added before line 7"], ["09.1"]),        # a line added outside
    (COPY.replace("    int x = 1;\n", ""), ["line 2 deleted"], ["09.1"]),  # a line outside deleted
])
def test_edits_outside_the_holes_are_found(submitted, edits, untouched):
    found = lab.outside_edits(COPY, SPANS, submitted)
    assert [e.split(":")[0] for e in found] == edits, found
    assert lab.untouched_holes(COPY, SPANS, submitted, "09_x") == untouched


def test_each_outcome_of_a_run_has_its_verdict():
    # what judge() makes of a run, with the exit code the grade returns
    ok = (REFERENCE_RUNS / "03_tma_load.txt")
    out, code = saved_run(ok)
    for out_, code_, verdict, exit_code in [(out, code, "PASS", 0), (out.replace("PASS  (0 of", "FAIL  (3 of", 1), 1, "FAIL", 1),
                                            ("", 124, "TIMEOUT", 124), ("", 77, "SKIP", 77)]:
        g = lab.judge(lab.Grade("s", "03_tma_load"), out_, "timed out" if code_ == 124 else "", code_)
        assert (g.verdict, g.exit_code) == (verdict, exit_code), (g.verdict, g.detail)
    # a static verdict stands whatever the run says, and the run is still reported
    g = lab.judge(lab.Grade("s", "03_tma_load", verdict="EDITED", detail="line 3 changed"), out, "", code)
    assert (g.verdict, g.exit_code) == ("EDITED", 1) and g.lines[-1] == "  the run: PASS"


def test_a_class_without_a_gpu_gets_every_verdict_a_cpu_can_give(tmp_path):
    # The five sample submissions of a step (tools/lab_samples.py): here, with no GPU, the three verdicts that
    # need no run are final and the two that need one are SKIP, never PASS. On the H200 the same class gives
    # UNFILLED, FAIL, EDITED, NO-BUILD and PASS (results/labs/grade_class_NVIDIA_H200.csv).
    p = run([sys.executable, "tools/lab_samples.py", "06", "--out", str(tmp_path)])
    assert p.returncode == 0, p.stderr
    p = run(["make", "grade-class", "NN=06", f"DIR={tmp_path / '06_transpose'}"])
    assert p.returncode != 0 and "exit 77" in p.stdout, p.stdout + p.stderr
    rows = {r["student"]: r for r in csv.DictReader(open(tmp_path / "06_transpose" / "grades_06.csv"))}
    got = {k: (r["verdict"], r["exit_code"]) for k, r in rows.items()}
    assert got == {"unfilled": ("UNFILLED", "1"), "wrong": ("SKIP", "77"), "edited_checker": ("EDITED", "1"),
                   "no_build": ("NO-BUILD", "2"), "solution": ("SKIP", "77")}, got
    assert "check.py" in rows["edited_checker"]["detail"] and "error" in rows["no_build"]["detail"]


def test_the_grader_never_reads_the_submissions_harness(tmp_path):
    # A submission that brings its own common/tutorial.cuh, a header of step 03 and a check.py that pass
    # everything: the build uses the tutorial's (the program is compiled alone), the checker too.
    p = run([sys.executable, "tools/lab_samples.py", "03", "--out", str(tmp_path)])
    sub = tmp_path / "03_tma_load" / "solution"
    (sub / "common").mkdir()
    (sub / "common" / "tutorial.cuh").write_text("#error the student's harness was used\n")
    (sub / "03_tma_load" / "mbarrier.cuh").write_text("#error the student's header was used\n")
    p = run([sys.executable, "tools/lab.py", "grade", "03", str(sub)])
    assert "was used" not in p.stdout, p.stdout
    assert p.returncode == 1 and "03_tma_load: EDITED (mbarrier.cuh changed" in p.stdout, p.stdout


def links(text):
    return [m[3] for m in lab.LINK.finditer(text) if not re.match(r"^[a-z]+:|^#", m[3])]


def test_a_copy_made_elsewhere_has_no_dead_link(tmp_path):
    run(["make", "lab-06", f"LAB={tmp_path}"])
    for target in links((tmp_path / "06_transpose" / "README.md").read_text()):
        assert (tmp_path / "06_transpose" / target.split("#")[0]).exists(), target


def test_the_bundle_stands_alone(tmp_path):
    # Unpacked anywhere: its own README, every link resolves, every lab builds, `make grade-NN` needs no
    # variable, the GPU targets SKIP (exit 77), and what needs the full tutorial says so instead of a traceback.
    run([sys.executable, "tools/lab.py", "dist", "--out", str(tmp_path / "labs.tar.gz")])
    with tarfile.open(tmp_path / "labs.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    root = tmp_path / "tutorial-labs"
    assert (root / "README.md").read_text().startswith("# Hopper data movement: the labs")
    for md in root.rglob("*.md"):
        for target in links(md.read_text()):
            assert (md.parent / target.split("#")[0]).exists(), f"{md.relative_to(root)}: dead link {target}"
    p = run(["make", "-C", str(root), "-j2", "all"])
    assert p.returncode == 0, p.stdout + p.stderr
    for step in STEP_DIRS:
        assert "warning" not in (root / "build" / f"{step}.log").read_text().lower()
        p = run(["make", "-C", str(root), f"grade-{step[:2]}"])
        assert f"{step}: UNFILLED (hole {step[:2]}.1" in p.stdout and p.returncode != 0, p.stdout + p.stderr
    p = run([sys.executable, "tools/lab.py", "grade", "03", "."], cwd=root)
    assert p.returncode == 1 and "UNFILLED" in p.stdout, p.stdout + p.stderr
    p = run(["make", "-C", str(root), "check-03"])
    assert "03_tma_load: SKIP" in p.stdout and p.returncode != 0, p.stdout + p.stderr
    for target in ("results-table", "bench", "test", "bug-03", "lab-03", "lab-dist"):
        p = run(["make", "-C", str(root), target])
        assert p.returncode == 2 and "not part of the lab bundle" in p.stdout and "Traceback" not in p.stderr, target
    p = run(["make", "-C", str(root), "help"])
    assert p.returncode == 0 and "lab bundle" in p.stdout


def test_the_h200_class_got_five_distinct_right_verdicts():
    # The sample class of tools/lab_samples.py, graded on the H200 with `make grade-class` (recorded).
    rows = list(csv.DictReader(open(REPO / "results" / "labs" / "grade_class_NVIDIA_H200.csv")))
    want = {"unfilled": "UNFILLED", "wrong": "FAIL", "edited_checker": "EDITED", "no_build": "NO-BUILD", "solution": "PASS"}
    steps = sorted({r["step"] for r in rows})
    assert len(steps) >= 3, steps
    for step in steps:
        got = {r["student"]: r for r in rows if r["step"] == step}
        assert {k: r["verdict"] for k, r in got.items()} == want, step
        for r in got.values():
            assert int(r["exit_code"]) == lab.VERDICT_EXIT[r["verdict"]]
        assert got["solution"]["parts_passed"] == got["solution"]["parts_total"] != "0"
        assert int(got["wrong"]["parts_passed"]) < int(got["wrong"]["parts_total"]) and got["wrong"]["detail"]
