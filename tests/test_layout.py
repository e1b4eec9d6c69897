"""The shape of the repository: each step owns its PTX and reads top to bottom.

- common/ is the harness only: no inline PTX there.
- Every PTX wrapper lives in the header of the step that teaches it, is used
  by some step, and is included by path from the repository root.
- A step file opens with a short header naming the headers it adds, and its
  main() reads as a table of contents (under 40 lines), without the closures
  and dispatch tables the tutorial once had. Each part or kernel family lives
  in its own header, NN_topic/parts/*.cuh, included by the program; no
  program or part is much over 600 lines.
- Build facts (what a step links, what its sanitizers watch) are data in its
  check.py, read only through tools/contract.py: no program carries them.
- The tree is formatted with .clang-format.
"""

import re
import shutil
import subprocess

import pytest

from conftest import REPO, STEP_DIRS

# The harness, and the shadow build's checker beside it (common/shadow/).
COMMON = sorted(p for p in (REPO / "common").rglob("*") if p.is_file() and p.suffix in (".h", ".cuh"))
HARNESS = [p for p in COMMON if p.parent == REPO / "common"]
STEP_HEADERS = sorted(p for d in STEP_DIRS for p in (REPO / d).iterdir() if p.suffix in (".cuh", ".h"))
STEP_SOURCES = sorted(p for d in STEP_DIRS for p in (REPO / d).glob("*.cu"))
# A step's parts: its program's kernels and host functions, one header per part or kernel family.
PART_HEADERS = sorted(p for d in STEP_DIRS for p in (REPO / d).glob("parts/*.cuh"))
C_FILES = COMMON + STEP_HEADERS + STEP_SOURCES + PART_HEADERS + sorted((REPO / "tests").glob("*.c*")) + sorted(
    (REPO / "results").rglob("*.cu"))
# No teaching file much longer than this: a part that outgrows it is two parts.
MAX_LINES = 600


def code_of(path):
    """The file without comments (string literals kept)."""
    text = path.read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def test_common_holds_no_ptx():
    for p in HARNESS:
        assert "asm" not in code_of(p), f"{p.relative_to(REPO)} holds inline PTX: it belongs in a step's header"
    # The shadow build's checker reads special registers (its CTA's identity and sizes) and, for its
    # count of __syncthreads(), runs bar.sync 0 itself: bookkeeping, no instruction the steps teach.
    for p in COMMON:
        for insn in re.findall(r'asm volatile\("([^"]*)"', code_of(p)):
            assert re.fullmatch(r"mov\.u(32|64) %0, %%\w+(\.\w)?;|bar\.sync 0;", insn), \
                f"{p.relative_to(REPO)}: {insn!r}: the shadow may read special registers, not teach PTX"


def test_ptx_lives_in_step_headers():
    for p in STEP_SOURCES + PART_HEADERS:
        assert not re.search(r"\basm\b", code_of(p)), f"{p.relative_to(REPO)}: inline PTX belongs in the step's header"
    assert any("asm" in code_of(p) for p in STEP_HEADERS)


def defined_functions(header):
    return re.findall(r"(?:static\s+(?:__device__\s+|__host__\s+|inline\s+|__forceinline__\s+)+|SWIZZLE_FN\s+)"
                      r"[\w\s\*]*?\b(\w+)\s*\(", code_of(header))


@pytest.mark.parametrize("header", STEP_HEADERS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_wrapper_is_used(header):
    # A wrapper exists only if a step uses it: each function a step header
    # defines is called from a step program or from another header function
    # (or passed as a template argument: mbar_wait<mbar_try_wait>).
    others = " ".join(code_of(p) for p in STEP_SOURCES + STEP_HEADERS + PART_HEADERS if p != header)
    own = code_of(header)
    for fn in defined_functions(header):
        used = re.search(rf"\b{fn}\s*[<(>]", others) or len(re.findall(rf"\b{fn}\s*[<(>]", own)) > 1
        assert used, f"{header.relative_to(REPO)}: {fn}() is defined but no step uses it"


def test_includes_name_their_path():
    for p in STEP_SOURCES + STEP_HEADERS + PART_HEADERS:
        for inc in re.findall(r'#include\s+"([^"]+)"', p.read_text()):
            assert (REPO / inc).is_file(), f"{p.relative_to(REPO)}: #include \"{inc}\" is not a path from the root"
            assert inc.startswith(("common/", *[d + "/" for d in STEP_DIRS])), inc


def test_later_steps_include_earlier_headers_only():
    # A step may include its own headers and those of earlier steps, never a later one's.
    for p in STEP_SOURCES + STEP_HEADERS + PART_HEADERS:
        own = p.relative_to(REPO).parts[0]
        for inc in re.findall(r'#include\s+"(\d\d_\w+)/', p.read_text()):
            assert inc <= own, f"{p.relative_to(REPO)} includes {inc}, a later step"


@pytest.mark.parametrize("source", STEP_SOURCES, ids=lambda p: p.parent.name)
def test_step_file_shape(source):
    text = source.read_text()
    header = text[:text.index("#include")]
    own = sorted(p.name for p in source.parent.iterdir() if p.suffix in (".cuh", ".h"))
    for h in own:
        assert f"{source.parent.name}/{h}" in header, f"the header block does not name {h}, which this step adds"
    main = re.search(r"^int main\(.*?^\}", text, re.S | re.M)
    assert main, "no main()"
    assert len(main[0].splitlines()) < 40, f"main() has {len(main[0].splitlines())} lines"
    for banned in ("EnqueueFn", "void* ctx", "Job"):
        assert banned not in code_of(source), f"{source.name} uses {banned}: closures and job structs are gone"


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_every_part_is_a_part_of_its_program(step_dir):
    # A part header opens with what it is, is included once, and is reached from the program's own
    # includes (directly or through another part): no part that nothing builds, none from another step.
    parts = sorted(p for p in PART_HEADERS if p.relative_to(REPO).parts[0] == step_dir)
    program = next((REPO / step_dir).glob("*.cu"))
    seen, todo = set(), [program]
    while todo:
        for inc in re.findall(r'#include\s+"([^"]+)"', todo.pop().read_text()):
            if inc.startswith(f"{step_dir}/parts/") and inc not in seen:
                seen.add(inc)
                todo.append(REPO / inc)
    for p in parts:
        rel = str(p.relative_to(REPO))
        assert rel in seen, f"{rel} is not included by {program.relative_to(REPO)} (or by a part it includes)"
        lines = p.read_text().splitlines()
        assert lines[0].startswith("// ") and "#pragma once" in lines, f"{rel}: opens with a comment, then #pragma once"
        assert not re.search(r"^int main\(", p.read_text(), re.M), f"{rel}: main() belongs to the program"


@pytest.mark.parametrize("path", STEP_SOURCES + PART_HEADERS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_program_or_part_is_a_monolith(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(REPO)} has {n} lines: cut it along its parts (NN_topic/parts/)"


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_lesson_names_the_step_headers(step_dir):
    lesson = (REPO / step_dir / "README.md").read_text()
    for h in sorted(p.name for p in (REPO / step_dir).iterdir() if p.suffix in (".cuh", ".h")):
        assert f"{step_dir}/{h}" in lesson, f"{step_dir}/README.md does not name {h}, which this step adds"


# The header lines tools once parsed out of programs: now each step's check.py holds them (`build`).
MAGIC_LINE = re.compile(r"^// (link|sanitize|sanitize-tools): ", re.M)


def test_build_facts_load_for_every_step():
    # Every step's and twin's facts load through contract.build_facts (its check.py's `build`, defaults
    # filled in); the tools that build and sanitize ask contract.py, and parse no program.
    from contract import build_facts, twin_dirs
    for d in STEP_DIRS + twin_dirs():
        build_facts(d)
    for tool in ("Makefile", "tools/sanitize.sh", "tools/bench.py"):
        assert not re.search(r"// (link|sanitize)", (REPO / tool).read_text().replace('"// link: ..."', "")), \
            f"{tool} parses a program's header lines: ask tools/contract.py"


TWIN_SOURCES = sorted(p for d in STEP_DIRS for p in (REPO / d).glob("twins/*.cu"))


@pytest.mark.parametrize("program", STEP_SOURCES + PART_HEADERS + TWIN_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_build_facts_are_data_read_once(program):
    # What a step links and what its sanitizers watch live in its check.py (`build`), read only through
    # tools/contract.py: no program states them again for a tool to parse (an experiment's `// link:` line
    # is read through contract.py too: it is no step).
    assert not MAGIC_LINE.search(program.read_text()), \
        f"{program.relative_to(REPO)}: build facts belong in the step's check.py (build = {{...}}), not here"


@pytest.mark.parametrize("build,rule", [
    ({"link": "cublas"}, "-l<library>"), ({"links": "-lcublas"}, "must be a dict of"),
    ({"sanitize_tools": ["memcheck", "initcheck"]}, "must name some of"), ({"sanitize_tools": []}, "must name some of"),
    ({"sanitize_kernels": "gemm_ws"}, "list of names"), ("-lcublas", "must be a dict of")])
def test_build_facts_refuse_what_is_not_one(tmp_path, monkeypatch, build, rule):
    # A wrong build fact is refused with the rule it breaks, not passed on to nvcc or compute-sanitizer.
    import contract
    (tmp_path / "99_step").mkdir()
    (tmp_path / "99_step" / "check.py").write_text(f"build = {build!r}\n")
    monkeypatch.setattr(contract, "REPO", tmp_path)
    with pytest.raises(ValueError, match=re.escape(rule)):
        contract.build_facts("99_step")
    (tmp_path / "99_step" / "check.py").write_text("build = {'link': '-lcublas -lcublasLt'}\n")
    assert contract.build_facts("99_step") == {"link": "-lcublas -lcublasLt", "sanitize_kernels": [],
                                               "sanitize_tools": ["memcheck", "racecheck", "synccheck"]}
    assert contract.main(["link", "99_step"]) == 0 and contract.main(["sanitize-args", "99_step", "x"]) == 2


def clang_format():
    found = shutil.which("clang-format", path=str(REPO / ".venv" / "bin")) or shutil.which("clang-format")
    assert found, "clang-format not found (requirements.txt installs it into .venv)"
    return found


@pytest.mark.parametrize("path", C_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_formatted(path):
    p = subprocess.run([clang_format(), "--style=file", str(path)], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout == path.read_text(), f"run: clang-format -i {path.relative_to(REPO)}"
