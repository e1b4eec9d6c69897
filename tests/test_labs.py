"""The classroom labs' copies (tools/lab_copy.py, lab_bundle.py, `make lab-NN`, `make lab-dist`).

Every step has holes with balanced markers; outside its holes the student copy is the solution, line for line;
every copy builds with the tutorial's flags and no warning; no answer (the solution's, or any correct sample
fill's) stands in any file of any copy or of the bundle, up to renamed variables; a lesson shows a quoted hole
as one TODO block; holes may live in a step's part headers (a synthetic step in a temporary tree, below).
The grader's tests are tests/test_lab_grading.py.
"""

import os
import pathlib
import re
import shutil
import sys
import tarfile

import pytest

from conftest import REPO, STEP_DIRS, run

sys.path.insert(0, str(REPO / "tools"))
import checker  # noqa: E402
import contract  # noqa: E402
import lab_bundle  # noqa: E402
import lab_compare  # noqa: E402
import lab_copy  # noqa: E402
import lab_fills  # noqa: E402
import lab_samples  # noqa: E402

MARKER = re.compile(r"^\s*// LAB-(BEGIN|STUB|END)")


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_every_step_has_balanced_holes(step_dir):
    found = lab_copy.step_holes(step_dir)
    assert found, f"{step_dir} has no lab hole"
    for rel in lab_copy.student_files(step_dir):
        text = (REPO / rel).read_text()
        assert sum(1 for ln in text.splitlines() if MARKER.match(ln) and "LAB-BEGIN" in ln) == len(lab_copy.holes(text))
    assert [lab for lab, _, _ in found] == [f"{step_dir[:2]}.{k}" for k in range(1, len(found) + 1)]
    for _, _, h in found:
        assert len(h.hint) > 20, f"{step_dir}: a hole needs a real hint, got {h.hint!r}"
    for other in STEP_DIRS:  # holes only in a step's student files: other headers are included whole elsewhere
        for p in (REPO / other).rglob("*"):
            if p.is_file() and p.suffix in (".cu", ".cuh", ".h") and str(p.relative_to(REPO)) not in \
                    lab_copy.student_files(other) and "twins" not in p.parts:
                assert "LAB-BEGIN" not in p.read_text(), f"{p.relative_to(REPO)}: a hole outside the step's student files"


def test_markers_are_checked():
    for bad, why in [("// LAB-BEGIN: a\nx;\n", "no LAB-END"), ("x;\n// LAB-END\n", "without a LAB-BEGIN"),
                     ("// LAB-BEGIN: a\n// LAB-BEGIN: b\n// LAB-END\n", "inside the hole"),
                     ("// LAB-STUB: y;\n", "outside a hole"), ("//LAB-END\n", "malformed")]:
        with pytest.raises(lab_copy.MarkerError, match=why):
            lab_copy.holes(bad)


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_student_copy_is_the_solution_outside_its_holes(step_dir, tmp_path):
    lab_copy.make_lab(step_dir, tmp_path)
    for rel, labels in lab_copy.hole_labels(step_dir).items():
        solution = (REPO / rel).read_text()
        holes = lab_copy.holes(solution)
        kept, inside = [], False
        for ln in solution.splitlines():
            if "// LAB-BEGIN:" in ln:
                inside = True
            elif "// LAB-END" in ln:
                inside = False
            elif not inside:
                kept.append(ln)
        rest, skip = [], 0
        for ln in (tmp_path / rel).read_text().splitlines():
            m = lab_copy.TODO.match(ln)
            if m:
                h = holes[labels.index(m["label"])]
                assert m["hint"] == h.hint
                skip = len(h.stubs)
                continue
            if skip:
                assert ln.strip() in [s.strip() for h in holes for s in h.stubs], f"{rel}: expected a stub, got {ln!r}"
                skip -= 1
                continue
            rest.append(ln)
        assert rest == kept, rel
        assert "LAB-BEGIN" not in (tmp_path / rel).read_text(), f"{rel}: the solution leaked into the copy"
    for f in lab_copy.step_files(step_dir):  # the other files of the step: as they are, but the lesson's quotes
        rel = str(f.relative_to(REPO))
        if rel not in lab_copy.hole_labels(step_dir):
            want = lab_copy.relink(lab_copy.scrub_lesson(f.read_text()), step_dir, lambda p: (tmp_path / p).exists()) \
                if f.name == "README.md" else f.read_text()
            assert (tmp_path / rel).read_text() == want, rel


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_student_copy_builds_without_warnings(step_dir, tmp_path):
    # `make grade-NN` itself: it builds the copy's student files with the tutorial's flags; the copy as handed
    # out is UNFILLED whatever the GPU says (here there is none), and make's exit is not 0.
    p = run(["make", f"lab-{step_dir[:2]}", f"LAB={tmp_path}"])
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(["make", f"grade-{step_dir[:2]}", f"LAB={tmp_path}"])
    work = REPO / "build" / "grade" / step_dir / tmp_path.name
    assert (work / "program").is_file(), p.stdout + p.stderr
    assert "warning" not in (work / "build.log").read_text().lower(), (work / "build.log").read_text()
    assert p.returncode != 0 and f"{step_dir}: UNFILLED (hole {step_dir[:2]}.1" in p.stdout, p.stdout


REFERENCE_RUNS = REPO / "results" / "runs" / "NVIDIA_H200"


def saved_run(path):
    code, out, _ = contract.recorded_run(path.read_text())
    return out + "\n", code


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
    # the tarball itself: every step's student files with their TODOs and no marker, the harness, the bundle's mark
    out = tmp_path / "labs.tar.gz"
    p = run([sys.executable, "tools/lab.py", "dist", "--out", str(out)])
    assert p.returncode == 0, p.stderr
    with tarfile.open(out) as tar:
        names = tar.getnames()
        for step in STEP_DIRS:
            for rel, labels in lab_copy.hole_labels(step).items():
                assert f"tutorial-labs/{rel}" in names
                text = tar.extractfile(f"tutorial-labs/{rel}").read().decode()
                assert all(f"TODO(lab {lab})" in text for lab in labels) and "LAB-BEGIN" not in text, rel
        assert "tutorial-labs/common/tutorial.cuh" in names and "tutorial-labs/Makefile" in names
        assert "tutorial-labs/README.md" in names and "tutorial-labs/.lab-bundle" in names


# ---- no answer anywhere a student can read -------------------------------------------------------------------

NAMES = lab_compare.vocabulary()
# The code every copy ships whole: the harness and the steps' wrapper headers. A correct fill whose shape is
# already there (raw PTX that is a wrapper's own asm statement) teaches nothing a student does not have.
SHIPPED = " ".join(" " + " ".join(lab_compare.shape(p.read_text(), NAMES)) + " " for d in ["common", *STEP_DIRS]
                   for p in sorted((REPO / d).rglob("*")) if p.suffix in (".cuh", ".h") and "parts" not in p.parts)
# Every answer: each hole's solution, and each correct sample fill (another way to the same answer is an answer)
ANSWERS = lab_compare.answer_shapes(NAMES) | {
    f"{label} {name}": shape for label, fills in lab_fills.FILLS.items() for name, body in fills.items()
    if name.startswith("correct") for shape in [lab_compare.shape(body, NAMES)]
    if " " + " ".join(shape) + " " not in SHIPPED}


def readable_files(root: pathlib.Path):
    """Every file of a copy a student can read: sources, headers, lessons, data, whatever its name."""
    return [f for f in sorted(root.rglob("*")) if f.is_file()]


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_no_student_copy_holds_an_answer(step_dir, tmp_path):
    # No answer, up to renamed variables (tools/lab_compare.py, shape()), in any file of the copy: a program or a
    # part (another kernel doing the same with its own names is the answer one paste away), a header, the
    # lesson (its quotes become the hole's TODO), everything else. No exemption, whatever the suffix.
    lab_copy.make_lab(step_dir, tmp_path)
    files = readable_files(tmp_path)
    assert {f.suffix for f in files} >= {".cu", ".md", ".py"}
    for f in files:
        assert not lab_compare.pasted_answers(f.read_text(), ANSWERS, NAMES), \
            f"{f.relative_to(tmp_path)} in the student copy holds {lab_compare.pasted_answers(f.read_text(), ANSWERS, NAMES)}"


def test_the_bundle_holds_no_answer():
    for name, body in lab_bundle.bundle_files().items():
        text = body.read_text(errors="replace") if isinstance(body, pathlib.Path) else body
        assert not lab_compare.pasted_answers(text, ANSWERS, NAMES), \
            f"{name} in the bundle holds {lab_compare.pasted_answers(text, ANSWERS, NAMES)}"


def test_the_bundle_ships_no_sample_and_nothing_of_the_instructors():
    # The sample fills are answers written other ways, which the shapes above need not see: their files are not
    # shipped at all, nor the planted mistakes, the tests, the results or the instructor's guide.
    names = set(lab_bundle.bundle_files())
    assert not {n for n in names if re.search(r"lab_(samples|fills)|(^|/)(bugs|tests|results|notebooks)/", n)}, names
    assert "labs/README.md" not in names and "tools/lab_fills.py" not in names and "tools/lab_samples.py" not in names
    shipped = {n.removeprefix("tools/") for n in names if n.startswith("tools/")}
    imported = set()
    for tool in (t for t in shipped if t.endswith(".py")):
        for module in re.findall(r"^(?:import|from) (\w+)", (REPO / "tools" / tool).read_text(), re.M):
            if (REPO / "tools" / f"{module}.py").is_file():
                imported.add(f"{module}.py")
    assert imported <= shipped, f"the bundle's tools import {imported - shipped}, which it does not ship"


def test_the_leak_check_sees_an_answer_under_other_names():
    # 03.1's answer pasted into another kernel with that kernel's own names, in a diff's lines, in a lesson's
    # quote: found. The same calls with another shape (a coordinate computed): not the answer.
    answer = ANSWERS["03.1"]
    assert " ".join(answer) == "mbar_arrive_expect_tx ( $ , $ ) ; tma_load_2d ( $ , $ , $ , $ , $ ) ;"
    pasted = "    if (lane == 0) {\n        mbar_arrive_expect_tx(full, nbytes);  // arm\n        tma_load_2d(s, m, x, y, full);\n"
    assert lab_compare.pasted_answers(pasted, ANSWERS, NAMES) == ["03.1"]
    assert lab_compare.pasted_answers("```diff\n-mbar_arrive_expect_tx(b, n);\n+tma_load_2d(d, m, x, y, b);\n```",
                                      ANSWERS, NAMES) == ["03.1"]
    assert not lab_compare.pasted_answers("mbar_arrive_expect_tx(&bar, n); tma_load_2d(box, &map, x, y, &bar);", ANSWERS, NAMES)
    assert not lab_compare.pasted_answers("mbar_arrive_expect_tx(b, n); tma_load_2d(d, m, x + 1, y, b);", ANSWERS, NAMES)
    # a correct sample fill is an answer too: its own shape is looked for
    assert any(k.startswith("03.1 correct") for k in lab_compare.pasted_answers(lab_fills.FILLS["03.1"]["correct_helper"],
                                                                                ANSWERS, NAMES))


# ---- a lesson shows a quoted hole as one TODO block --------------------------------------------------------------

LESSON = """Some text.

```cuda
static float f(float x) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        x = x * 2.0f + 1.0f;  // the answer's first line
        x = x - 0.5f * x + 3.0f;  // and its second
    }
    return x;
}
```

```diff
--- a/99_demo/demo.cu
+++ b/99_demo/demo.cu
     for (int i = 0; i < 4; ++i) {
-        x = x * 2.0f + 1.0f;  // the answer's first line
+        x = x * 3.0f + 1.0f;  // a planted mistake
         x = x - 0.5f * x + 3.0f;  // and its second
     }
```
"""
SOURCE = """static float f(float x) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        // LAB-BEGIN: apply the map twice per step
        x = x * 2.0f + 1.0f;  // the answer's first line
        x = x - 0.5f * x + 3.0f;  // and its second
        // LAB-STUB: (void)x;
        // LAB-END
    }
    return x;
}
"""


def test_a_quoted_hole_becomes_one_todo_block(monkeypatch):
    # The listing keeps every line around the hole (the loop, the brace after it, the return) and shows the hole
    # as the copy does: its TODO line and its stub, once, at the listing's indentation; the diff likewise.
    monkeypatch.setattr(lab_copy, "all_holes", lambda: [("99.1", "99_demo/demo.cu", lab_copy.holes(SOURCE)[0])])
    monkeypatch.setattr(lab_copy, "solution_text", lambda rel: SOURCE)
    got = lab_copy.scrub_lesson(LESSON)
    todo = "// TODO(lab 99.1): apply the map twice per step"
    assert got.count(todo) == 2 and "the answer's" not in got, got
    assert f"""    for (int i = 0; i < 4; ++i) {{
        {todo}
        (void)x;
    }}
    return x;
}}""" in got, got
    assert f"""     for (int i = 0; i < 4; ++i) {{
         {todo}
         (void)x;
     }}""" in got, got


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_every_quoted_hole_in_a_lesson_is_one_block(step_dir):
    # In the real lessons: each listing shows a hole's TODO at most once, right after the line the lesson quoted
    # before the hole, and then the hole's stubs (a run of TODO lines, or stray pieces of the answer, fail).
    got = lab_copy.scrub_lesson((REPO / step_dir / "README.md").read_text())
    holes = {lab: h for lab, _, h in lab_copy.all_holes()}
    for block in re.findall(r"```[a-z]*\n(.*?)```", got, re.S):
        lines = block.splitlines()
        labels = [m["label"] for ln in lines for m in [lab_copy.TODO.match(ln.lstrip("+- ") if ln[:1] in "+-" else ln)] if m]
        assert len(labels) == len(set(labels)), f"{step_dir}: a listing shows {labels}"
        for i, ln in enumerate(lines):
            m = lab_copy.TODO.match(ln[1:] if block.startswith("---") and ln[:1] in "+- " else ln)
            if m:
                stubs = [s.strip() for s in lines[i + 1:i + 1 + len(holes[m["label"]].stubs)]]
                assert stubs == [s.strip() for s in holes[m["label"]].stubs], (step_dir, m["label"], stubs)


# ---- holes in part headers: a synthetic step in a tree of its own ---------------------------------------------

PART = """#pragma once
// A part of 01_demo: the staged step, included by 01_demo's program and by 02_next's.
static __device__ __forceinline__ void stage_one(const float* in, float* out) {
    __shared__ float tile[256];
    // LAB-BEGIN: stage your element through shared memory, then write your partner's (threadIdx.x ^ 32)
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x ^ 32];
    // LAB-STUB: (void)in, (void)out;
    // LAB-END
}
"""
DEMO = """// 01_demo: a synthetic step, a program and a part
#include <cstdio>
#include "01_demo/parts/stage.cuh"

__global__ void demo(const float* in, float* out) { stage_one(in, out); }

static __device__ __forceinline__ float twice(float x) {
    // LAB-BEGIN: return twice x, as a product
    return 2.0f * x;
    // LAB-STUB: return x;
    // LAB-END
}

__global__ void scale(float* v) { v[threadIdx.x] = twice(v[threadIdx.x]); }

int main() {
    printf("== 01_demo: a synthetic step\\n");
    fprintf(stderr, "no Hopper GPU here\\n");
    return 77;
}
"""
NEXT = """// 02_next: a synthetic step built on 01_demo's part
#include "01_demo/parts/stage.cuh"

__global__ void next(const float* in, float* out) { stage_one(in, out); }

int main() { return 77; }
"""
CHECK = """perf_floors = {}
headline = "check:demo"
sass = {}
lab = {%s}
"""
LESSON_DEMO = """# 01_demo

```cuda
static __device__ __forceinline__ void stage_one(const float* in, float* out) {
    __shared__ float tile[256];
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x ^ 32];
}
```
"""


@pytest.fixture
def parts_tree(tmp_path, monkeypatch):
    """A tutorial of two synthetic steps: 01_demo (a program and a part, a hole in each) and 02_next (a program
    that includes 01_demo's part), with this repository's tools and harness; contract.REPO points at it."""
    root = tmp_path / "tree"
    for d in ("tools", "common"):
        shutil.copytree(REPO / d, root / d, ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("Makefile", "requirements.txt", ".clang-format", "labs/STUDENT.md"):
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / f, root / f)
    files = {"01_demo/demo.cu": DEMO, "01_demo/parts/stage.cuh": PART, "01_demo/README.md": LESSON_DEMO,
             "01_demo/expected_output.txt": "== 01_demo: a synthetic step\n", "02_next/next.cu": NEXT,
             "01_demo/check.py": CHECK % """
    1: {"teaches": "the element crosses threads through shared memory", "hole": {"*": ["st.shared", "ld.shared"]},
        "exchange": ["*"]},
    2: {"teaches": "twice, as a product", "hole": {"*": ["mul.f32|add.f32"]}},""",
             "02_next/check.py": CHECK % "", "02_next/expected_output.txt": "", "02_next/README.md": "# 02_next\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.setattr(contract, "REPO", root)
    monkeypatch.setattr(checker, "REPO", root)
    return root


def test_holes_in_a_part_header_are_numbered_as_the_compiler_reads_them(parts_tree):
    assert lab_copy.student_files("01_demo") == ["01_demo/demo.cu", "01_demo/parts/stage.cuh"]
    # the part is included before the program's own hole: its hole is 01.1
    assert lab_copy.hole_labels("01_demo") == {"01_demo/demo.cu": ["01.2"], "01_demo/parts/stage.cuh": ["01.1"]}
    assert lab_copy.student_files("02_next") == ["02_next/next.cu"]  # 01_demo's part is 01_demo's, not 02_next's
    assert [(lab, rel) for lab, rel, _ in lab_copy.step_holes("01_demo")] == [
        ("01.1", "01_demo/parts/stage.cuh"), ("01.2", "01_demo/demo.cu")]


def test_a_copy_and_the_bundle_hold_no_answer_of_a_part(parts_tree, tmp_path):
    # The part travels with its hole cut out, in the copy and in the bundle; its lesson shows the TODO; no file
    # of either holds an answer, the part's included.
    names = lab_compare.vocabulary()
    answers = lab_compare.answer_shapes(names)
    assert set(answers) == {"01.1", "01.2"}
    lab_copy.make_lab("01_demo", tmp_path / "copy")
    part = (tmp_path / "copy" / "01_demo" / "parts" / "stage.cuh").read_text()
    assert "// TODO(lab 01.1): stage your element" in part and "(void)in, (void)out;" in part
    assert "// TODO(lab 01.1)" in (tmp_path / "copy" / "01_demo" / "README.md").read_text()
    for f in readable_files(tmp_path / "copy"):
        assert not lab_compare.pasted_answers(f.read_text(), answers, names), f
    for name, body in lab_bundle.bundle_files().items():
        text = body.read_text(errors="replace") if isinstance(body, pathlib.Path) else body
        assert not lab_compare.pasted_answers(text, answers, names), name
    holes = lab_bundle.bundle_files()["labs/handed_out/01_demo/holes.txt"]
    assert holes.splitlines() == ["01_demo/demo.cu 01.2 7 8", "01_demo/parts/stage.cuh 01.1 4 5"], holes


def links(text):
    return [m[3] for m in lab_copy.LINK.finditer(text) if not re.match(r"^[a-z]+:|^#", m[3])]


def test_a_copy_made_elsewhere_has_no_dead_link(tmp_path):
    run(["make", "lab-06", f"LAB={tmp_path}"])
    for target in links((tmp_path / "06_transpose" / "README.md").read_text()):
        assert (tmp_path / "06_transpose" / target.split("#")[0]).exists(), target


def test_the_bundle_stands_alone(tmp_path):
    # Unpacked, committed to git and cloned, as a class hands it around: its own README, every link resolves,
    # every lab builds, `make grade-NN` needs no variable, `holes` lists every hole, nvcc found through
    # CUDA_HOME alone, the GPU targets SKIP (exit 77), and what needs the full tutorial says so, naming itself.
    run([sys.executable, "tools/lab.py", "dist", "--out", str(tmp_path / "labs.tar.gz")])
    with tarfile.open(tmp_path / "labs.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    git = ["git", "-c", "user.name=student", "-c", "user.email=student@example.com", "-c", "init.defaultBranch=main"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the labs"]):
        p = run([*git, *cmd], cwd=tmp_path / "tutorial-labs")
        assert p.returncode == 0, p.stderr
    p = run([*git, "clone", "-q", str(tmp_path / "tutorial-labs"), str(tmp_path / "clone")])
    assert p.returncode == 0, p.stderr
    root = tmp_path / "clone"
    assert (root / "labs" / "handed_out" / "03_tma_load" / "holes.txt").is_file(), "the clone lost what was handed out"
    assert (root / "README.md").read_text().startswith("# Hopper data movement: the labs")
    for md in root.rglob("*.md"):
        for target in links(md.read_text()):
            assert (md.parent / target.split("#")[0]).exists(), f"{md.relative_to(root)}: dead link {target}"
    p = run([sys.executable, "tools/lab.py", "holes"], cwd=root)
    listed = re.findall(r"^(\d\d\.\d+)  (\S+):(\d+)  (.+)$", p.stdout, re.M)
    assert [h[0] for h in listed] == [lab for d in STEP_DIRS for lab, _, _ in lab_copy.step_holes(d)], p.stdout
    for _, path, line, hint in listed:
        assert hint in (root / path).read_text().splitlines()[int(line) - 1], (path, line)
    p = run(["make", "-C", str(root), "-j2", "all"])
    assert p.returncode == 0, p.stdout + p.stderr
    for step in STEP_DIRS:
        assert "warning" not in (root / "build" / f"{step}.log").read_text().lower()
        p = run(["make", "-C", str(root), f"grade-{step[:2]}"])
        assert f"{step}: UNFILLED (hole {step[:2]}.1" in p.stdout and p.returncode != 0, p.stdout + p.stderr
    p = run([sys.executable, "tools/lab.py", "grade", "03", "."], cwd=root)
    assert p.returncode == 1 and "UNFILLED" in p.stdout, p.stdout + p.stderr
    # no nvcc on PATH: CUDA_HOME names the toolkit, for make and for the grader make asks
    nvcc = shutil.which("nvcc")
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if not (pathlib.Path(d) / "nvcc").exists())
    env = dict(os.environ, PATH=path, CUDA_HOME=str(pathlib.Path(nvcc).resolve().parent.parent))
    p = run(["make", "-C", str(root), "build/03_tma_load", "-B", "grade-03"], env=env)
    assert "UNFILLED (hole 03.1" in p.stdout and "not found" not in p.stdout + p.stderr, p.stdout + p.stderr
    p = run(["make", "-C", str(root), "check-03"])
    assert "03_tma_load: SKIP" in p.stdout and p.returncode != 0, p.stdout + p.stderr
    for target in ("results-table", "bench", "test", "bug-03", "lab-03", "lab-dist"):
        p = run(["make", "-C", str(root), target])
        assert p.returncode == 2 and f"make {target}: not part of the lab bundle" in p.stdout, (target, p.stdout)
        assert "Traceback" not in p.stderr, target
    p = run(["make", "-C", str(root), "help"])
    assert p.returncode == 0 and "lab bundle" in p.stdout


def test_grade_class_names_no_link_flags_of_its_own():
    # the class target's command line asks no shell for a step's libraries (the grader finds them), so a missing
    # or wrong NN is the grader's one line, with no tool's error before it
    for args in (["NN=11", "DIR=build"], ["DIR=build"]):
        p = run(["make", "grade-class", *args])
        assert p.returncode != 0 and "sed:" not in p.stdout + p.stderr, p.stdout + p.stderr
