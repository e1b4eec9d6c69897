"""The classroom labs (tools/lab.py, `make lab-NN`, `make grade-NN`, `make lab-dist`).

Every step has at least one hole with balanced markers; outside its holes the
student copy is the solution, line for line; every student copy builds with
the tutorial's flags and no warning; the grader fails a recorded run of an
unfilled lab on the H200 and passes the recorded run of the solution.
"""

import concurrent.futures
import csv
import hashlib
import json
import os
import pathlib
import re
import shutil
import sys
import tarfile
import textwrap

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


NAMES = lab.vocabulary()
ANSWERS = {f"{d[:2]}.{k}": a for d in STEP_DIRS
           for k, a in enumerate(lab.answer_shapes(lab.step_program(d).read_text(), NAMES), 1)}


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_no_student_copy_holds_an_answer(step_dir, tmp_path):
    # No hole's whole answer, up to renamed variables (tools/lab.py, shape()), stands in any file of the
    # student copy: the program (another kernel doing the same with its own names would be the answer one
    # paste away), the lesson (its quotes become the hole's TODO), everything else. No exemption.
    lab.make_lab(step_dir, tmp_path)
    for f in (tmp_path / step_dir).rglob("*"):
        if f.is_file():
            assert not lab.pasted_answers(f.read_text(), ANSWERS, NAMES), f"{f.name} in the student copy holds the answer"


def test_the_bundle_holds_no_answer():
    for name, body in lab.bundle_files().items():
        text = body.read_text(errors="replace") if isinstance(body, pathlib.Path) else body
        assert not lab.pasted_answers(text, ANSWERS, NAMES), f"{name} in the bundle holds {lab.pasted_answers(text, ANSWERS, NAMES)}"


def test_the_leak_check_sees_an_answer_under_other_names():
    # 03.1's answer pasted into another kernel with that kernel's own names, in a diff's lines, in a lesson's
    # quote: found. The same calls with another shape (a coordinate computed): not the answer.
    answer = ANSWERS["03.1"]
    assert " ".join(answer) == "mbar_arrive_expect_tx ( $ , $ ) ; tma_load_2d ( $ , $ , $ , $ , $ ) ;"
    pasted = "    if (lane == 0) {\n        mbar_arrive_expect_tx(full, nbytes);  // arm\n        tma_load_2d(s, m, x, y, full);\n"
    assert lab.pasted_answers(pasted, ANSWERS, NAMES) == ["03.1"]
    assert lab.pasted_answers("```diff\n-mbar_arrive_expect_tx(b, n);\n+tma_load_2d(d, m, x, y, b);\n```", ANSWERS, NAMES) == ["03.1"]
    # an address taken is another expression, not another name: step 04's `tma_load_2d(box, &map, ...)` is not it
    assert not lab.pasted_answers("mbar_arrive_expect_tx(&bar, n); tma_load_2d(box, &map, x, y, &bar);", ANSWERS, NAMES)
    assert not lab.pasted_answers("mbar_arrive_expect_tx(b, n); tma_load_2d(d, m, x + 1, y, b);", ANSWERS, NAMES)
    program = "int f() {\n    // LAB-BEGIN: compute the answer\n    return compute_the_answer(42);\n    // LAB-STUB: return 0;\n    // LAB-END\n}\n"
    assert lab.solution_lines(program)
    assert "compute_the_answer(42)" not in lab.scrub_lesson("```cuda\n    return compute_the_answer(42);\n```\n", "09", program)


# ---- the grader: what it trusts, what it reports -------------------------------------------------------------

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
    found = lab.outside_edits(COPY, SPANS, submitted)
    assert [e.split(":")[0] for e in found] == edits, found
    assert lab.untouched_holes(COPY, SPANS, submitted, "09_x") == untouched


def test_whitespace_and_comments_are_not_edits():
    # Outside the holes only code counts: re-indenting, blank lines, a comment changed or added are neither an
    # edit nor a fill; the TODO line (a comment) deleted leaves the hole unfilled.
    for submitted in [COPY.replace("    int x = 1;", "  int   x=1 ;"), COPY.replace("    return x", "\n\n    return x"),
                      COPY.replace("int x = 1;", "int x = 1;  // mine"), "// my name\n" + COPY,
                      COPY.replace("int main() {", "int main() { /* the lab */")]:
        assert lab.outside_edits(COPY, SPANS, submitted) == [], submitted
        assert lab.untouched_holes(COPY, SPANS, submitted, "09_x") == ["09.1"], submitted
    assert lab.untouched_holes(COPY, SPANS, COPY.replace("    // TODO(lab 09.1): set y\n", ""), "09_x") == ["09.1"]
    # a string literal is code, even with // inside it
    edited = COPY.replace("return x + y;", 'puts("a // b"); return x + y;')
    assert [e.split(":")[0] for e in lab.outside_edits(COPY, SPANS, edited)] == ["line 5 changed"]


def test_an_edit_shows_what_changed():
    # The change itself is in the message, however long the line: here at its very end.
    long = "    const int x = " + " + ".join(["1"] * 40) + ";"
    copy = COPY.replace("    int x = 1;", long)
    edits = lab.outside_edits(copy, SPANS, copy.replace(long, long[:-2] + "2;"))
    assert len(edits) == 1 and edits[0].startswith("line 2 changed:") and "+ 1 ;' -> " in edits[0] and "+ 2 ;'" in edits[0], edits


@pytest.mark.parametrize("step_dir", ["03_tma_load", "08_descriptor_update"])
def test_the_lines_around_a_real_hole(step_dir):
    # On a copy made by student_copy (its spans, not hand-written ones): the line right after each hole and
    # the line right before it are outside it; lines added right after its stubs are in it.
    solution = lab.step_program(step_dir).read_text()
    copy, spans = lab.student_copy(solution, step_dir)
    lines = copy.splitlines()
    # where each hole is, read off the copy itself: its TODO line, then as many lines as it has stubs
    found = [(i, i + len(h[3])) for i, h in zip((i for i, ln in enumerate(lines) if "// TODO(lab " in ln),
                                                lab.holes(solution))]
    for k, (first, last) in enumerate(found):
        after = next(i for i in range(last + 1, len(lines)) if lab.code_lines(lines[i]))
        before = next(i for i in range(first - 1, 0, -1) if lab.code_lines(lines[i]))
        for i in (before, after):
            edited = lines[:i] + ["int edited_here = 0; " + lines[i]] + lines[i + 1:]
            assert [e.split(":")[0] for e in lab.outside_edits(copy, spans, "\n".join(edited))] == [f"line {i + 1} changed"]
        filled = lines[:last + 1] + ["int added_after_the_stubs = 1;"] + lines[last + 1:]
        assert lab.outside_edits(copy, spans, "\n".join(filled)) == []
        assert f"{step_dir[:2]}.{k + 1}" not in lab.untouched_holes(copy, spans, "\n".join(filled), step_dir)


def test_every_header_of_the_step_is_guarded(tmp_path):
    # A submission's own copy of a step's header is compared too (and never used): .h as well as .cuh.
    for step, header in [("03_tma_load", "tensor_map.h"), ("05_swizzle", "swizzle.h"), ("03_tma_load", "mbarrier.cuh")]:
        assert lab.GUARDED.match(header), header
        sub = tmp_path / header / "student"
        (sub / step).mkdir(parents=True)
        (sub / step / lab.step_program(step).name).write_text(lab.student_text(lab.step_program(step).read_text(), step))
        (sub / step / header).write_text((REPO / step / header).read_text() + "\n// mine\n")
        g = lab.prepare(step, sub, tmp_path / header / "work", ["true"], [])  # the compiler is not reached twice
        assert g.verdict in ("EDITED", "NO-BUILD") and (g.verdict == "NO-BUILD" or header in g.detail), (g.verdict, g.detail)


# ---- the mechanism: what a hole's kernels must show in their machine code ------------------------------------

import lab_samples  # noqa: E402


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_every_hole_states_its_mechanism_and_the_solution_keeps_it(built, step_dir):
    rules = lab.load_step(step_dir).lab
    assert sorted(rules) == list(range(1, len(lab.holes(lab.step_program(step_dir).read_text())) + 1)), \
        f"{step_dir}/check.py: lab needs one entry per hole"
    got = lab.mechanism(step_dir, REPO / "build" / step_dir, lab.step_program(step_dir),
                        (REPO / "build" / f"{step_dir}.log").read_text(), ["nvcc"])
    assert got == {k: [] for k in rules}, got


def mechanism_of(step, program, tmp_path):
    """The mechanism problems of a program text: its device code only (a cubin), with the steps' flags."""
    src = tmp_path / step / lab.step_program(step).name
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(program)
    flags = (REPO / "build" / "flags.txt").read_text().split()
    p = run(["nvcc", *flags, "-cubin", str(src), "-o", str(tmp_path / "program.cubin")])
    assert p.returncode == 0, p.stdout + p.stderr
    return lab.mechanism(step, tmp_path / "program.cubin", src, p.stdout + p.stderr, ["nvcc"])


MECHANISMS: dict[tuple[str, str], dict] = {}  # (step, sha1 of a program text): its mechanism problems


def mechanisms(step, programs, tmp_path):
    """{name: mechanism_of(its program)} for several programs of a step: built in parallel, each text once per
    session (the tests below share the samples' builds: a few seconds, not one build per test)."""
    key = lambda text: (step, hashlib.sha1(text.encode()).hexdigest())  # noqa: E731
    todo = {key(t): t for t in programs.values() if key(t) not in MECHANISMS}
    with concurrent.futures.ThreadPoolExecutor(max(1, min(len(todo), os.cpu_count() or 1))) as pool:
        for k, got in zip(todo, pool.map(lambda k: mechanism_of(step, todo[k], tmp_path / k[1][:12]), todo)):
            MECHANISMS[k] = got
    return {name: MECHANISMS[key(t)] for name, t in programs.items()}


BYPASS_NAMES = {"01_memcpy_baseline": "no STS.128", "02_cp_async": "no LDGSTS", "03_tma_load": "no SYNCS.ARRIVE.TRANS64",
                "05_swizzle": "120 x LDS, want 160", "07_reduce_multicast": "no UTMALDG.2D.MULTICAST", "09_gemm": "ptxas: ptxas info    : (C7519) warpgroup.arrive is injected",
                "10_grouped_gemm": "1 x tensormap.replace.tile.global_address.shared::cta in the PTX, want 3"}
SAMPLED = [(d, kind) for d in STEP_DIRS for kind in lab_samples.FILLS.get(d, {}) if kind != "paste"]


@pytest.mark.parametrize("step_dir, kind", SAMPLED)
def test_a_bypass_is_mechanism_and_a_protocol_mistake_is_not(built, step_dir, kind, tmp_path):
    # tools/lab_samples.py's fills: one that gets the right output without what the hole teaches is caught
    # by the machine code alone (MECHANISM, final without a GPU); a protocol mistake or a race is not, so it
    # reaches the runs, where a sanitizer or the shadow build names it (results/labs/).
    hole, _ = lab_samples.FILLS[step_dir][kind]
    got = mechanisms(step_dir, {kind: lab_samples.samples(step_dir)[kind]}, tmp_path)[kind]
    if "MECHANISM" in lab_samples.EXPECTED[kind]:
        assert got[hole], f"{step_dir}'s bypass passes the mechanism rules of hole {hole}"
        named = BYPASS_NAMES[step_dir]  # what the rule must name: what the bypass left out
        assert any(named in p for p in got[hole]), (named, got[hole])
    else:
        assert got == {k: [] for k in got}, got


def solution_with(step, *edits):
    """The solution as a student copy holds it, each (regex, replacement) applied: a line outside the holes
    taken out, say. Each regex must match (a stale one fails here, not silently)."""
    text = lab_samples.samples(step)["solution"]
    for rx, new in edits:
        text, n = re.subn(rx, new, text)
        assert n, f"{step}: {rx!r} matches nothing in the solution"
    return text


def hole_filled_with(step, k, drop):
    """The solution with hole k's lines, those that match `drop` taken out."""
    solution = lab.step_program(step).read_text()
    first, end, _, _, _ = lab.holes(solution)[k - 1]
    body = [ln for ln in solution.splitlines()[first + 1:end] if not lab.STUB.match(ln)]
    kept = [ln for ln in body if not re.search(drop, ln)]
    assert len(kept) < len(body), f"{step}.{k}: {drop!r} is in none of its lines"
    return lab_samples.filled(solution, step, {k: textwrap.dedent("\n".join(kept))})


def without_the_mechanism(hole):
    """{name: (program, [(kernel, what) its problems for `hole` must name])}: programs that lack what the hole
    teaches. The copy as handed out (its stubs), the sample bypass, and, where the rule also covers what lies
    outside the hole (a wait, a fence, the other barrier), the solution with that taken out."""
    step = next(d for d in STEP_DIRS if d[:2] == hole[:2])
    unfilled = lab.student_text(lab.step_program(step).read_text(), step)
    bypass = lab_samples.samples(step).get("bypass", "")

    def each(kernels, *whats):
        return [(k, w) for k in kernels for w in whats]
    staged, pipelines = ("staged_one", "staged_batched"), ("pipeline<1>", "pipeline<4>")
    stores06 = ("tma_naive", "tma_swizzle", "tma_swizzle_batched")
    gemms = ("gemm_ws<Config<0, 4, true, true, 2, 1, 0> >", "gemm_ws<Config<1, 5, true, true, 1, 1, 0> >", "wgmma_sync")
    replace08 = [f"0 x tensormap.replace.tile.global_{f}.{space}" for space in ("shared::cta", "global")
                 for f in ("address", "dim", "stride")]
    fences10 = ["mbarrier.try_wait", "tensormap.replace.tile.global_address.shared::cta",
                "tensormap.replace.tile.global_dim.shared::cta", "tensormap.cp_fenceproxy",
                "fence.proxy.tensormap::generic.acquire.gpu"]
    acquires08 = r"\n    if \(lane == 0\) \{\n\s*tmap_acquire_gpu\(&slots\[0\]\);\n\s*tmap_acquire_gpu\(&slots\[1\]\);\n    \}"
    cases = {  # each made only when its hole is asked for
        "01.1": lambda: {
            "unfilled": (unfilled, each(staged, "no STS.128", "no LDS.128", "x BAR.SYNC")),
            # the fill, the first barrier alone: it passed every run then, racecheck reporting the race
            "the first barrier alone": (hole_filled_with(step, 1, r"__syncthreads\(\);.*next tile"),
                                        each(staged, "1 x BAR.SYNC"))},
        "02.1": lambda: {
            "unfilled": (unfilled, [("pipeline<1>", "no LDGSTS")]),
            "bypass": (bypass, [("pipeline<1>", "no LDGSTS"), *each(pipelines, "has STS.128")]),
            "no commit, no wait": (
                solution_with(step, (r"\n\s*cp_async_commit_group\(\);\n\s*cp_async_wait_group<STAGES - 1>\(\);", "")),
                [("pipeline<1>", "no LDGDEPBAR"), ("pipeline<1>", "no DEPBAR.LE SB0, 0x0"),
                 ("pipeline<4>", "no DEPBAR.LE SB0, 0x3")])},
        "03.1": lambda: {
            "unfilled": (unfilled, each(("tile_load", "one_box"), "no SYNCS.ARRIVE.TRANS64", "no UTMALDG.2D")),
            "bypass": (bypass, each(("tile_load", "one_box"), "no SYNCS.ARRIVE.TRANS64"))},
        "04.1": lambda: {
            "unfilled": (unfilled, each(("tma_copy", "copy_ring<false>"), "no UTMASTG.2D")),
            "no read wait": (solution_with(step, (r"bulk_wait_group_read<1>\(\);", "(void)0;")),
                             each(("tma_copy", "copy_ring<false>"), "no DEPBAR.LE SB0, 0x1"))},
        # read_swizzled sees no global memory: what the rule forbids is shown by pattern 3 read from the input
        "05.1": lambda: {
            "pattern 3 from global memory": (
                solution_with(step, (r"= read_pattern\(p, plain, pad, swz, swz_base, t, k\);",
                                     "= p == 3 ? tile_in[t * 32 + k] : read_pattern(p, plain, pad, swz, swz_base, t, k);")),
                [("bank_patterns", "x LDG.E, want 32")]),
            # the value computed from its position (the tile is position-coded): nothing read where the TMA put it
            "bypass": (bypass, [("bank_patterns", "120 x LDS, want 160")])},
        "06.1": lambda: {
            "unfilled": (unfilled, each((*stores06, "tma_pipelined"), "no UTMASTG.2D")),
            "no read wait": (solution_with(step, (r"bulk_wait_group_read<[^>]*>\(\);", "(void)0;")),
                             [*each(stores06, "no DEPBAR.LE SB0, 0x0"), ("tma_pipelined", "no DEPBAR.LE SB0, 0x1")])},
        "07.1": lambda: {
            "unfilled": (unfilled, each([f"reduce_ops_tensor<(ReduceOp){k}>" for k in range(8)], "no UTMAREDG.2D"))},
        "07.2": lambda: {
            "unfilled": (unfilled, [("broadcast<true>", "no UTMALDG.2D.MULTICAST"), ("broadcast<false>", "no UTMALDG.2D")]),
            "bypass": (bypass, [("broadcast<true>", "no UTMALDG.2D.MULTICAST")])},
        "08.1": lambda: {
            "unfilled": (unfilled, each(["grouped_copy<0>"], *replace08[:3])),
            "one release, no acquire": (
                solution_with(step, (r"\n\s*tmap_cp_fenceproxy\(&slots\[1\], &edit\[1\]\);", ""), (acquires08, "")),
                each(["grouped_copy<0>"], "1 x tensormap.cp_fenceproxy", "0 x fence.proxy.tensormap::generic.acquire.gpu"))},
        "08.2": lambda: {
            "unfilled": (unfilled, each(["grouped_copy<1>"], *replace08[3:], "0 x fence.proxy.tensormap::generic.release.gpu",
                                        "0 x fence.proxy.tensormap::generic.acquire.gpu"))},
        "09.1": lambda: {
            "unfilled": (unfilled, each(gemms, "0 x HGMMA.64x256x16", "0 x WARPGROUP.ARRIVE")),
            "bypass": (bypass, [("ptxas", "warpgroup.arrive is injected")])},
        "10.1": lambda: {
            "unfilled": (unfilled, each(["grouped_gemm<3>"], *(f"x {w}" for w in fences10))),
            "bypass": (bypass, each(["grouped_gemm<3>"], "x tensormap.replace.tile.global_address.shared::cta",
                                    "x tensormap.cp_fenceproxy"))},
    }
    return cases[hole]()


HOLES = [f"{d[:2]}.{k}" for d in STEP_DIRS for k in range(1, len(lab.holes(lab.step_program(d).read_text())) + 1)]


@pytest.mark.parametrize("hole", HOLES)
def test_a_program_without_the_mechanism_fails_its_rule(built, hole, tmp_path):
    # Every hole's rule (check.py's lab) against programs that lack what the hole teaches: each fails the rule,
    # naming the kernel and what it lacks, while the solution passes (the test above). A rule weakened so that
    # one of them passes, or so that it no longer names what is missing, fails here
    # (tests/defects/lab-mechanism-*.diff plants one per rule).
    step = next(d for d in STEP_DIRS if d[:2] == hole[:2])
    k = int(hole.split(".")[1])
    cases = without_the_mechanism(hole)
    got = mechanisms(step, {name: program for name, (program, _) in cases.items()}, tmp_path)
    for name, (_, named) in cases.items():
        problems = got[name][k]
        assert problems, f"{hole}: the rule passes a program without the mechanism ({name})"
        missed = [(kernel, what) for kernel, what in named
                  if not any(p.startswith(kernel + ": ") and what in p for p in problems)]
        assert not missed, f"{hole} ({name}): the rule does not name {missed}; it says {problems}"


def test_the_ptx_rules_see_a_missing_release(built, tmp_path):
    # 08.2's global path with every edit and both acquires, but no release: the PTX count names it.
    body = lab_samples.FILLS["08_descriptor_update"]["protocol"][1].replace("tmap_release_gpu();", "")
    got = mechanism_of("08_descriptor_update",
                       lab_samples.filled(lab.step_program("08_descriptor_update").read_text(), "08_descriptor_update",
                                          {2: body}), tmp_path)
    assert got == {1: [], 2: ["grouped_copy<1>: 0 x fence.proxy.tensormap::generic.release.gpu in the PTX, want 1"]}, got


def test_every_step_has_its_samples_or_says_why_not():
    for d in STEP_DIRS:
        for kind in ("bypass", "protocol", "paste"):
            assert (kind in lab_samples.FILLS.get(d, {})) != ((d, kind) in lab_samples.NOT_POSSIBLE), (d, kind)


def test_a_sanitizer_is_read_by_its_summary():
    # compute-sanitizer's own words: a clean summary is clean (its line says "hazards" too), an error is named.
    clean = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
    assert lab.sanitizer_findings(clean, 0) == ([], "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)", True)
    assert lab.sanitizer_findings("========= ERROR SUMMARY: 0 errors\n", 0)[2]
    race = ("========= Error: Race reported between Write access at staged_copy+0x1a0\n"
            "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")
    assert lab.sanitizer_findings(race, 1) == (["Error: Race reported between Write access at staged_copy+0x1a0"],
                                               "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)", False)
    assert not lab.sanitizer_findings("========= Invalid __global__ read of size 16 bytes\n"
                                      "========= ERROR SUMMARY: 3 errors\n", 1)[2]
    assert not lab.sanitizer_findings("RESULT: PASS\n", 0)[2], "no summary: the tool did not run"
    assert not lab.sanitizer_findings(clean, 1)[2], "a non-zero exit is never clean"


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


def test_a_machine_without_cuobjdump_says_so_and_grades_nothing(tmp_path, monkeypatch, capsys):
    # A toolkit without cuobjdump (none on PATH, CUDA_HOME's has none, no .venv wheel): the mechanism rules
    # cannot be checked, so the grade is SKIP (77: this machine cannot judge; never a pass, never a fail) with
    # one line that names what is missing and how to supply it, not a traceback; grade-class goes on with the
    # other students, whose static verdicts stand. (The compiler is `true`: nothing here needs a real build.)
    import sass
    for d in ("solution", "unfilled"):
        lab_samples.write(tmp_path / "class" / d, "03_tma_load", lab_samples.samples("03_tma_load")[d])
    path = [d for d in os.environ["PATH"].split(os.pathsep) if not (pathlib.Path(d) / "cuobjdump").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))  # a toolkit with no bin/cuobjdump
    monkeypatch.setattr(sys, "prefix", str(tmp_path))  # no wheel in this interpreter's environment
    monkeypatch.setattr(sass, "REPO", tmp_path)  # nor in the tutorial's .venv
    with pytest.raises(sass.ToolMissing):
        sass.find_tool("cuobjdump")
    flags = ["--nvcc=true", "--link="]
    monkeypatch.setattr(sys, "argv", ["lab.py", "grade", "03", str(tmp_path / "class" / "solution"), *flags])
    assert lab.main() == 77
    out = capsys.readouterr().out
    verdict = [ln for ln in out.splitlines() if ln.startswith("03_tma_load: ")]
    assert verdict == [verdict[0]] and verdict[0].startswith("03_tma_load: SKIP (cuobjdump not found"), out
    assert "PATH" in verdict[0] and "CUDA_HOME" in verdict[0] and "make venv" in verdict[0], verdict
    monkeypatch.setattr(sys, "argv", ["lab.py", "grade-class", "03", str(tmp_path / "class"), "--jobs", "1", *flags])
    assert lab.main() == 77
    rows = {r["student"]: r for r in csv.DictReader(open(tmp_path / "class" / "grades_03.csv"))}
    assert {k: (r["verdict"], r["exit_code"]) for k, r in rows.items()} == {
        "solution": ("SKIP", "77"), "unfilled": ("UNFILLED", "1")}, rows
    assert rows["solution"]["detail"].startswith("cuobjdump not found"), rows["solution"]
    result = json.loads((tmp_path / "class" / "logs_03" / "solution" / "results.json").read_text())
    mech = [t for t in result["tests"] if t["name"].startswith("mechanism 03.1")]
    assert mech and all(gradescope_test(t) and "status" not in t and "cuobjdump" in t["output"] for t in mech), mech


def sanitizer_output(errors=0, race=False):
    """What compute-sanitizer prints at the end of a --quick run: clean, or with a race named."""
    found = "========= Error: Race reported between Read access at load_box+0x1a0 and Write access\n" if race else ""
    return f"RESULT: PASS\n{found}========= ERROR SUMMARY: {errors} error{'s' if errors != 1 else ''}\n"


@pytest.mark.parametrize("racecheck, shadow, verdict", [
    ((sanitizer_output(), 0), ("", 0), "PASS"),                                         # nothing found
    ((sanitizer_output(1, race=True), 1), ("", 0), "RACE"),                             # racecheck names a race
    ((sanitizer_output(), 0), ("shadow: M1 broken in tile_load (line 9)\n", 1), "PROTOCOL"),  # the shadow stops
    ((sanitizer_output(), 0), ("", 1), "FAIL"),                                         # the shadow build's run fails
    ((sanitizer_output(), 77), ("", 0), "SKIP"),                                        # the sanitizer found no GPU
])
def test_a_passing_run_is_raced_then_shadowed(tmp_path, monkeypatch, racecheck, shadow, verdict):
    # run_and_judge() after a passing run (the recorded H200 run of 03): the step's compute-sanitizer tools,
    # one at a time, then the shadow build, each with faked output. A sanitizer's error is RACE, named with its
    # tool and the holes' kernels, and stops there; a shadow report is PROTOCOL, named; both clean: PASS.
    out, code = saved_run(REFERENCE_RUNS / "03_tma_load.txt")
    calls = []

    def fake_run(exe, timeout, args):
        calls.append(pathlib.Path(exe).name if pathlib.Path(exe).name != "compute-sanitizer" else args[1])
        if pathlib.Path(exe).name == "program":
            return out, "", code
        if pathlib.Path(exe).name == "program.shadow":
            return shadow[0] + "RESULT: " + ("FAIL" if shadow[1] else "PASS") + "\n", "", shadow[1]
        return (racecheck if args[1] == "racecheck" else (sanitizer_output(), 0))[0], "", \
            (racecheck if args[1] == "racecheck" else (sanitizer_output(), 0))[1]
    monkeypatch.setattr(lab, "run_program", fake_run)
    monkeypatch.setattr(lab, "sanitizer", lambda: "/opt/cuda/bin/compute-sanitizer")
    g = lab.run_and_judge(lab.Grade("s", "03_tma_load", work=tmp_path), 60)
    assert (g.verdict, g.exit_code) == (verdict, lab.VERDICT_EXIT[verdict]), (g.verdict, g.detail, calls)
    tools = lab.sanitize_tools("03_tma_load")
    assert "racecheck" in tools and calls[0] == "program"
    names = [t["name"] for t in g.tests]
    if verdict == "RACE":
        assert calls == ["program", *tools[:tools.index("racecheck") + 1]], calls  # it stops at the race
        assert g.detail.startswith("racecheck: Error: Race reported") and "tile_load" in g.detail, g.detail
    elif verdict == "SKIP":
        assert calls == ["program", *tools[:tools.index("racecheck") + 1]] and "no Hopper GPU" in g.detail
    else:
        assert calls == ["program", *tools, "program.shadow"], calls
        assert [t["status"] for t in g.tests if t["name"].startswith("compute-sanitizer")] == ["passed"] * len(tools)
        assert "the shadow build (--quick)" in names
    if verdict == "PROTOCOL":
        assert g.detail == "M1 broken in tile_load (line 9)", g.detail
    if verdict == "PASS":
        assert g.detail == "" and all(t["status"] == "passed" for t in g.tests), g.tests
    assert all(gradescope_test(t) for t in lab.results_json(g)["tests"])


def gradescope_test(t):
    """A test of Gradescope's results.json: its status is "passed" or "failed" (the only two Gradescope takes),
    or, for a test that could not run here, absent, with a score of 0 and the reason in its output."""
    if "status" in t:
        return set(t) == {"name", "status", "output"} and t["status"] in ("passed", "failed")
    return set(t) == {"name", "score", "output"} and t["score"] == 0 and t["output"].startswith("not run here: ")


def test_a_class_without_a_gpu_gets_every_verdict_a_cpu_can_give(tmp_path):
    # A sample class (tools/lab_samples.py) graded with no GPU: the verdicts that need no run (NO-BUILD,
    # EDITED, UNFILLED, MECHANISM) are final; the others are SKIP, never PASS; the report counts each
    # verdict, the CSV names each student's log folder (under DIR, not build/), each holds results.json, and
    # the exit is 77 because some rows could not run. The same class on the H200: results/labs/.
    p = run([sys.executable, "tools/lab_samples.py", "03", "--out", str(tmp_path)])
    assert p.returncode == 0, p.stderr
    folder = tmp_path / "03_tma_load"
    p = run(["make", "grade-class", "NN=03", f"DIR={folder}"])
    assert p.returncode != 0 and "(exit 77)" in p.stdout, p.stdout + p.stderr
    assert re.search(r"7 submissions: NO-BUILD 2, EDITED 1, UNFILLED 1, MECHANISM 1, SKIP 2$", p.stdout, re.M), p.stdout
    rows = {r["student"]: r for r in csv.DictReader(open(folder / "grades_03.csv"))}
    got = {k: (r["verdict"], r["exit_code"]) for k, r in rows.items()}
    assert got == {"unfilled": ("UNFILLED", "1"), "wrong": ("SKIP", "77"), "edited_checker": ("EDITED", "1"),
                   "no_build": ("NO-BUILD", "2"), "solution": ("SKIP", "77"), "bypass": ("MECHANISM", "1"),
                   "paste": ("NO-BUILD", "2")}, got
    assert "check.py" in rows["edited_checker"]["detail"] and "error" in rows["no_build"]["detail"]
    assert "SYNCS.ARRIVE.TRANS64" in rows["bypass"]["detail"] and "it teaches" in rows["bypass"]["detail"]
    for name, r in rows.items():
        log = folder / r["log"]
        assert log.parent == folder / "logs_03" and (log / "grade.txt").is_file(), r["log"]
        result = json.loads((log / "results.json").read_text())
        assert result["score"] == 0.0 and result["max_score"] == 1.0 and result["extra_data"]["verdict"] == r["verdict"]
        assert result["tests"] and all(gradescope_test(t) for t in result["tests"]), result
        if r["verdict"] == "SKIP":  # the run could not happen here: no status, a score of 0, and why
            assert any(set(t) == {"name", "score", "output"} and t["output"].startswith("not run here: ")
                       for t in result["tests"]), result
    assert any(t["status"] == "failed" and t["name"].startswith("mechanism 03.1")
               for t in json.loads((folder / "logs_03" / "bypass" / "results.json").read_text())["tests"])


def test_a_class_is_final_and_exits_0_when_every_row_is(tmp_path):
    # Only rows that need no run: every row final, exit 0 (77 is only for a row that could not run).
    run([sys.executable, "tools/lab_samples.py", "03", "--out", str(tmp_path)])
    folder = tmp_path / "03_tma_load"
    for name in ("solution", "wrong", "paste", "no_build", "edited_checker"):
        shutil.rmtree(folder / name)
    p = run(["make", "grade-class", "NN=03", f"DIR={folder}", "CHECK_TIMEOUT=60"])
    assert p.returncode == 0 and "(exit 77)" not in p.stdout, p.stdout + p.stderr
    assert "2 submissions: UNFILLED 1, MECHANISM 1" in p.stdout, p.stdout


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
    # Unpacked, committed to git and cloned, as a class hands it around: its own README, every link resolves,
    # every lab builds, `make grade-NN` needs no variable, `holes` lists every hole, nvcc found through
    # CUDA_HOME alone, the GPU targets SKIP (exit 77), and what needs the full tutorial says so instead of a
    # traceback.
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
    assert [h[0] for h in listed] == [f"{d[:2]}.{k}" for d in STEP_DIRS
                                      for k in range(1, len(lab.holes(lab.step_program(d).read_text())) + 1)], p.stdout
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
        assert p.returncode == 2 and "not part of the lab bundle" in p.stdout and "Traceback" not in p.stderr, target
    p = run(["make", "-C", str(root), "help"])
    assert p.returncode == 0 and "lab bundle" in p.stdout


H200_CLASSES = REPO / "results" / "labs" / "NVIDIA_H200"

def sample_names(step_dir):
    """The students of a step's sample class (tools/lab_samples.py)."""
    return set(lab_samples.samples(step_dir)) | {"edited_checker"}


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_the_h200_class_got_the_right_verdicts(step_dir):
    # The sample class of tools/lab_samples.py, graded on the H200 with `make grade-class` (recorded): every
    # sample the step allows, each with its verdict, exit code, log folder and results.json. A race may show
    # in the data on the run (FAIL) or not (then RACE); either way it is caught.
    nn = step_dir[:2]
    rows = {r["student"]: r for r in csv.DictReader(open(H200_CLASSES / f"grades_{nn}.csv"))}
    allowed = {k for k in ("bypass", "protocol", "paste") if (step_dir, k) not in lab_samples.NOT_POSSIBLE}
    assert set(rows) == sample_names(step_dir), sorted(rows)
    assert sample_names(step_dir) == {"solution", "unfilled", "wrong", "edited_checker", "no_build"} | allowed
    want = dict(lab_samples.EXPECTED, protocol={"RACE", "PROTOCOL", "FAIL"})  # 01's race shows in the data
    for name, r in rows.items():
        assert r["step"] == step_dir and int(r["exit_code"]) == lab.VERDICT_EXIT[r["verdict"]], r
        assert r["verdict"] in want.get(name, set(lab.VERDICT_EXIT) - {"PASS", "SKIP"}), (name, r["verdict"], r["detail"])
        result = json.loads((H200_CLASSES / r["log"] / "results.json").read_text())
        assert result["score"] == (1.0 if r["verdict"] == "PASS" else 0.0) and result["extra_data"]["verdict"] == r["verdict"]
        assert (H200_CLASSES / r["log"] / "grade.txt").read_text().rstrip().endswith(r["verdict"] + (f" ({r['detail']})" if r["detail"] else ""))
    sol = rows["solution"]
    assert sol["parts_passed"] == sol["parts_total"] != "0"
    names = [t["name"] for t in json.loads((H200_CLASSES / sol["log"] / "results.json").read_text())["tests"]]
    assert any(n.startswith("mechanism") for n in names) and any(n.startswith("compute-sanitizer") for n in names)
    assert "the shadow build (--quick)" in names
    # the wrong fill runs to the end and fails a part, named
    wrong = rows["wrong"]
    assert int(wrong["parts_passed"]) < int(wrong["parts_total"]) and wrong["detail"]


CPU_CLASSES = REPO / "results" / "labs" / "CPU"
STATIC = {"NO-BUILD", "EDITED", "UNFILLED", "MECHANISM"}  # the verdicts that need no run: final on any machine


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_the_cpu_class_is_final_but_for_the_runs(step_dir):
    # The same sample class graded on a machine with no GPU (results/labs/CPU/, recorded; no build here): every
    # row is a final static verdict, or SKIP for what must run (the program could not, and nothing else was
    # missing), never a pass or a fail; the bypass is MECHANISM; a sample that the H200 judged without a run
    # (the paste: NO-BUILD or MECHANISM) has the same verdict here, and one it had to run is SKIP.
    nn = step_dir[:2]
    rows = {r["student"]: r for r in csv.DictReader(open(CPU_CLASSES / f"grades_{nn}.csv"))}
    assert set(rows) == sample_names(step_dir), sorted(rows)
    h200 = {r["student"]: r["verdict"] for r in csv.DictReader(open(H200_CLASSES / f"grades_{nn}.csv"))}
    for name, r in rows.items():
        assert r["step"] == step_dir and r["verdict"] in STATIC | {"SKIP"}, (name, r["verdict"], r["detail"])
        assert int(r["exit_code"]) == lab.VERDICT_EXIT[r["verdict"]], r
        if r["verdict"] == "SKIP":
            assert r["detail"].startswith("the program cannot run here (exit 77)"), (name, r["detail"])
        want = lab_samples.EXPECTED.get(name)
        if want:  # the sample's own verdict where it needs no run, else SKIP
            assert r["verdict"] in (want & STATIC or {"SKIP"}), (name, r["verdict"], r["detail"])
        if name in h200:
            assert r["verdict"] == (h200[name] if h200[name] in STATIC else "SKIP"), (name, r["verdict"], h200[name])
        log = CPU_CLASSES / r["log"]
        assert log.parent == CPU_CLASSES / f"logs_{nn}", r["log"]
        verdict_line = r["verdict"] + (f" ({r['detail']})" if r["detail"] else "")
        assert (log / "grade.txt").read_text().rstrip().endswith(verdict_line), r
        result = json.loads((log / "results.json").read_text())
        assert result["score"] == 0.0 and result["extra_data"]["verdict"] == r["verdict"], result
        assert result["tests"] and all(gradescope_test(t) for t in result["tests"]), result
    if "bypass" in rows:
        assert rows["bypass"]["verdict"] == "MECHANISM", rows["bypass"]
