"""Category 6 and the docs' truth: every `make` target a README or lesson
names exists; `make help` lists every target; result tables are generated
from results/ and current; code a lesson quotes is the code that runs."""

import re

import pytest

import results_table

from conftest import REPO, STEP_DIRS, binary, run

DOCS = [REPO / "README.md"] + [REPO / d / "README.md" for d in STEP_DIRS] + [REPO / "notebooks" / "README.md"]
_LS = run(["git", "ls-files"])
TRACKED = _LS.stdout.split() if _LS.returncode == 0 else []


def make_targets_named(text):
    # `make run-01 ARGS=...`, `make check`, `make check-NN` ... in inline code
    # and code blocks (prose may say "make the thread wait"); a generic -NN
    # target must exist for every step.
    fenced = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    shell_blocks = [body for lang, body in fenced if lang in ("", "sh", "bash", "console")]  # not cuda/ptx/sass
    prose = re.sub(r"```.*?```", " ", text, flags=re.S)
    code = " ".join(shell_blocks + re.findall(r"`[^`\n]+`", prose))
    named = set(re.findall(r"\bmake\s+(?:-\S+\s+)*([a-z][a-zA-Z0-9-]*)", code))
    targets = set()
    for t in named:
        if t.endswith("-NN"):
            targets.update(t[:-2] + d[:2] for d in STEP_DIRS)
        else:
            targets.add(t)
    return targets


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_make_target_named_exists(doc):
    assert doc.is_file(), f"{doc} is missing"
    targets = make_targets_named(doc.read_text())
    assert targets, f"{doc.name} names no make target"
    for t in sorted(targets):
        p = run(["make", "-n", t])
        assert p.returncode == 0, f"{doc.relative_to(REPO)} names `make {t}`, which does not exist:\n{p.stderr}"


def phony_targets():
    p = run(["make", "-pRrq", "-f", "Makefile", ":"])  # print the database without building
    phony = set()
    for ln in p.stdout.splitlines():
        if ln.startswith(".PHONY:"):
            phony.update(t for t in ln.split(":", 1)[1].split() if "$" not in t)
    return phony


def test_help_lists_every_target():
    helptext = run(["make", "help"]).stdout
    listed = set(re.findall(r"^\s+make (?:/ make )?(\S+)", helptext, re.M)) | {"all"}
    for t in phony_targets():
        generic = re.sub(r"-\d\d$", "-NN", t)
        assert generic in listed or t in listed, f"`make help` does not list {t}"


def test_readme_targets_table_is_make_help():
    # The README's Targets table and `make help` name the same targets (a newcomer reads either).
    helptext = run(["make", "help"]).stdout
    listed = (set(re.findall(r"^  make (\S+)", helptext, re.M)) - {"/"}) | {"all"}  # "make / make all"
    table = (REPO / "README.md").read_text().split("## Targets", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"`make ([a-z][\w-]*)", table))
    assert rows == listed, f"only in README: {sorted(rows - listed)}; only in make help: {sorted(listed - rows)}"


def test_result_tables_are_generated_and_current():
    p = run(["python3", "tools/results_table.py", "--check"])
    assert p.returncode == 0, p.stdout
    readme = (REPO / "README.md").read_text()
    from checker import load_step
    for d in STEP_DIRS:
        assert f"<!-- result:{d[:2]} -->" in readme, f"README.md has no generated result cell for {d}"
        if load_step(d).perf_floors:  # a step with PERF lines shows them all
            assert "<!-- perf-table -->" in (REPO / d / "README.md").read_text()


def typed_over(tmp_path, monkeypatch, path: str, old: str, new: str) -> str:
    """A copy of the docs with `old` typed over by `new` in `path`: --check must report it, a rewrite must put
    the recorded text back. Returns the file as it was."""
    import shutil
    import sys
    for d in [*STEP_DIRS, "results", "labs"]:
        shutil.copytree(REPO / d, tmp_path / d)
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    text = (REPO / path).read_text()
    assert old in text, f"{path} has no {old!r}"
    (tmp_path / path).write_text(text.replace(old, new))
    monkeypatch.setattr(results_table, "REPO", tmp_path)
    monkeypatch.setattr(results_table, "REFERENCE_CSV", tmp_path / "results" / results_table.REFERENCE_CSV.name)
    monkeypatch.setattr(sys, "argv", ["results_table.py", "--check"])
    assert results_table.main() == 1
    monkeypatch.setattr(sys, "argv", ["results_table.py"])
    assert results_table.main() == 0
    return text


def test_result_table_check_catches_a_typed_number(tmp_path, monkeypatch):
    # README's step table: one generated number typed over.
    cell = re.search(r"<!-- result:01 -->(.*?)<!-- /result -->", (REPO / "README.md").read_text(), re.S)
    assert cell and "% of memcpy" in cell[1], "step 01's result cell has no number"
    readme = typed_over(tmp_path, monkeypatch, "README.md", cell[0], "<!-- result:01 -->99.9 % of memcpy<!-- /result -->")
    assert (tmp_path / "README.md").read_text() == readme


def test_result_table_refreshes_an_inline_number(tmp_path, monkeypatch):
    # A lesson's inline number (<!-- v:NAME.KEY -->) typed over.
    v = re.search(r"<!-- v:copy_tma\.pct -->(.*?)<!-- /v -->", (REPO / "04_tma_store" / "README.md").read_text())
    assert v and v[1].endswith("%"), "lesson 04 quotes copy_tma's percent inline"
    lesson = typed_over(tmp_path, monkeypatch, "04_tma_store/README.md", v[0], "<!-- v:copy_tma.pct -->77.7 %<!-- /v -->")
    assert (tmp_path / "04_tma_store" / "README.md").read_text() == lesson


def cuda_blocks(text):
    return re.findall(r"```cuda\n(.*?)```", text, re.S)


def squash(s):
    return re.sub(r"\s+", " ", s).strip()


def without_lab_markers(text):
    # The lab holes' marker lines (tools/lab.py) are comments for the lab
    # tool; a lesson quotes the code around them as one piece.
    return re.sub(r"^\s*// LAB-(BEGIN|STUB|END).*\n", "", text, flags=re.M)


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_lesson_quotes_are_real_code(step_dir):
    lesson = (REPO / step_dir / "README.md").read_text()
    sources = " ".join(squash(without_lab_markers(p.read_text())) for p in
                       [*(REPO / step_dir).glob("*.cu"), *(REPO / step_dir).glob("*.cuh"), *(REPO / step_dir).glob("*.h"),
                        *(p for p in (REPO / "common").rglob("*") if p.is_file()), *(p for d in STEP_DIRS for p in (REPO / d).glob("*.cuh")),
                        *(p for d in STEP_DIRS for p in (REPO / d).glob("*.h")),
                        *(p for d in STEP_DIRS for p in (REPO / d).glob("parts/*.cuh"))])
    blocks = cuda_blocks(lesson)
    assert blocks, "a lesson quotes its key code"
    for block in blocks:
        for chunk in re.split(r"\n\s*// \.\.\.\n", block):  # "// ..." marks an elision
            assert squash(chunk) in sources, f"quoted code not found in the sources:\n{chunk}"


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_lesson_sass_is_real_sass(built, step_dir):
    from sass import dump_sass, opcode
    lesson = (REPO / step_dir / "README.md").read_text()
    blocks = re.findall(r"```sass\n(.*?)```", lesson, re.S)
    assert blocks, "a lesson shows the SASS to look for"
    sass = {squash(ln) for lines in dump_sass(binary(step_dir)).values() for ln in lines}
    quoted = [ln for b in blocks for ln in b.splitlines() if re.match(r"\s*/\*[0-9a-f]{4}\*/", ln)]
    assert quoted
    for ln in quoted:
        assert any(squash(ln) in s for s in sass), f"SASS line not in the binary: {ln}"


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_lesson_ptx_is_real_ptx(step_dir, tmp_path):
    # PTX a lesson quotes must be what nvcc generates from the step's source.
    lesson = (REPO / step_dir / "README.md").read_text()
    quoted = [ln for b in re.findall(r"```ptx\n(.*?)```", lesson, re.S) for ln in b.splitlines() if ln.strip()]
    if not quoted:
        pytest.skip("this lesson quotes no PTX")
    source = next((REPO / step_dir).glob("*.cu"))
    ptx = tmp_path / "step.ptx"
    p = run(["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-I.", "-ptx",
             str(source), "-o", str(ptx)])
    assert p.returncode == 0, p.stderr
    generated = {squash(ln) for ln in ptx.read_text().splitlines()}
    for ln in quoted:
        assert squash(ln) in generated, f"PTX line not generated from {source.name}: {ln}"


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_lesson_resource_lines_are_real(built, step_dir):
    # Register and shared-memory counts a lesson quotes come from the build log.
    lesson = (REPO / step_dir / "README.md").read_text()
    quoted = [ln.strip() for ln in lesson.splitlines() if ln.startswith("ptxas info")]
    log = {ln.strip() for ln in (REPO / "build" / f"{step_dir}.log").read_text().splitlines()}
    for ln in quoted:
        assert ln in log, f"ptxas line not in build/{step_dir}.log: {ln}"


def test_nothing_points_outside_the_repository():
    # A learner has only the repository: no design notes or fact sheets that
    # live elsewhere, no ../ paths. Every tracked text file is read.
    assert TRACKED, "git ls-files listed nothing: this test needs a git checkout"
    for name in TRACKED:
        path = REPO / name
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:  # binary
            continue
        text = data.decode(errors="replace")
        for bad in ("DESIGN" + ".md", "PTX_FACTS" + ".md", "STYLE" + ".md", "../" + "shared"):
            assert bad not in text, f"{name} mentions {bad}, which is not in the repository"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_paths_named_in_docs_exist(doc):
    # `common/tutorial.cuh`, [links](../03_tma_load/README.md), 05_swizzle/swizzle.h ...
    text = doc.read_text()
    names = set(re.findall(r"\]\(([^)#\s]+)", text))  # markdown links
    names |= set(re.findall(r"`((?:common|tools|tests|results|notebooks|\d\d_\w+)/[\w./-]+)`", text))
    for name in sorted(names):
        if "://" in name or name.endswith("/"):
            continue
        target = (doc.parent / name) if not name.startswith(("common/", "tools/", "tests/", "results/", "notebooks/"))\
            and not re.match(r"\d\d_", name) else REPO / name
        if not target.exists() and (REPO / name).exists():
            target = REPO / name
        assert target.exists(), f"{doc.relative_to(REPO)} names {name}, which does not exist"


# Code is addressed by file and function, never by line: `02_cp_async/parts/pipelines.cuh: pipeline_tiles`
# (a path from the repository root, then a name the file defines), so that a lesson stays true when code
# moves within a file or into another part. Every markdown file is read; what a program printed (fenced
# blocks, which quote a run or code, and the records a tool writes from runs: results/shadow_*.md,
# results/mutation_*.md) may carry the file:line its reports name.
MARKDOWN = sorted(REPO / n for n in TRACKED if n.endswith(".md"))
RECORDED = re.compile(r"^results/(shadow|mutation)_[\w.-]+\.md$")
CODE_REF = re.compile(r"`(?P<path>[\w./-]+\.(?:cu|cuh|h|c|py|sh)): (?P<name>[A-Za-z_]\w*)`")
LINE_REF = re.compile(r"[\w./-]*\.(?:cu|cuh|h|c|py|sh):\d+\b|`:\d+`")


def prose(text):
    """The text outside fenced blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def defines(path, name):
    """Whether the file defines `name`: a function or kernel (its body follows its parameters), a macro, a
    struct, enum or typedef, a table; in Python a def, a class or a module-level name."""
    text = path.read_text()
    n = re.escape(name)
    if path.suffix in (".py", ".sh"):
        return bool(re.search(rf"^\s*(def|class) {n}\b|^{n}\s*=|^{n}\(\)", text, re.M))
    code = re.sub(r"//[^\n]*", "", text)
    return bool(re.search(rf"#define {n}\b", code)
                or re.search(rf"\b(struct|enum|union|class)\s+{n}\b", code)
                or re.search(rf"\}}\s*{n}\s*;", code)
                or re.search(rf"\b{n}\s*(<[^;{{()]*>)?\s*\([^;{{]*\)\s*(const\s*)?\{{", code)
                or re.search(rf"\b{n}(\[[^\]]*\])*\s*=[^=]", code))


def code_references(text):
    """(path, name) of every `path: name` reference outside fenced blocks."""
    return [(m["path"], m["name"]) for m in CODE_REF.finditer(prose(text))]


def line_references(text):
    """Every file:line reference outside fenced blocks."""
    return LINE_REF.findall(prose(text))


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: str(p.relative_to(REPO)))
def test_code_is_addressed_by_file_and_name_never_by_line(doc):
    rel = str(doc.relative_to(REPO))
    text = doc.read_text()
    for path, name in code_references(text):
        assert (REPO / path).is_file(), f"{rel} names `{path}: {name}`, and {path} does not exist (a path from the root)"
        assert defines(REPO / path, name), f"{rel} names `{path}: {name}`, which {path} does not define"
    if not RECORDED.match(rel):
        assert not line_references(text), \
            f"{rel} addresses code by line: {line_references(text)}; name the file and the function (`path: name`)"


def test_code_reference_check_can_fail():
    text = "see `03_tma_load/parts/sums.cuh: sum_ring` and `x.cu:12`\n```\nhung: ... (tma_load.cu:106)\n```\n"
    assert code_references(text) == [("03_tma_load/parts/sums.cuh", "sum_ring")]
    assert line_references(text) == ["x.cu:12"]  # the fenced run output is not a reference
    header = REPO / "03_tma_load" / "mbarrier.cuh"
    assert defines(header, "mbar_wait") and defines(header, "MBAR_WAIT") and not defines(header, "mbar_wiat")
    assert defines(REPO / "tools" / "contract.py", "build_facts") and defines(REPO / "common" / "tutorial.cuh", "WaitReport")


# A lesson's shape: a core path a learner finishes in about 13 minutes at most (2000 words at the
# 150 a minute of results_table.py's reading time), then
# "Going further" sections to skip and come back to, exercises, further
# reading, and the way on. Words are whitespace-separated tokens of the file
# as it is read (code, tables and generated blocks count).
CORE_WORDS, LESSON_WORDS = 2000, 6000
TAIL_HEADINGS = ["## Takeaways", "## Exercises", "## Further reading"]


def lesson_shape(text):
    """(core path, [## headings after it], last non-empty line); headings inside code fences are not headings."""
    lines, fenced, core_end, headings = text.splitlines(), False, None, []
    for i, ln in enumerate(lines):
        if ln.startswith("```"):
            fenced = not fenced
        if fenced or not ln.startswith("## "):
            continue
        if core_end is None and ln.startswith("## Going further"):
            core_end = i
        if core_end is not None:
            headings.append(ln)
    core = "\n".join(lines[:core_end]) if core_end is not None else None
    return core, headings, next(ln for ln in reversed(lines) if ln.strip())


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_every_lesson_states_its_reading_time_and_its_takeaways(step_dir):
    # Under its title, the minutes its core path and the whole lesson take (generated from its words:
    # results_table.py, kept current by the --check test); before the exercises, 5-7 takeaways, each a
    # measured fact (a number generated from results/) or a rule.
    text = (REPO / step_dir / "README.md").read_text()
    first = text.split("\n## ", 1)[0]
    m = re.search(r"<!-- reading-time -->\*Reading time: the core path about (\d+) minutes, the whole lesson about (\d+)\.",
                  first)
    assert m and 5 <= int(m[1]) <= int(m[2]), f"{step_dir}: no reading time under the title"
    take = text.split("\n## Takeaways\n", 1)[1].split("\n## ", 1)[0]
    items = [ln for ln in take.splitlines() if ln.startswith("- ")]
    assert 5 <= len(items) <= 7, f"{step_dir}: {len(items)} takeaways (5 to 7)"
    measured = sum("<!-- v:" in ln for ln in items)
    assert measured >= (0 if step_dir.startswith("05") else 1), f"{step_dir}: no takeaway carries a measured number"


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_lesson_opens_with_a_short_path_and_ends_with_the_way_on(step_dir):
    text = (REPO / step_dir / "README.md").read_text()
    core, headings, last = lesson_shape(text)
    assert core is not None, f"{step_dir}/README.md: no '## Going further' section ends the core path"
    assert len(core.split()) <= CORE_WORDS, f"{step_dir}: core path of {len(core.split())} words (at most {CORE_WORDS})"
    assert len(text.split()) <= LESSON_WORDS, f"{step_dir}: {len(text.split())} words (at most {LESSON_WORDS})"
    deep = [h for h in headings if h not in TAIL_HEADINGS]
    assert all(h.startswith("## Going further") for h in deep), \
        f"{step_dir}: after the core path every section is 'Going further': {deep}"
    assert headings[-len(TAIL_HEADINGS):] == TAIL_HEADINGS, f"{step_dir}: ends with {TAIL_HEADINGS}, not {headings[-3:]}"
    later = STEP_DIRS[STEP_DIRS.index(step_dir) + 1:]
    want = f"](../{later[0]}/README.md)" if later else "](../README.md)"
    assert last.startswith("Next:") and want in last, f"{step_dir}: the last line is not 'Next: ...{want}': {last!r}"


# The line that closes every lesson's core path, right before its first "Going further" heading: a
# newcomer reading top to bottom learns where to stop (the reading time under the title counts to there).
CORE_END_LINE = "*The core path ends here; the sections below go further.*"


def core_end_line(text):
    """The last non-empty line of the core path (before the first '## Going further'), or None."""
    core, _, _ = lesson_shape(text)
    return next((ln for ln in reversed(core.splitlines()) if ln.strip()), None) if core is not None else None


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_every_lesson_says_where_its_core_path_ends(step_dir):
    last = core_end_line((REPO / step_dir / "README.md").read_text())
    assert last == CORE_END_LINE, f"{step_dir}: the core path ends with {last!r}, not {CORE_END_LINE!r}"


def test_lesson_shape_check_can_fail():
    # A lesson without its Going-further split, and one whose core path is too long, are both refused.
    assert lesson_shape("# Step\n\n## Run it\n\n```\n## not a heading\n```\nNext: x\n")[0] is None
    core, _, _ = lesson_shape("# Step\n" + "word " * (CORE_WORDS + 1) + "\n## Going further: x\n")
    assert len(core.split()) > CORE_WORDS
    # ... and so is a core path that does not say where it ends.
    assert core_end_line(f"# Step\n\n{CORE_END_LINE}\n\n## Going further: x\n") == CORE_END_LINE
    assert core_end_line("# Step\n\ntext\n\n## Going further: x\n") != CORE_END_LINE


TYPED_NUMBER = re.compile(r"\b\d+\.\d+ ?(?:%|GB/s|TB/s|ms|us|µs|ns)")


def typed_numbers(text):
    """Measured-looking numbers (12.3 %, 4.5 GB/s, 0.51 ms) outside generated blocks and code."""
    prose = re.sub(r"<!-- ([\w-]+)(?::[^>]*)? -->.*?<!-- /\1 -->", "", text, flags=re.S)  # perf-table, file:, run: ...
    prose = re.sub(r"<!-- v:\S+ -->.*?<!-- /v -->", "", prose, flags=re.S)
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)
    return [m[0] for m in TYPED_NUMBER.finditer(prose) if "datasheet" not in prose[max(0, m.start() - 40):m.start()]]


@pytest.mark.parametrize("doc", [REPO / "README.md"] + [REPO / d / "README.md" for d in STEP_DIRS],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_no_measured_number_is_typed_in_prose(doc):
    # A number typed into a lesson goes stale when the results change; every
    # measured number is a generated <!-- v:NAME.FIELD[@GPU] --> value or a
    # generated block (tools/results_table.py).
    assert not typed_numbers(doc.read_text()), f"{doc.relative_to(REPO)}: typed numbers {typed_numbers(doc.read_text())}"


def test_typed_number_check_can_fail():
    assert typed_numbers("reaches 93.8 % on the H100") == ["93.8 %"]
    assert typed_numbers("the datasheet says 4.8 TB/s") == []  # a vendor's figure, not a measurement
    assert typed_numbers("<!-- v:a.pct@H100 -->93.8 %<!-- /v --> and\n```\nPERF 1.0 ms\n```") == []


def test_the_layout_names_every_tool_header_and_notebook():
    layout = (REPO / "README.md").read_text().split("## Repository layout", 1)[1]
    names = [p.name for p in (REPO / "tools").iterdir() if p.suffix in (".py", ".sh")]
    names += [str(p.relative_to(REPO)) for d in STEP_DIRS for p in (REPO / d).iterdir() if p.suffix in (".cuh", ".h")]
    names += [p.name for p in (REPO / "notebooks").glob("*.ipynb")] + ["labs/", "STUDENT.md"]
    missing = [n for n in sorted(names) if n.replace(".ipynb", "") not in layout]
    assert not missing, f"README.md's layout does not name {missing}"


def test_lesson_09s_derived_figures_follow_from_the_data():
    # Lesson 09's roofline and sector blocks hold figures computed from recorded data (```text blocks, where
    # the typed-number rule does not look): each is recomputed here from results/, so that new data or a
    # slip of the pen fails instead of standing.
    import csv
    text = (REPO / "09_gemm" / "README.md").read_text()
    ncu = {g: {r["launch"]: r for r in csv.DictReader((REPO / "results" / f"ncu_09_gemm_{g}.csv").open())}
           for g in ("NVIDIA_H200", "NVIDIA_H100_80GB_HBM3")}
    requested = {}
    for m in re.finditer(r"^  (\d+) x (\d+) x +\((\d+) \+ (\d+)\) x 4 = (\d+)", text, re.M):
        tiles, kb, a, b, total = map(int, m.groups())
        assert tiles * kb * (a + b) * 4 == total, m[0]
        requested[(a, b, tiles)] = total
    want = {"pingpong": (64, 256, 4096), "ablate_no_multicast": (128, 256, 2048), "cooperative": (128, 256, 2048),
            "persistent": (128, 128, 2048), "multicast_2x1": (128, 128, 2048)}
    ratios = re.search(r"counted / requested, H200 .*?:(.*?)\n```", text, re.S)[1]
    for name, shape in want.items():
        m = re.search(rf"{name} (\d+)(?: %)? \((\d+)\)", ratios)
        assert m, f"lesson 09 gives no counted / requested ratio for {name}"
        for got, gpu in zip(m.groups(), ncu):
            ratio = 100 * int(ncu[gpu][name]["l2_to_sm_sectors"]) / requested[shape]
            assert int(got) == round(ratio), f"{name} on {gpu}: the lesson says {got} %, the data {ratio:.1f} %"
    dram = re.search(r"DRAM, persistent \(H200.*?: (\d+) B / (\d+) ns = ([\d.]+)e12 B/s", text)
    row = ncu["NVIDIA_H200"]["persistent"]
    assert dram and (dram[1], dram[2]) == (row["dram_read_bytes"], row["ns"]), "the DRAM line is not the H200 counters'"
    assert abs(float(dram[3]) - int(dram[1]) / int(dram[2]) / 1e3) < 0.005, dram[0]
    peak = re.search(r"= ([\d.]+) TFLOP/s", (REPO / "09_gemm" / "expected_output.txt").read_text().split("GPU    peak:")[1])[1]
    rate = next(r["rate"] for r in csv.DictReader((REPO / "results" / "NVIDIA_H200.csv").open())
                if r["step"] == "09_gemm" and r["name"] == "persistent")
    assert f"at the peak, {peak}e12 flop/s" in text, f"the roofline's peak is not the program's ({peak})"
    assert f"at persistent's {rate}e12 flop/s" in text, f"the roofline's rate is not the recorded persistent's ({rate})"
    found = list(re.finditer(r"([\d.]+)e12 B/s \((one CTA|cluster)\)|persistent's ([\d.]+)e12 flop/s .*?:  ([\d.]+)e12 B/s", text))
    assert len(found) == 3, f"the roofline's three bandwidths not found ({len(found)}): its wording changed?"
    for m in found:
        if m[1]:
            need = float(peak) / (256 / 3 if m[2] == "one CTA" else 128)
            assert abs(float(m[1]) - need) <= 0.006 * need, f"{m[0]}: the arithmetic gives {need:.3g}e12"
        else:
            assert abs(float(m[4]) - float(m[3]) / 128) < 0.006, f"{m[0]}: the arithmetic gives {float(m[3]) / 128:.3g}e12"
