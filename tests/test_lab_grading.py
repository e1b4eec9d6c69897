"""The labs' grader (tools/lab.py grade and grade-class; lab_compare, lab_rules, lab_grade, lab_run, lab_class).

Each rule of the grader can fail, and a test shows it failing (tests/defects/lab-*.diff plants the defect each
test is aimed at): an edit outside a hole, a hole left as handed out, a hole's own code lacking what it
teaches (every sample fill of tools/lab_fills.py graded up to MECHANISM on this machine), a floor of the hole's
own lines (and no other), a race, a protocol report, a SKIP that is no grade, a prebuilt build for other files.
"""

import concurrent.futures
import csv
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, STEP_DIRS, run
from test_labs import parts_tree, saved_run  # noqa: F401  (the fixture: a synthetic step with a part header)

sys.path.insert(0, str(REPO / "tools"))
import checker  # noqa: E402
import lab  # noqa: E402
import lab_class  # noqa: E402
import lab_compare  # noqa: E402
import lab_copy  # noqa: E402
import lab_fills  # noqa: E402
import contract  # noqa: E402
import lab_grade  # noqa: E402
import lab_rules  # noqa: E402
import lab_run  # noqa: E402
import lab_samples  # noqa: E402

REFERENCE_RUNS = REPO / "results" / "runs" / "NVIDIA_H200"
HOLES = [lab for d in STEP_DIRS for lab, _, _ in lab_copy.step_holes(d)]


def nvcc_command():
    """The steps' compiler and flags (make wrote them into build/flags.txt)."""
    flags = REPO / "build" / "flags.txt"
    if not flags.is_file():
        run(["make", "build/flags.txt"])
    return ["nvcc", *shlex.split(flags.read_text())]


# ---- what counts as an edit -----------------------------------------------------------------------------------

COPY = "int main() {\n    int x = 1;\n    // TODO(lab 09.1): set y\n    int y = 0;\n    return x + y;\n}\n"
SPANS = [(2, 3)]  # the TODO line and its stub


@pytest.mark.parametrize("submitted, edits, untouched", [
    (COPY, [], ["09.1"]),                                                    # as handed out
    (COPY.replace("int y = 0;", "int y = 41;"), [], []),                      # the stub replaced
    (COPY.replace("    // TODO(lab 09.1): set y\n", ""), [], ["09.1"]),      # the TODO line removed: a comment
    (COPY.replace("    int y = 0;\n", "    int y = 2;\n    y += x;\n"), [], []),  # lines added in the hole
    (COPY.replace("int x = 1;", "int x = 2;"), ["line 2 changed"], ["09.1"]),  # a line outside changed
    (COPY.replace("return x + y;", "return 0;").replace("int y = 0;", "int y = 1;"), ["line 5 changed"], []),
    (COPY + "int z;\n", ["lines added before line 7"], ["09.1"]),           # a line added outside
    (COPY.replace("    int x = 1;\n", ""), ["line 2 deleted"], ["09.1"]),  # a line outside deleted
])
def test_edits_outside_the_holes_are_found(submitted, edits, untouched):
    found = lab_compare.outside_edits(COPY, SPANS, submitted)
    assert [e.split(":")[0] for e in found] == edits, found
    assert lab_compare.untouched_holes(COPY, SPANS, submitted, ["09.1"]) == untouched


def test_a_hole_is_every_line_between_the_code_around_it():
    # where the grader brackets a fill: from the line after the code before the hole to the line before the code
    # after it, whatever the student wrote there (more lines, comments, a lambda)
    filled = COPY.replace("    int y = 0;\n", "    // mine\n    auto f = [](int v) { return v; };\n    int y = f(2);\n")
    assert lab_compare.compare_with_copy(COPY, SPANS, filled)[2] == [(2, 5)]
    assert lab_compare.compare_with_copy(COPY, SPANS, COPY)[2] == [(2, 3)]


def test_whitespace_and_comments_are_not_edits():
    for submitted in [COPY.replace("    int x = 1;", "  int   x=1 ;"), COPY.replace("    return x", "\n\n    return x"),
                      COPY.replace("int x = 1;", "int x = 1;  // mine"), "// my name\n" + COPY,
                      COPY.replace("int main() {", "int main() { /* the lab */")]:
        assert lab_compare.outside_edits(COPY, SPANS, submitted) == [], submitted
        assert lab_compare.untouched_holes(COPY, SPANS, submitted, ["09.1"]) == ["09.1"], submitted
    edited = COPY.replace("return x + y;", 'puts("a // b"); return x + y;')  # a string literal is code
    assert [e.split(":")[0] for e in lab_compare.outside_edits(COPY, SPANS, edited)] == ["line 5 changed"]


def test_an_edit_shows_what_changed():
    long = "    const int x = " + " + ".join(["1"] * 40) + ";"
    copy = COPY.replace("    int x = 1;", long)
    edits = lab_compare.outside_edits(copy, SPANS, copy.replace(long, long[:-2] + "2;"))
    assert len(edits) == 1 and edits[0].startswith("line 2 changed:") and "+ 1 ;' -> " in edits[0] and "+ 2 ;'" in edits[0]


@pytest.mark.parametrize("step_dir", ["03_tma_load", "08_descriptor_update"])
def test_the_lines_around_a_real_hole(step_dir):
    # On a copy made by student_copy (its spans, not hand-written ones): the line right after each hole and
    # the line right before it are outside it; lines added right after its stubs are in it.
    rel = lab_copy.student_files(step_dir)[0]
    copy, spans, labels = lab_copy.handed_out(step_dir, rel)
    lines = copy.splitlines()
    for label, (first, last) in zip(labels, spans):
        after = next(i for i in range(last + 1, len(lines)) if lab_compare.code_lines(lines[i]))
        before = next(i for i in range(first - 1, 0, -1) if lab_compare.code_lines(lines[i]))
        for i in (before, after):
            edited = lines[:i] + ["int edited_here = 0; " + lines[i]] + lines[i + 1:]
            assert [e.split(":")[0] for e in lab_compare.outside_edits(copy, spans, "\n".join(edited))] == [f"line {i + 1} changed"]
        filled = lines[:last + 1] + ["int added_after_the_stubs = 1;"] + lines[last + 1:]
        assert lab_compare.outside_edits(copy, spans, "\n".join(filled)) == []
        assert label not in lab_compare.untouched_holes(copy, spans, "\n".join(filled), labels)


@pytest.mark.parametrize("name, original", [
    ("check.py", (REPO / "03_tma_load" / "check.py").read_text()),
    ("mbarrier.cuh", (REPO / "03_tma_load" / "mbarrier.cuh").read_text()),
    ("expected_output.txt", (REPO / "03_tma_load" / "expected_output.txt").read_text())])
def test_a_guarded_file_is_compared_as_code(name, original):
    # A comment, a docstring or blank lines anywhere: the same code. A number changed: not.
    if name.endswith(".py"):
        same = "# mine\n" + original.replace("\n\n", "\n\n\n") + "\n# the end\n"
        other = original.replace("perf_floors = {", "perf_floors = {\n    'x': 0.1,", 1)
    elif name.endswith(".cuh"):
        same = "/* mine */\n" + original.replace("\n", "  // mine\n", 3) + "\n"
        other = original.replace("#pragma once", "#pragma once\nstatic int extra;", 1)
    else:
        same = original.replace("\n", "  \n")
        other = original.replace("PASS", "FAIL", 1)
    assert lab_compare.same_code(name, original, same)
    assert not lab_compare.same_code(name, original, other)


# ---- the rules: a hole's own code ---------------------------------------------------------------------------

BODY = """
	mov.u32 	%r1, %tid.x;
	// begin inline asm
	// lab hole 1 begin
	// end inline asm
	setp.eq.b32 	%p1, %r1, 0;
	@%p1 bra 	$L__BB0_2;
	bra.uni 	$L__BB0_1;
$L__BB0_2:
	ld.shared.f32 	%f5, [%r9];
	// lab hole 1 end
	bra.uni 	$L__BB0_3;
$L__BB0_1:
st.shared.f32 	[%r2], %f1;
$L__BB0_4:
	bar.sync 	0;
	@%p1 bra 	$L__BB0_4;
	// lab hole 1 end
$L__BB0_3:
	st.global.f32 	[%rd4], %f6;
	ret;
""".splitlines()


def test_a_holes_code_is_what_control_flow_reaches_from_its_start_to_its_end():
    # both paths out of the hole (an early return's end marker too), a loop inside it, inline asm at column 0;
    # nothing after the end markers (the global store), nothing before the start (mov)
    assert lab_rules.hole_code(BODY, 1) == ["setp.eq.b32 \t%p1, %r1, 0;", "bra \t$L__BB0_2;", "bra.uni \t$L__BB0_1;",
                                            "ld.shared.f32 \t%f5, [%r9];", "st.shared.f32 \t[%r2], %f1;",
                                            "bar.sync \t0;", "bra \t$L__BB0_4;"]
    assert lab_rules.hole_code(BODY, 2) is None


def test_each_kind_of_hole_rule_can_fail():
    code = {"_Z1kv": BODY}
    demangle = lambda f: "k"  # noqa: E731
    ok = {"hole": {"*": ["ld.shared", "st.shared|cp.async"]}, "hole_absent": {"k": ["st.global"]}}
    assert lab_rules.hole_problems(ok, code, 1, demangle) == []
    assert lab_rules.hole_problems({"hole": {"*": ["cp.async"]}}, code, 1, demangle) == ["k: no cp.async in the hole's code"]
    assert lab_rules.hole_problems({"hole_absent": {"*": ["bar."]}}, code, 1, demangle) == ["k: has bar. in the hole's code"]
    assert lab_rules.hole_problems({"hole": {"other": ["ld"]}}, code, 1, demangle) == ["other: the hole's code is not in it"]
    assert lab_rules.hole_problems({"hole_order": {"*": [("ld.shared", "bar.sync", "st.shared")]}}, code, 1, demangle) \
        == ["k: ld.shared.f32 with no bar.sync between it and the st.shared before it"]  # the load is first here
    assert lab_rules.hole_problems(ok, code, 2, demangle) == ["the hole's code is in no kernel: nothing the program runs comes from it"]
    # the loads come first in program order here: no barrier between them and a store before them
    assert lab_rules.unordered(["ld.shared.f32 %f1, [%r2];"], "ld.shared", "bar.sync", "st.shared")
    assert not lab_rules.unordered(["st.shared.f32 [%r1], %f0;", "bar.sync 0;", "ld.shared.f32 %f1, [%r2];"],
                                   "ld.shared", "bar.sync", "st.shared")
    assert lab_rules.unordered(["st.shared.f32 [%r1], %f0;", "bar.sync 0;", "st.shared.f32 [%r1+4], %f0;",
                                "ld.shared.f32 %f1, [%r2];"], "ld.shared", "bar.sync", "st.shared")
    # the data cross threads unless every load reads back an address a store of the hole wrote
    own = {"_Z1kv": ["// lab hole 1 begin", "\tst.shared.f32 \t[%r1], %f0;", "\tld.shared.f32 \t%f1, [%r1];",
                     "// lab hole 1 end"]}
    crossed = {"_Z1kv": [ln.replace("%f1, [%r1]", "%f1, [%r7]") for ln in own["_Z1kv"]]}
    assert lab_rules.hole_problems({"exchange": ["*"]}, own, 1, demangle)[0].startswith("k: every ld.shared of the hole")
    assert lab_rules.hole_problems({"exchange": ["*"]}, crossed, 1, demangle) == []


def test_a_hole_entry_with_no_rule_is_refused(parts_tree):
    # A hole whose entry holds no rule a fill could fail (none, or an empty one) would grade any fill PASS: the
    # step's rules do not load. A perf line that is not one of the step's is refused too.
    check = parts_tree / "02_next" / "check.py"
    for entry, why in [('{"teaches": "x"}', "at least one rule"), ('{"teaches": "x", "hole": {}}', "at least one rule"),
                       ('{"teaches": "x", "hole": {"*": []}, "perf": ["p"]}', "at least one rule"),
                       ('{"hole": {"*": ["ld"]}}', "at least one rule"), ('{"teaches": "x", "holes": {"*": ["ld"]}}', "unknown")]:
        check.write_text(f'perf_floors = {{}}\nheadline = "check:x"\nsass = {{}}\nlab = {{1: {entry}}}\n')
        with pytest.raises(ValueError, match=why):
            checker.load_step("02_next")
    check.write_text('perf_floors = {}\nheadline = "check:x"\nsass = {}\nlab = {1: {"teaches": "x", "hole": {"*": ["ld"]}, "perf": ["p"]}}\n')
    with pytest.raises(ValueError, match="not PERF lines"):
        lab_grade.hole_rules("02_next")


# ---- every sample fill, up to MECHANISM, on this machine -------------------------------------------------------

def sample_mechanism(step, name, files, tmp_path, needs_log):
    """The mechanism problems of one sample's files, as prepare() finds them, without the full build: the PTX of
    the marked copy; for build_log rules, ptxas on the student's files (a cubin)."""
    nvcc, work = nvcc_command(), tmp_path / name
    work.mkdir(parents=True)
    _, _, regions = lab_grade.compare_files(step, files)
    log = ""
    if needs_log:
        tree = work / "src"
        for rel, text in files.items():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(text)
        p = subprocess.run([nvcc[0], f"-I{tree}", *nvcc[1:], "-cubin", str(tree / next(iter(files))), "-o",
                            str(work / "x.cubin")], capture_output=True, text=True, cwd=REPO)
        log = p.stdout + p.stderr
    return lab_grade.mechanism_problems(step, files, regions, nvcc, work, None, log)[0]


@pytest.mark.parametrize("hole", HOLES)
def test_every_sample_fill_gets_its_mechanism_verdict(hole, tmp_path):
    # tools/lab_fills.py, hole by hole: the solution and every correct fill (a helper, a rolled loop, raw PTX,
    # another sufficient wait) pass the hole's rules; every bypass and mistake fails them, each named by what
    # it lacks; a race or a protocol mistake passes them (the runs name it: results/labs/); the copy as handed
    # out fails them wherever its stubs do nothing. A rule that rejects a correct fill, or that a bypass
    # passes, fails here (tests/defects/lab-mechanism-*.diff plants one per rule).
    step = lab_samples.step_of(hole)
    k = int(hole.split(".")[1])
    rules = lab_grade.hole_rules(step)[k]
    fills = {lab_samples.sample_name(hole, n): n for n in lab_fills.FILLS.get(hole, {}) if not n.startswith("paste")}
    samples = lab_samples.samples(step)
    names = ["solution", *fills] + (["unfilled"] if hole != "05.1" else [])  # 05.1's stub reads the tile, unswizzled
    # each sample in its own folder: compiled as many at once as there are cores
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        found = dict(zip(names, pool.map(lambda name: sample_mechanism(
            step, name, samples[name], tmp_path, bool(rules.get("build_log_absent"))), names)))
    for name in names:
        problems = found[name][k]
        if lab_samples.expected(name) & {"PASS", "RACE", "PROTOCOL"}:
            assert problems == [], f"{hole} {name}: a correct fill is MECHANISM: {problems}"
        else:
            assert problems, f"{hole} {name}: passes the rules of the hole it skips"
            assert all(re.match(r"[\w<>(), ]+: ", p) for p in problems), problems  # each names its kernel or ptxas


def test_every_hole_has_its_samples_or_says_why_not():
    for hole in HOLES:
        fills = lab_fills.FILLS.get(hole, {})
        assert sum(n.startswith("correct") for n in fills) >= 2, f"{hole}: two correct fills, written differently"
        for kind in ("bypass", "protocol", "paste"):
            has = any(n.startswith(kind) or (kind == "protocol" and n.startswith("race")) for n in fills)
            assert has != ((hole, kind) in lab_fills.NOT_POSSIBLE), (hole, kind)


# ---- grading a step with parts (the synthetic tree) ------------------------------------------------------------

def demo_submission(root, folder, step="01_demo", part=None, program=None):
    """A student folder for a synthetic step: the copy, its holes filled with the solution unless given."""
    files = lab_samples.filled(step)
    for rel, text in files.items():
        if rel.endswith("stage.cuh") and part is not None:
            files[rel] = part
        elif rel.endswith(".cu") and program is not None:
            files[rel] = program
    lab_samples.write(folder, step, files)
    return folder


def test_a_step_with_parts_is_graded_with_the_students_parts(parts_tree, tmp_path):
    nvcc = [*nvcc_command()[:1], "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-I."]
    work = lambda name: tmp_path / "work" / name  # noqa: E731
    g = lab_grade.prepare("01_demo", demo_submission(parts_tree, tmp_path / "right"), work("right"), nvcc, [])
    assert g.verdict == "" and (work("right") / "src" / "01_demo" / "parts" / "stage.cuh").is_file(), g.detail
    assert set(g.kernels) == {"demo", "scale"}, g.kernels
    filled = lab_samples.filled("01_demo")["01_demo/parts/stage.cuh"]
    # the student's part is the one built
    g = lab_grade.prepare("01_demo", demo_submission(parts_tree, tmp_path / "broken",
                                                     part=filled.replace("__syncthreads();", "#error mine\n")),
                          work("broken"), nvcc, [])
    assert g.verdict == "NO-BUILD" and "parts/stage.cuh" in g.detail and "mine" in g.detail, g.detail
    # an edit outside the part's hole, and the part's hole left as handed out
    g = lab_grade.prepare("01_demo", demo_submission(parts_tree, tmp_path / "edited",
                                                     part=filled.replace("float tile[256]", "float tile[512]")),
                          work("edited"), nvcc, [])
    assert g.verdict == "EDITED" and g.detail.startswith("parts/stage.cuh line 4 changed"), g.detail
    copy = lab_copy.handed_out("01_demo", "01_demo/parts/stage.cuh")[0]
    g = lab_grade.prepare("01_demo", demo_submission(parts_tree, tmp_path / "unfilled", part=copy), work("unfilled"),
                          nvcc, [])
    assert (g.verdict, g.detail) == ("UNFILLED", "hole 01.1 as handed out"), g.detail
    # a fill of the part that reads its own slot back: the data cross no thread
    own = filled.replace("tile[threadIdx.x ^ 32]", "tile[threadIdx.x]")
    g = lab_grade.prepare("01_demo", demo_submission(parts_tree, tmp_path / "own", part=own), work("own"), nvcc, [])
    assert g.verdict == "MECHANISM" and "no data crosses threads" in g.detail, g.detail
    # a missing part is no program
    shutil.rmtree(tmp_path / "right" / "01_demo" / "parts")
    g = lab_grade.prepare("01_demo", tmp_path / "right", work("gone"), nvcc, [])
    assert (g.verdict, g.detail) == ("NO-BUILD", "no 01_demo/parts/stage.cuh in the submission")


def test_a_step_that_includes_another_steps_part(parts_tree, tmp_path):
    # 02_next includes 01_demo's part. Graded in the tutorial, the part is the tutorial's (the submission's own
    # copy is never read); in the bundle, it is the student's own fill of lab 01 (lab 02 builds on it).
    nvcc = [*nvcc_command()[:1], "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-I."]
    sub = tmp_path / "student"
    lab_samples.write(sub, "02_next", lab_samples.filled("02_next"))
    (sub / "01_demo" / "parts").mkdir(parents=True)
    (sub / "01_demo" / "parts" / "stage.cuh").write_text("#error the submission's part was used\n")
    g = lab_grade.prepare("02_next", sub, tmp_path / "w1", nvcc, [])
    assert g.verdict == "" and "was used" not in (tmp_path / "w1" / "build.log").read_text(), g.detail
    bundle = tmp_path / "bundle"
    for name, body in lab_bundle_files().items():
        (bundle / name).parent.mkdir(parents=True, exist_ok=True)
        (bundle / name).write_bytes(body.read_bytes() if isinstance(body, pathlib.Path) else body.encode())
    (bundle / "01_demo" / "parts" / "stage.cuh").write_text("#error the student's own part\n")
    lab_copy.contract.REPO = bundle  # (the fixture restores it)
    checker.REPO = bundle
    g = lab_grade.prepare("02_next", sub, tmp_path / "w2", nvcc, [])
    assert g.verdict == "NO-BUILD" and "the student's own part" in g.detail, g.detail


def lab_bundle_files():
    import lab_bundle
    return lab_bundle.bundle_files()


# ---- the runs -------------------------------------------------------------------------------------------------

def with_perf(out, name, pct):
    return re.sub(rf"^(PERF   {name} .* )\s*[\d.]+ % of memcpy$", lambda m: f"{m[1]}{pct:5.1f} % of memcpy", out, flags=re.M)


def test_only_the_holes_own_floors_are_graded():
    # 01.1 answers for the staged parts' speed, not the host transfers': a pageable transfer slowed by another
    # process (the FAIL of a correct fill) is not the student's; a staged copy below its floor is.
    out, code = saved_run(REFERENCE_RUNS / "01_memcpy_baseline.txt")
    g = lab_grade.Grade("s", "01_memcpy_baseline")
    assert lab_run.judge(g, with_perf(out, "h2d_pageable", 0.1), "", code) == [] and g.verdict == "PASS", g.detail
    g = lab_grade.Grade("s", "01_memcpy_baseline")
    problems = lab_run.judge(g, with_perf(out, "staged_one", 50.0), "", code)
    assert g.verdict == "FAIL" and problems == ["PERF staged_one is 50.0 % of memcpy, below its floor of 84.7 %"], problems
    assert lab_run.perf_only(problems)
    g = lab_grade.Grade("s", "01_memcpy_baseline")  # the claim between the hole's own lines: batching pays
    problems = lab_run.judge(g, with_perf(out, "staged_batched_occ1", 30.0), "", code)
    assert g.verdict == "FAIL" and any("should beat staged_one_occ1" in p for p in problems), problems


@pytest.mark.parametrize("second, verdict", [(False, "PASS"), (True, "FAIL")])
def test_a_floor_that_fails_is_run_again(tmp_path, monkeypatch, second, verdict):
    # A floor failed once is run again: the second run decides, and the report says there were two.
    out, code = saved_run(REFERENCE_RUNS / "01_memcpy_baseline.txt")
    runs = [with_perf(out, "staged_one", 50.0), with_perf(out, "staged_one", 50.0) if second else out]
    calls = []

    def fake_run(exe, timeout, args, env=None):
        if pathlib.Path(exe).name == "program":
            calls.append(exe)
            return runs[len(calls) - 1], "", code
        if pathlib.Path(exe).name == "program.shadow":
            return "RESULT: PASS\n", TOOL_RAN, 0
        return "========= ERROR SUMMARY: 0 errors\n", "", 0
    monkeypatch.setattr(lab_run, "run_program", fake_run)
    monkeypatch.setattr(lab_run, "sanitizer", lambda: "/opt/cuda/bin/compute-sanitizer")
    monkeypatch.setattr(lab_run, "shadow_tool", lambda: pathlib.Path("/x/libshadow_tool.so"))
    monkeypatch.setattr(lab_run, "shadow_reference", lambda step, tool, timeout: (True, ""))
    g = lab_run.run_and_judge(lab_grade.Grade("s", "01_memcpy_baseline", work=tmp_path, kernels=["staged_one"]), 60)
    assert len(calls) == 2 and g.verdict == verdict, (calls, g.verdict, g.detail)
    assert any("run 1; a floor fails only twice in a row" in ln for ln in g.lines), g.lines
    if verdict == "FAIL":
        assert g.detail.endswith("(in two runs)"), g.detail
    assert (tmp_path / "run2.txt").is_file()


def test_each_outcome_of_a_run_has_its_verdict():
    out, code = saved_run(REFERENCE_RUNS / "03_tma_load.txt")
    for out_, code_, verdict, exit_code in [(out, code, "PASS", 0), (out.replace("PASS  (0 of", "FAIL  (3 of", 1), 1, "FAIL", 1),
                                            ("", 124, "TIMEOUT", 124), ("", 77, "SKIP", 77)]:
        g = lab_grade.Grade("s", "03_tma_load")
        lab_run.judge(g, out_, "timed out" if code_ == 124 else "", code_)
        assert (g.verdict, g.exit_code) == (verdict, exit_code), (g.verdict, g.detail)
    g = lab_grade.Grade("s", "03_tma_load", verdict="EDITED", detail="line 3 changed")
    lab_run.judge(g, out, "", code)
    assert (g.verdict, g.exit_code) == ("EDITED", 1) and g.lines[-1] == "  the run: PASS"


def test_a_sanitizer_is_read_by_its_summary():
    # compute-sanitizer's own words: a clean summary is clean (its line says "hazards" too), an error is named.
    clean = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
    assert lab_run.sanitizer_findings(clean, 0) == ([], "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)", True)
    assert lab_run.sanitizer_findings("========= ERROR SUMMARY: 0 errors\n", 0)[2]
    race = ("========= Error: Race reported between Write access at staged_copy+0x1a0\n"
            "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")
    assert lab_run.sanitizer_findings(race, 1) == (["Error: Race reported between Write access at staged_copy+0x1a0"],
                                                   "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)", False)
    assert not lab_run.sanitizer_findings("========= Invalid __global__ read of size 16 bytes\n"
                                          "========= ERROR SUMMARY: 3 errors\n", 1)[2]
    assert not lab_run.sanitizer_findings("RESULT: PASS\n", 0)[2], "no summary: the tool did not run"
    assert not lab_run.sanitizer_findings(clean, 1)[2], "a non-zero exit is never clean"


def sanitizer_output(errors=0, race=False):
    found = "========= Error: Race reported between Read access at load_box+0x1a0 and Write access\n" if race else ""
    return f"RESULT: PASS\n{found}========= ERROR SUMMARY: {errors} error{'s' if errors != 1 else ''}\n"


def recorded_stderr(name: str) -> str:
    """A recorded H200 run's stderr, as the checker's tool printed it (its reports indented, then its summary)."""
    return contract.recorded_run((REFERENCE_RUNS / name).read_text())[2] + "\n"


SHADOW_REPORT = recorded_stderr("01_memcpy_baseline.bug1.shadow.txt")  # reports, then the tool's summary
TOOL_RAN = "shadow: checked 12 launches of 3 kernels, 40 CTAs (0 unchecked: their slot was in use); no rule broken\n"


@pytest.mark.parametrize("racecheck, shadow, verdict", [
    ((sanitizer_output(), 0), ("RESULT: PASS\n", TOOL_RAN, 0), "PASS"),
    ((sanitizer_output(1, race=True), 1), ("RESULT: PASS\n", TOOL_RAN, 0), "RACE"),
    ((sanitizer_output(), 0), ("RESULT: FAIL\n", SHADOW_REPORT, 1), "PROTOCOL"),  # on stderr, indented
    ((sanitizer_output(), 0), ("RESULT: FAIL\n", TOOL_RAN, 1), "FAIL"),
    ((sanitizer_output(), 0), ("RESULT: PASS\n", "", 0), "FAIL"),  # the tool did not watch: never a pass
    ((sanitizer_output(), 77), ("", "", 0), "SKIP"),
])
def test_a_passing_run_is_raced_then_shadowed(tmp_path, monkeypatch, racecheck, shadow, verdict):
    # After a passing run: the step's compute-sanitizer tools one at a time, each watching EVERY kernel a hole's
    # code is in (not only the first), then the shadow build. A sanitizer's error is RACE, named; a shadow
    # report (indented, as the programs print it) is PROTOCOL, named; both clean: PASS.
    out, code = saved_run(REFERENCE_RUNS / "03_tma_load.txt")
    calls, filters = [], []

    def fake_run(exe, timeout, args, env=None):
        name = pathlib.Path(exe).name
        if name == "program":
            calls.append(name)
            return out, "", code
        if name == "program.shadow":
            calls.append(name)
            assert env and env["CUDA_INJECTION64_PATH"] == "/x/libshadow_tool.so", "the shadow build runs under the tool"
            assert env["CUDA_MODULE_LOADING"] == "EAGER", "its modules load before their first launch (the hand-over)"
            return shadow
        calls.append(args[1])
        filters.append([a for a in args if a.startswith("kns=")])
        return (racecheck if args[1] == "racecheck" else (sanitizer_output(), 0))[0], "", \
            (racecheck if args[1] == "racecheck" else (sanitizer_output(), 0))[1]
    monkeypatch.setattr(lab_run, "run_program", fake_run)
    monkeypatch.setattr(lab_run, "sanitizer", lambda: "/opt/cuda/bin/compute-sanitizer")
    monkeypatch.setattr(lab_run, "shadow_tool", lambda: pathlib.Path("/x/libshadow_tool.so"))
    monkeypatch.setattr(lab_run, "shadow_reference", lambda step, tool, timeout: (True, ""))
    g = lab_run.run_and_judge(lab_grade.Grade("s", "03_tma_load", work=tmp_path, kernels=["tile_load", "one_box"]), 60)
    assert (g.verdict, g.exit_code) == (verdict, lab_grade.VERDICT_EXIT[verdict]), (g.verdict, g.detail, calls)
    tools = lab_grade.build_facts("03_tma_load")["sanitize_tools"]
    assert filters and all(f == ["kns=tile_load", "kns=one_box"] for f in filters), filters
    if verdict in ("RACE", "SKIP"):
        assert calls == ["program", *tools[:tools.index("racecheck") + 1]], calls
    else:
        assert calls == ["program", *tools, "program.shadow"], calls
    if verdict == "RACE":
        assert g.detail.startswith("racecheck: Error: Race reported") and "tile_load, one_box" in g.detail, g.detail
    if verdict == "PROTOCOL":
        assert g.detail.startswith("A3 shared-race: read of shared"), g.detail
    assert all(gradescope_test(t) for t in lab_run.results_json(g)["tests"])


def test_a_checker_that_fails_the_solution_judges_no_student(tmp_path, monkeypatch):
    # The tool is first tried on the tutorial's own solution: if it flags it (a false alarm) the protocol stage
    # is not judged, so a correct fill is never failed by it; the grade says why, and the student's shadow
    # build is not run.
    out, code = saved_run(REFERENCE_RUNS / "03_tma_load.txt")
    ran = []

    def fake_run(exe, timeout, args, env=None):
        ran.append(pathlib.Path(exe).name)
        if pathlib.Path(exe).name == "program":
            return out, "", code
        if pathlib.Path(exe).name == "03_tma_load":  # the solution's shadow build, under the tool
            return "RESULT: FAIL\n", SHADOW_REPORT, 1
        return sanitizer_output(), "", 0
    monkeypatch.setattr(lab_run, "run_program", fake_run)
    monkeypatch.setattr(lab_run, "sanitizer", lambda: "/opt/cuda/bin/compute-sanitizer")
    monkeypatch.setattr(lab_run, "shadow_tool", lambda: pathlib.Path("/x/libshadow_tool.so"))
    monkeypatch.setattr(lab_run.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, "", ""))
    monkeypatch.setattr(lab_run, "_REFERENCE", {})
    g = lab_run.run_and_judge(lab_grade.Grade("s", "03_tma_load", work=tmp_path, kernels=["tile_load"]), 60)
    assert g.verdict == "PASS" and "program.shadow" not in ran and "03_tma_load" in ran, (g.verdict, ran)
    shadow_test = next(t for t in g.tests if "shadow" in t["name"])
    assert shadow_test["status"] is None and "fails this tutorial's own solution" in shadow_test["output"]


def test_no_protocol_grade_without_the_checkers_tool(tmp_path, monkeypatch):
    # The shadow build alone sees only the wrappers' hooks: without the tool a clean run is a SKIP, never a PASS.
    out, code = saved_run(REFERENCE_RUNS / "03_tma_load.txt")
    monkeypatch.setattr(lab_run, "run_program", lambda exe, timeout, args, env=None:
                        (out, "", code) if pathlib.Path(exe).name == "program" else (sanitizer_output(), "", 0))
    monkeypatch.setattr(lab_run, "sanitizer", lambda: "/opt/cuda/bin/compute-sanitizer")
    monkeypatch.setattr(lab_run, "shadow_tool", lambda: None)
    g = lab_run.run_and_judge(lab_grade.Grade("s", "03_tma_load", work=tmp_path, kernels=["tile_load"]), 60)
    assert (g.verdict, g.exit_code) == ("SKIP", 77) and "make shadow-tool" in g.detail, (g.verdict, g.detail)


def gradescope_test(t):
    """A test of Gradescope's results.json: "passed" or "failed", or, for a test that could not run here, no
    status and no score, its output saying why."""
    if "status" in t:
        return set(t) == {"name", "status", "output"} and t["status"] in ("passed", "failed")
    return set(t) == {"name", "output"} and t["output"].startswith("not run here: ")


def test_a_skip_is_no_grade_in_results_json():
    g = lab_grade.Grade("s", "03_tma_load", verdict="SKIP", detail="no Hopper GPU here (never a pass)")
    g.test("the run: every rule of the step", None, "no Hopper GPU")
    r = lab_run.results_json(g)
    assert "score" not in r and "max_score" not in r and r["output"].endswith("(no Hopper GPU here (never a pass))"), r
    assert r["tests"] == [{"name": "the run: every rule of the step", "output": "not run here: no Hopper GPU"}]
    for verdict, score in (("PASS", 1.0), ("FAIL", 0.0), ("MECHANISM", 0.0)):
        assert lab_run.results_json(lab_grade.Grade("s", "03_tma_load", verdict=verdict))["score"] == score


def test_a_machine_without_cuobjdump_grades_every_rule_it_can(tmp_path, monkeypatch, capsys):
    # With no cuobjdump (none on PATH, CUDA_HOME's has none, no wheel): the PTX rules need only the compiler, so
    # a fill that bypasses the hole is still MECHANISM, final; only a rule on the SASS cannot be judged: SKIP (77,
    # never a pass), with one line that says how to get the disassembler and its size first.
    import sass
    path = [d for d in __import__("os").environ["PATH"].split(":") if not (pathlib.Path(d) / "cuobjdump").exists()]
    monkeypatch.setenv("PATH", ":".join(path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(sass, "REPO", tmp_path)
    with pytest.raises(sass.ToolMissing):
        sass.find_tool("cuobjdump")
    samples = lab_samples.samples("03_tma_load")
    for name in ("bypass_1_plain_arrive", "correct_1_helper"):
        lab_samples.write(tmp_path / "class" / name, "03_tma_load", samples[name])
    nvcc = nvcc_command()
    g = lab_grade.prepare("03_tma_load", tmp_path / "class" / "bypass_1_plain_arrive", tmp_path / "w1", nvcc, [])
    assert g.verdict == "MECHANISM" and "expect_tx" in g.detail, g.detail
    rules = {1: {**lab_grade.hole_rules("03_tma_load")[1], "sass": {"tile_load": ["UTMALDG.2D"]}}}
    monkeypatch.setattr(lab_grade, "hole_rules", lambda step: rules)
    g = lab_grade.prepare("03_tma_load", tmp_path / "class" / "correct_1_helper", tmp_path / "w2", nvcc, [])
    assert g.verdict == "SKIP" and g.exit_code == 77, g.detail
    assert g.detail.startswith("cuobjdump not found") and "`make grader-tools`" in g.detail and "MB" in g.detail, g.detail


def test_a_prebuilt_build_is_reused_only_for_the_same_files_rules_and_flags(tmp_path, monkeypatch):
    # grade-class --prebuilt runs what another machine built, only if nothing it depends on changed since
    samples = lab_samples.samples("03_tma_load")
    sub = tmp_path / "s"
    lab_samples.write(sub, "03_tma_load", samples["unfilled"])
    work, nvcc = tmp_path / "w", nvcc_command()
    monkeypatch.setattr(lab_grade, "prepare_here", lambda step, s, w, n, l: (w.mkdir(parents=True, exist_ok=True),
                                                                             lab_grade.Grade(s.name, step, verdict="UNFILLED", detail="x", work=w))[1])
    lab_grade.prepare("03_tma_load", sub, work, nvcc, [])
    assert lab_grade.prepared("03_tma_load", sub, work, nvcc, []).verdict == "UNFILLED"
    assert lab_grade.prepared("03_tma_load", sub, work, [*nvcc, "-DX"], []) is None  # other flags
    assert lab_grade.prepared("03_tma_load", sub, work, nvcc, ["-lcublas"]) is None  # other libraries
    program = sub / "03_tma_load" / "tma_load.cu"
    program.write_text(program.read_text() + "\n")  # even a blank line: another file
    assert lab_grade.prepared("03_tma_load", sub, work, nvcc, []) is None
    lab_grade.prepare("03_tma_load", sub, work, nvcc, [])
    monkeypatch.setattr(lab_grade, "submission_key", lambda *a: "the step's rules changed")
    assert lab_grade.prepared("03_tma_load", sub, work, nvcc, []) is None


# ---- a class ------------------------------------------------------------------------------------------------

def test_a_class_builds_everything_before_the_first_run(tmp_path, monkeypatch):
    # every submission's build (in parallel) ends before any run begins: a run never shares the machine with
    # the class's builds, so a fill gets the verdict it would get alone
    for s in ("a", "b", "c", "d"):
        (tmp_path / "class" / s).mkdir(parents=True)
    events = []
    monkeypatch.setattr(lab_grade, "prepare", lambda step, s, w, n, l: (events.append(("build", s.name)),
                                                                        lab_grade.Grade(s.name, step, work=w))[1])
    monkeypatch.setattr(lab_run, "run_and_judge", lambda g, t: (events.append(("run", g.student)), g.set("PASS", ""), g)[2])
    monkeypatch.setattr(lab_run, "write_logs", lambda g, logs: None)
    assert lab_class.grade_class("03_tma_load", tmp_path / "class", tmp_path / "g.csv", 60, 4, ["nvcc"], [],
                                 tmp_path / "logs") == 0
    kinds = [k for k, _ in events]
    assert kinds == ["build"] * 4 + ["run"] * 4, events


def test_a_class_resumes_only_the_students_graded_as_they_are(tmp_path, monkeypatch):
    # grade-class --resume (a class a time limit stopped): a student graded for these very files is not graded
    # again; one whose files changed since is
    for s in ("a", "b"):
        (tmp_path / "class" / s).mkdir(parents=True)
        (tmp_path / "class" / s / "x.cu").write_text(f"// {s}\n")
    graded = []

    def prepare(step, s, w, n, l):
        w.mkdir(parents=True, exist_ok=True)
        return lab_grade.Grade(s.name, step, work=w)
    monkeypatch.setattr(lab_grade, "prepare", prepare)
    monkeypatch.setattr(lab_grade, "prepared", lambda *a: None)
    monkeypatch.setattr(lab_grade, "submission_key", lambda step, s, n, l: (s / "x.cu").read_text())
    monkeypatch.setattr(lab_run, "run_and_judge", lambda g, t: (graded.append(g.student), g.set("PASS", ""), g)[2])
    monkeypatch.setattr(lab_run, "write_logs", lambda g, logs: None)
    args = ("03_tma_load", tmp_path / "class", tmp_path / "g.csv", 60, 2, ["nvcc"], [], tmp_path / "logs")
    lab_class.grade_class(*args, resume=True)
    assert graded == ["a", "b"]
    (tmp_path / "class" / "b" / "x.cu").write_text("// b, changed\n")
    lab_class.grade_class(*args, resume=True)
    assert graded == ["a", "b", "b"] and lab_class.verdicts(tmp_path / "g.csv") == {"a": "PASS", "b": "PASS"}
    lab_class.grade_class(*args)
    assert graded == ["a", "b", "b", "a", "b"]  # without --resume, every student again
    monkeypatch.setattr(lab_run, "run_and_judge", lambda g, t: (graded.append(g.student), g.set("SKIP", ""), g)[2])
    lab_class.grade_class(*args)
    lab_class.grade_class(*args, resume=True)  # a SKIP (no GPU there) is never kept: judged again here
    assert graded == ["a", "b", "b", "a", "b", "a", "b", "a", "b"]


def test_a_class_without_a_gpu_gets_every_verdict_a_cpu_can_give(tmp_path):
    # A sample class graded with no GPU: the verdicts that need no run (NO-BUILD, EDITED, UNFILLED, MECHANISM)
    # are final; the others are SKIP, never PASS; each row's results.json has no score for a SKIP; exit 77.
    folder = lab_samples.sample_class("03_tma_load", tmp_path, {"solution", "unfilled", "wrong", "edited_checker",
                                                                 "bypass_1_plain_arrive"})
    p = run(["make", "grade-class", "NN=03", f"DIR={folder}", "JOBS=2"])
    assert p.returncode != 0 and "(exit 77)" in p.stdout, p.stdout + p.stderr
    assert re.search(r"5 submissions: EDITED 1, UNFILLED 1, MECHANISM 1, SKIP 2$", p.stdout, re.M), p.stdout
    rows = {r["student"]: r for r in csv.DictReader(open(folder / "grades_03.csv"))}
    assert {k: (r["verdict"], r["exit_code"]) for k, r in rows.items()} == {
        "unfilled": ("UNFILLED", "1"), "wrong": ("SKIP", "77"), "edited_checker": ("EDITED", "1"),
        "solution": ("SKIP", "77"), "bypass_1_plain_arrive": ("MECHANISM", "1")}
    assert "check.py" in rows["edited_checker"]["detail"] and "expect_tx" in rows["bypass_1_plain_arrive"]["detail"]
    for name, r in rows.items():
        log = folder / r["log"]
        result = json.loads((log / "results.json").read_text())
        assert ("score" in result) == (r["verdict"] != "SKIP") and result["extra_data"]["verdict"] == r["verdict"]
        assert result["tests"] and all(gradescope_test(t) for t in result["tests"]), result


def test_a_class_is_final_and_exits_0_when_every_row_is(tmp_path):
    folder = lab_samples.sample_class("03_tma_load", tmp_path, {"unfilled", "bypass_1_plain_arrive"})
    p = run(["make", "grade-class", "NN=03", f"DIR={folder}", "CHECK_TIMEOUT=60"])
    assert p.returncode == 0 and "(exit 77)" not in p.stdout, p.stdout + p.stderr
    assert "2 submissions: UNFILLED 1, MECHANISM 1" in p.stdout, p.stdout


def test_the_grader_never_reads_the_submissions_harness(tmp_path):
    # A submission that brings its own common/tutorial.cuh, a header of step 03 and a check.py that pass
    # everything: the build uses the tutorial's, the checker too; the edited header is reported.
    sub = tmp_path / "solution"
    lab_samples.write(sub, "03_tma_load", lab_samples.samples("03_tma_load")["solution"])
    (sub / "common").mkdir()
    (sub / "common" / "tutorial.cuh").write_text("#error the student's harness was used\n")
    (sub / "03_tma_load" / "mbarrier.cuh").write_text("#error the student's header was used\n")
    (sub / "03_tma_load" / "tensor_map.h").write_text("#error the student's .h header was used\n")
    p = run([sys.executable, "tools/lab.py", "grade", "03", str(sub)])
    assert "was used" not in p.stdout, p.stdout
    assert p.returncode == 1 and re.search(r"03_tma_load: EDITED \(mbarrier.cuh, tensor_map.h changed", p.stdout), p.stdout


# ---- the recorded classes -------------------------------------------------------------------------------------

H200_CLASSES = REPO / "results" / "labs" / "NVIDIA_H200"
CPU_CLASSES = REPO / "results" / "labs" / "CPU"
STATIC = {"NO-BUILD", "EDITED", "UNFILLED", "MECHANISM"}  # the verdicts that need no run: final on any machine


def sample_names(step_dir):
    return set(lab_samples.samples(step_dir)) | {"edited_checker"}


def recorded(folder, step_dir, run_name=""):
    path = folder / f"grades_{step_dir[:2]}{run_name}.csv"
    assert path.is_file(), f"no recorded class {path.relative_to(REPO)}: python3 tools/lab_samples.py {step_dir[:2]} --record"
    return {r["student"]: r for r in csv.DictReader(open(path))}


# No class has been graded on the H200 by this grader (issue 42 is open): the samples changed after the last
# whole class, 03's class was graded once more before the grader tried the checker's tool on the solution first
# (its correct fills failed on the tool's false alarm, results/labs/NVIDIA_H200/grades_03.csv), and the
# session's device time ended in 01's. strict: a class regraded right fails here until its mark goes.
NOT_REGRADED = pytest.mark.xfail(strict=True, reason="no H200 class graded by this grader yet: issue 42 is open")


@pytest.mark.parametrize("step_dir", [pytest.param(d, marks=NOT_REGRADED) for d in STEP_DIRS])
def test_the_h200_class_got_the_right_verdicts(step_dir):
    # The sample class graded on the H200 (tools/lab_samples.py --record), with --jobs 8 and again one at a time:
    # every sample of the step, each with its kind's verdict, the same in both gradings.
    rows = recorded(H200_CLASSES, step_dir)
    assert set(rows) == sample_names(step_dir), f"regrade {step_dir}'s class on the H200: {sorted(set(rows) ^ sample_names(step_dir))}"
    serial = recorded(H200_CLASSES, step_dir, "_serial")
    assert {k: r["verdict"] for k, r in serial.items()} == {k: r["verdict"] for k, r in rows.items()}
    for name, r in rows.items():
        want = lab_samples.expected(name) or set(lab_grade.VERDICT_EXIT) - {"PASS", "SKIP"}
        assert r["verdict"] in want, (name, r["verdict"], r["detail"])
        assert r["step"] == step_dir and int(r["exit_code"]) == lab_grade.VERDICT_EXIT[r["verdict"]], r
        result = json.loads((H200_CLASSES / r["log"] / "results.json").read_text())
        assert result["score"] == (1.0 if r["verdict"] == "PASS" else 0.0) and result["extra_data"]["verdict"] == r["verdict"]
    sol = rows["solution"]
    assert sol["parts_passed"] == sol["parts_total"] != "0"
    names = [t["name"] for t in json.loads((H200_CLASSES / sol["log"] / "results.json").read_text())["tests"]]
    assert any(n.startswith("mechanism") for n in names) and any(n.startswith("compute-sanitizer") for n in names)


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_the_cpu_class_is_final_but_for_the_runs(step_dir):
    # The same class graded on a machine with no GPU (results/labs/CPU/): every row a final static verdict, its
    # kind's where the kind needs no run, or SKIP where the program had to run, never a pass or a fail.
    rows = recorded(CPU_CLASSES, step_dir)
    assert set(rows) == sample_names(step_dir), sorted(set(rows) ^ sample_names(step_dir))
    for name, r in rows.items():
        assert r["verdict"] in STATIC | {"SKIP"}, (name, r["verdict"], r["detail"])
        want = lab_samples.expected(name)
        if want:
            assert r["verdict"] in (want & STATIC or {"SKIP"}), (name, r["verdict"], r["detail"])
        if r["verdict"] == "SKIP":
            assert r["detail"].startswith("the program cannot run here (exit 77)"), (name, r["detail"])
        result = json.loads((CPU_CLASSES / r["log"] / "results.json").read_text())
        assert ("score" in result) == (r["verdict"] != "SKIP") and result["extra_data"]["verdict"] == r["verdict"]
