"""Classroom labs: student copies of the steps, with holes to fill, and a grader an instructor can trust.

    python3 tools/lab.py make 03 [--out labs]           the student copy: labs/03_tma_load/
    python3 tools/lab.py grade 03 SUBMISSION            grade one student's folder; the exit code is the verdict's
    python3 tools/lab.py grade-class 03 DIR [--csv F]   grade every student folder in DIR into one CSV
    python3 tools/lab.py dist --out build/labs.tar.gz   the bundle for students: every step's copy, no solutions
    python3 tools/lab.py holes [03]                     the holes and their hints

A hole is a marked region of a step's program (never of its headers: later
steps include those, so they stay whole):

    // LAB-BEGIN: what to write, as a hint
    ...the solution's lines...
    // LAB-STUB: a line that keeps the student copy compiling (optional, any number)
    // LAB-END

In the solution the markers are comments. In the student copy each region
becomes `// TODO(lab NN.k): hint` followed by its stub lines, uncommented; the
copy compiles, runs, and fails its checks until the holes are filled.

Grading never trusts the submission beyond its holes. It takes only the
student's program (NN_topic/<name>.cu), compares it with the copy as handed
out (an edit outside the holes is reported, and fails the grade), builds it
alone against this repository's harness and earlier steps' headers, runs it
with a time limit, and judges the output with this repository's check.py and
expected_output.txt; the submission's own copies of those are never read, only
compared (an edited one is reported, and fails the grade). Before the run, the
machine code of the holes' kernels must show what each hole teaches (check.py's
`lab`); after a passing run, the step's compute-sanitizer tools and the shadow
build (-DTUTORIAL_SHADOW) on --quick must find nothing. Verdicts, first match
wins, with the exit code of `grade`:

    NO-BUILD   2    no program in the submission, or it does not compile
    EDITED     1    the program's code changed outside its holes, or check.py, expected_output.txt or a header changed
    UNFILLED   1    a hole is as handed out (whitespace and comments aside)
    MECHANISM  1    a hole's kernels lack what it teaches in their SASS or PTX (the rule and the kernel are named)
    TIMEOUT    124  the run passed the time limit
    SKIP       77   this machine cannot judge: no Hopper GPU, no compute-sanitizer, or no cuobjdump for the
                    mechanism rules (never a pass, never a fail)
    FAIL       1    a check failed or a wait hung (the first one is named)
    RACE       1    after a passing run, a compute-sanitizer tool reported an error or a hazard in the holes' kernels
    PROTOCOL   1    then, the shadow build's run stopped on a broken protocol rule
    PASS       0    every rule of the step passed

NO-BUILD, EDITED, UNFILLED and MECHANISM need no GPU and are final on any
machine; grade-class exits 0 when every row is final, 77 when some row is SKIP.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import dataclasses
import difflib
import hashlib
import io
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from checker import EXIT, evaluate, load_step, run_program  # noqa: E402
from contract import CHECK_RE, REPO, step_dirs  # noqa: E402

BEGIN = re.compile(r"^(?P<indent>\s*)// LAB-BEGIN: (?P<hint>.+)$")
STUB = re.compile(r"^\s*// LAB-STUB: (?P<code>.*)$")
END = re.compile(r"^\s*// LAB-END\s*$")
# The bundle marks itself with this file; there the programs are the students' copies and the copies as handed
# out live under HANDED_OUT, for comparison.
BUNDLE_MARK = REPO / ".lab-bundle"
HANDED_OUT = REPO / "labs" / "handed_out"
GRADE_BUILD = REPO / "build" / "grade"
# Every verdict, in the order the grader decides them (the first that applies is the grade), with its exit code.
VERDICT_EXIT = {"NO-BUILD": 2, "EDITED": 1, "UNFILLED": 1, "MECHANISM": 1, "TIMEOUT": 124, "SKIP": 77, "FAIL": 1,
                "RACE": 1, "PROTOCOL": 1, "PASS": 0}
# Files of a step folder whose edit would change how a submission is judged or built.
GUARDED = re.compile(r"^(check\.py|expected_output\.txt|.*\.(cuh|h))$")


class MarkerError(ValueError):
    pass


def holes(text: str) -> list[tuple[int, int, str, list[str], str]]:
    """(first line, last line, hint, stub lines, indent) of every hole, 0-based and inclusive."""
    found, start = [], None
    for i, line in enumerate(text.splitlines()):
        if BEGIN.match(line):
            if start is not None:
                raise MarkerError(f"line {i + 1}: LAB-BEGIN inside the hole that starts on line {start[0] + 1}")
            m = BEGIN.match(line)
            start = (i, m["hint"].strip(), [], m["indent"])
        elif STUB.match(line):
            if start is None:
                raise MarkerError(f"line {i + 1}: LAB-STUB outside a hole")
            start[2].append(STUB.match(line)["code"])
        elif END.match(line):
            if start is None:
                raise MarkerError(f"line {i + 1}: LAB-END without a LAB-BEGIN")
            found.append((start[0], i, start[1], start[2], start[3]))
            start = None
        elif "LAB-" in line and "//" in line and re.search(r"//\s*LAB-(BEGIN|STUB|END)", line):
            raise MarkerError(f"line {i + 1}: a malformed lab marker: {line.strip()}")
    if start is not None:
        raise MarkerError(f"the hole that starts on line {start[0] + 1} has no LAB-END")
    return found


def student_copy(text: str, step: str) -> tuple[str, list[tuple[int, int]]]:
    """The program with every hole replaced by its TODO and its stub lines, and where each hole now is:
    (its TODO line, its last stub line), 0-based and inclusive."""
    lines = text.splitlines()
    out, spans, last = [], [], 0
    for k, (first, end, hint, stubs, indent) in enumerate(holes(text), 1):
        out += lines[last:first]
        spans.append((len(out), len(out) + len(stubs)))
        out.append(f"{indent}// TODO(lab {step[:2]}.{k}): {hint}")
        out += [f"{indent}{s}" for s in stubs]
        last = end + 1
    out += lines[last:]
    return "\n".join(out) + "\n", spans


def student_text(text: str, step: str) -> str:
    return student_copy(text, step)[0]


def filled_text(text: str, step: str) -> str:
    """The student copy with every hole filled with the solution's lines (the TODO line kept): what a right
    submission looks like."""
    lines = text.splitlines()
    out, last = [], 0
    for k, (first, end, hint, _, indent) in enumerate(holes(text), 1):
        out += lines[last:first]
        out.append(f"{indent}// TODO(lab {step[:2]}.{k}): {hint}")
        out += [ln for ln in lines[first + 1:end] if not STUB.match(ln)]
        last = end + 1
    out += lines[last:]
    return "\n".join(out) + "\n"


def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def solution_lines(text: str) -> dict[str, int]:
    """{a hole's solution line, whitespace collapsed: its hole number} for the lines that give the answer
    away: stubs, short lines (`}`, `__syncthreads();`) and lines the student copy shows anyway excluded."""
    lines, given = text.splitlines(), squash(student_text(text, ""))
    out = {}
    for k, (first, end, _, _, _) in enumerate(holes(text), 1):
        for ln in lines[first + 1:end]:
            s = squash(ln)
            if not STUB.match(ln) and len(s) >= 12 and s not in given:
                out[s] = k
    return out


# ---- answers up to renamed variables ------------------------------------------------------------------------------
# A hole's answer must appear nowhere else a student can read, not even with other names: a neighbouring kernel that
# does the same with its own variables is the answer one paste away. Code is compared as tokens, comments dropped,
# every identifier that is not the tutorial's or CUDA's vocabulary (a wrapper, a keyword, a type, a builtin, a
# member name) replaced by `$`: `tma_load_2d(box, &map, col0, row0, &bar)` is `tma_load_2d ( $ , & $ , $ , $ , & $ )`.
TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*|\d[\w.]*|->|::|<<|>>|&&|\|\||[-+*/%<>=!&|^]=|\+\+|--|\S')
VOCABULARY = set("""
    alignas alignof asm auto bool break case char const constexpr continue default do double else enum extern false
    float for goto if inline int long return short signed sizeof static static_assert static_cast struct switch
    template true typedef typename union unsigned using void volatile while reinterpret_cast const_cast nullptr
    int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t float2 float4 uint2 uint4 int2 int4
    threadIdx blockIdx blockDim gridDim warpSize __shared__ __device__ __global__ __forceinline__ __restrict__
    __align__ pragma unroll""".split())


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def vocabulary() -> set[str]:
    """The names a kernel may share with the answer and still be another kernel: every function, macro and
    template the tutorial's sources call or define (its wrappers, CUDA's intrinsics), besides VOCABULARY."""
    names = set(VOCABULARY)
    sources = [p for d in ["common", *step_dirs()] for p in (REPO / d).rglob("*")
               if p.suffix in (".cu", ".cuh", ".h") and "twins" not in p.parts]
    for p in sources:
        code = strip_comments(p.read_text())
        names |= set(re.findall(r"\b([A-Za-z_]\w*)\(", code))  # called or defined, macros included
        names |= set(re.findall(r"\b([A-Za-z_]\w*)<[^;<>()]*>\(", code))  # templates: tmap_replace_dim<0>(
    return names


def shape(text: str, names: set[str]) -> list[str]:
    """The code's tokens with every identifier outside `names` (and not after . or ->) replaced by `$`. In
    Markdown and diffs a line's leading + or - (a diff's mark) is dropped first."""
    text = re.sub(r"^[+-](?![+-])", " ", text, flags=re.M)
    toks = TOKEN.findall(strip_comments(text))
    return ["$" if re.match(r"[A-Za-z_]", t) and t not in names and not (i and toks[i - 1] in (".", "->")) else t
            for i, t in enumerate(toks)]


def answer_shapes(program: str, names: set[str]) -> list[list[str]]:
    """Each hole's answer (its lines, stubs left out) as shape() tokens."""
    lines = program.splitlines()
    return [shape("\n".join(ln for ln in lines[first + 1:end] if not STUB.match(ln)), names)
            for first, end, _, _, _ in holes(program)]


def pasted_answers(text: str, answers: dict[str, list[str]], names: set[str]) -> list[str]:
    """The holes (NN.k) whose whole answer, up to renamed variables, stands somewhere in `text`."""
    flat = " " + " ".join(shape(text, names)) + " "
    return [k for k, a in answers.items() if " " + " ".join(a) + " " in flat]


def scrub_lesson(text: str, step: str, program: str) -> str:
    """The lesson as a student copy shows it: a line that quotes a hole's solution (in a code or a diff
    block) becomes that hole's TODO line, so the copy shows the hole and not the answer."""
    sols, out = solution_lines(program), []
    for ln in text.splitlines():
        body = ln[1:] if ln[:1] in "+- " and squash(ln[1:]) in sols else ln
        k = sols.get(squash(body))
        out.append(f"{ln[:len(ln) - len(ln.lstrip())]}// TODO(lab {step[:2]}.{k}): see the hole in the program" if k else ln)
    return "\n".join(out) + "\n"


LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")


def relink(text: str, folder: str, exists) -> str:
    """A markdown file moved into a copy: a relative link whose target the copy lacks becomes its text and the
    path it had in the tutorial, so no link is dead. folder: the file's folder, relative to the tutorial's
    root; exists(path relative to the copy's root) says whether the copy has it."""
    def fix(m: re.Match) -> str:
        target = m[3]
        if re.match(r"^[a-z]+:|^#", target):
            return m[0]
        path = os.path.normpath(os.path.join(folder, target.split("#")[0]))
        if not path.startswith("..") and exists(path):
            return m[0]
        return f"{m[2]} (`{path}` in the full tutorial)"
    return LINK.sub(fix, text)


def student_file(f: pathlib.Path, step: str) -> str:
    """A step folder's file as the student copy holds it (links not yet fixed)."""
    text = f.read_text()
    if f.suffix == ".cu":
        return student_text(text, step)
    if f.name == "README.md":
        return scrub_lesson(text, step, step_program(step).read_text())
    return text


def step_program(step: str) -> pathlib.Path:
    return next((REPO / step).glob("*.cu"))


def step_files(step: str) -> list[pathlib.Path]:
    """The files a step folder hands out (its bugs/ stay with the instructor: they quote solutions)."""
    return [f for f in sorted((REPO / step).iterdir()) if f.is_file()]


def make_lab(step: str, out_root: pathlib.Path) -> pathlib.Path:
    """The student copy of one step folder: its program with holes, everything else as it is, dead links fixed."""
    dst = out_root / step
    dst.mkdir(parents=True, exist_ok=True)
    for f in step_files(step):
        (dst / f.name).write_text(student_file(f, step))
    for f in dst.glob("*.md"):  # once every file is there
        f.write_text(relink(f.read_text(), step, lambda p: (out_root / p).exists()))
    return dst


# ---- what was handed out, and how a submission differs from it ---------------------------------------------------

def handed_out(step: str) -> tuple[str, list[tuple[int, int]]]:
    """The program as handed out and its holes' spans. In the tutorial: made from the solution. In the
    bundle, whose programs are the students' own copies: the saved copy and spans."""
    if not BUNDLE_MARK.exists():
        return student_copy(step_program(step).read_text(), step)
    saved = HANDED_OUT / step / step_program(step).name
    spans = [(int(a), int(b)) for a, b in (ln.split() for ln in (HANDED_OUT / step / "holes.txt").read_text().splitlines())]
    return saved.read_text(), spans


def handed_out_file(step: str, name: str) -> str | None:
    """Another file of the step as handed out (None if the step has no such file)."""
    if BUNDLE_MARK.exists():
        p = HANDED_OUT / step / name
        return p.read_text() if p.is_file() else None
    p = REPO / step / name
    return student_file(p, step) if p.is_file() else None


def code_lines(text: str) -> list[tuple[int, str]]:
    """(0-based line, its code) for every line that holds code: comments dropped (// and /* */, not inside a
    string), its tokens one space apart. An edit of whitespace or of a comment changes none of them."""
    out, code, in_block, line = [], [], False, 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if in_block:
            if text.startswith("*/", i):
                in_block, i = False, i + 2
                code.append(" ")
                continue
            if c == "\n":
                out.append((line, squash("".join(code))))
                code, line = [], line + 1
            i += 1
        elif c in "\"'":  # a literal, copied whole (escapes included)
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            code.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            in_block, i = True, i + 2
        elif c == "\n":
            out.append((line, squash("".join(code))))
            code, line = [], line + 1
            i += 1
        else:
            code.append(c)
            i += 1
    out.append((line, squash("".join(code))))
    # token by token: `x=1 ;` and `x = 1;` are the same code
    return [(ln, " ".join(TOKEN.findall(s))) for ln, s in out if s]


def show_change(old: str, new: str, width: int = 36) -> str:
    """Where two lines of code differ, with some context either side: the changed characters always show."""
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    a = max(0, p - width)

    def cut(t: str) -> str:
        end = min(len(t), len(t) - s + width)
        return ("..." if a else "") + t[a:end] + ("..." if end < len(t) else "")
    return f"{cut(old)!r} -> {cut(new)!r}"


def compare_with_copy(copy: str, spans: list[tuple[int, int]], submitted: str) -> tuple[list[str], list[int]]:
    """(every change of the submitted program outside its holes, as 'line N ...' of the copy as handed out;
    the holes, 0-based, that it left as they were). Whitespace and comments are not code: editing them is
    neither an edit outside a hole nor a fill. Inside a hole (its TODO line, its stubs, and lines added
    just before or after them) anything goes."""
    a, b = code_lines(copy), code_lines(submitted)
    # Hole k covers the code lines from `first[k]` (its first stub) up to, not including, `end[k]`.
    first = [sum(1 for ln, _ in a if ln < f) for f, _ in spans]
    end = [sum(1 for ln, _ in a if ln <= l) for _, l in spans]
    hole_of = lambda i: next((k for k in range(len(spans)) if first[k] <= i < end[k]), None)  # noqa: E731
    edits, touched = [], set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, [s for _, s in a], [s for _, s in b],
                                                       autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # lines added: in a hole if they touch one (just before, inside or just after it)
            at = [k for k in range(len(spans)) if first[k] <= i1 <= end[k]]
            touched.update(at)
            if not at:
                line = a[i1][0] + 1 if i1 < len(a) else len(copy.splitlines()) + 1
                edits.append(f"lines added before line {line}: {b[j1][1][:72]!r}")
            continue
        for i in range(i1, i2):
            k = hole_of(i)
            if k is not None:
                touched.add(k)
            elif tag == "replace" and j1 + (i - i1) < j2:
                edits.append(f"line {a[i][0] + 1} changed: {show_change(a[i][1], b[j1 + (i - i1)][1])}")
            else:
                edits.append(f"line {a[i][0] + 1} deleted: {a[i][1][:72]!r}")
        if tag == "replace" and j2 - j1 > i2 - i1 and hole_of(i2 - 1) is None and not any(
                first[k] <= i2 <= end[k] for k in range(len(spans))):
            edits.append(f"lines added before line {a[i2][0] + 1 if i2 < len(a) else len(copy.splitlines()) + 1}: "
                         f"{b[j1 + i2 - i1][1][:72]!r}")
    return edits, [k for k in range(len(spans)) if k not in touched]


def outside_edits(copy: str, spans: list[tuple[int, int]], submitted: str) -> list[str]:
    return compare_with_copy(copy, spans, submitted)[0]


def untouched_holes(copy: str, spans: list[tuple[int, int]], submitted: str, step: str) -> list[str]:
    """The holes (NN.k) the submission left as handed out (whitespace and comments aside)."""
    return [f"{step[:2]}.{k + 1}" for k in compare_with_copy(copy, spans, submitted)[1]]


# ---- grading ----------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Grade:
    student: str
    step: str
    passed: int = 0
    total: int = 0
    verdict: str = ""
    detail: str = ""
    lines: list[str] = dataclasses.field(default_factory=list)  # the report, a line per checked part
    tests: list[dict] = dataclasses.field(default_factory=list)  # results.json: name, status, output
    work: pathlib.Path | None = None  # the build and the logs

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT[self.verdict]

    def test(self, name: str, ok: bool | None, output: str = "") -> bool:
        """Record one test (None: it could not run here, `output` says why); returns ok."""
        self.tests.append({"name": name, "status": {True: "passed", False: "failed", None: None}[ok],
                           "output": output if ok is not None else f"not run here: {output}"})
        return bool(ok)

    def set(self, verdict: str, detail: str) -> None:
        if not self.verdict:
            self.verdict, self.detail = verdict, detail


def find_program(submission: pathlib.Path, step: str) -> pathlib.Path | None:
    """The student's program: SUBMISSION/NN_topic/<name>.cu, or SUBMISSION/<name>.cu."""
    name = step_program(step).name
    for p in (submission / step / name, submission / name):
        if p.is_file():
            return p
    return None


def build_command(step: str) -> tuple[list[str], list[str]]:
    """The compiler with the Makefile's flags, and the step's link flags: asked from make, so that they are
    the ones `make build-NN` uses (NVCC or CUDA_HOME, NVCCFLAGS, MBAR_TIMEOUT_NS and ARCH included)."""
    p = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(REPO), f"compile-command-{step[:2]}"],
                       capture_output=True, text=True)
    lines = p.stdout.splitlines()
    if p.returncode != 0 or len(lines) != 2:
        raise SystemExit(f"lab: `make compile-command-{step[:2]}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return shlex.split(lines[0]), shlex.split(lines[1])


def compile_program(nvcc: list[str], src: pathlib.Path, out: pathlib.Path, link: list[str], log: pathlib.Path,
                    extra: tuple[str, ...] = ()) -> str:
    """Builds src alone against this repository's headers; '' or the compiler's first error."""
    p = subprocess.run([*nvcc, *extra, f"-I{REPO}", str(src), "-o", str(out), *link], cwd=REPO,
                       capture_output=True, text=True)
    log.write_text(p.stdout + p.stderr)
    if p.returncode == 0:
        return ""
    first = next((ln for ln in (p.stdout + p.stderr).splitlines() if "error" in ln), f"see {log}")
    return first.replace(str(src.parent.parent) + "/", "").strip() or "the build failed"


def hole_kernels(rules: dict) -> list[str]:
    """The kernels a hole's rules name, in order."""
    return list(dict.fromkeys(k for key in ("sass", "sass_absent", "sass_count", "ptx_count") for k in rules.get(key, {})))


def mechanism(step: str, binary: pathlib.Path, source: pathlib.Path, build_log: str, nvcc: list[str]) -> dict[int, list[str]]:
    """{hole k: the problems of its mechanism rules (check.py's lab), 'kernel: no UTMASTG.2D' ...}: the
    machine code of the student's binary (and, for ptx_count, the PTX of the student's source)."""
    import sass  # noqa: PLC0415: needs cuobjdump, only a grade asks for it
    rules, functions, ptx = load_step(step).lab, sass.dump_sass(binary), None
    found = {}
    for k, r in sorted(rules.items()):
        problems = []
        for kernel, _, miss in sass.check_sass(functions, r.get("sass", {}), r.get("sass_absent"), r.get("sass_count")):
            problems += [f"{kernel}: not in the program"] if miss is None else [f"{kernel}: {m}" for m in miss]
        if r.get("ptx_count"):
            ptx = ptx if ptx is not None else sass.dump_ptx(source, nvcc[0])
            for kernel, want in r["ptx_count"].items():
                f = sass.kernel_function(ptx, kernel)
                for text, n in want.items():
                    got = sum(ln.startswith(text) for ln in ptx.get(f, [])) if f else 0
                    if got != n:
                        problems.append(f"{kernel}: {got} x {text} in the PTX, want {n}")
        for rx in r.get("build_log_absent", []):
            hit = next((ln.strip() for ln in build_log.splitlines() if re.search(rx, ln)), None)
            if hit:
                problems.append(f"ptxas: {hit[:140]}")
        found[k] = problems
    return found


def submission_key(step: str, submission: pathlib.Path, nvcc: list[str], link: list[str]) -> str:
    """What a prepared build depends on: the student's files and the compiler's flags (not its path)."""
    h = hashlib.sha1(" ".join([*nvcc[1:], "|", *link]).encode())
    for f in sorted((submission / step).glob("*")) + sorted(submission.glob("*.cu")):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def prepared(step: str, submission: pathlib.Path, work: pathlib.Path, nvcc: list[str], link: list[str]) -> Grade | None:
    """The Grade prepare() left in `work` for this very submission and flags, with its binaries; else None."""
    try:
        saved = json.loads((work / "prepared.json").read_text())
    except (OSError, ValueError):
        return None
    if saved.get("key") != submission_key(step, submission, nvcc, link):
        return None
    if not saved["verdict"] and not all((work / b).is_file() for b in ("program", "program.shadow")):
        return None
    if saved["verdict"] == "SKIP":  # what could not be judged there (no cuobjdump) is judged again here
        return None
    return Grade(submission.name, step, verdict=saved["verdict"], detail=saved["detail"], lines=saved["lines"],
                 tests=saved["tests"], work=work)


def prepare(step: str, submission: pathlib.Path, work: pathlib.Path, nvcc: list[str], link: list[str]) -> Grade:
    """Everything before the runs: the static verdicts (NO-BUILD, EDITED, UNFILLED, MECHANISM) and both builds,
    work/program and work/program.shadow. Runs on any machine; only the runs need the GPU. These verdicts are
    final on a machine with no GPU. What it found is saved (work/prepared.json), so that `grade-class
    --prebuilt` can run on a GPU machine what another machine built."""
    g = prepare_here(step, submission, work, nvcc, link)
    (work / "prepared.json").write_text(json.dumps({"key": submission_key(step, submission, nvcc, link),
                                                    "verdict": g.verdict, "detail": g.detail, "lines": g.lines,
                                                    "tests": g.tests}))
    return g


def prepare_here(step: str, submission: pathlib.Path, work: pathlib.Path, nvcc: list[str], link: list[str]) -> Grade:
    g = Grade(submission.name, step, work=work)
    shutil.rmtree(work, ignore_errors=True)
    (work / step).mkdir(parents=True)
    program = find_program(submission, step)
    if not g.test("the program is there", program is not None, f"{step}/{step_program(step).name}"):
        g.set("NO-BUILD", f"no {step}/{step_program(step).name} in the submission")
        return g
    copy, spans = handed_out(step)
    submitted = program.read_text(errors="replace")
    edits, untouched = compare_with_copy(copy, spans, submitted)
    folder = program.parent
    changed = [f.name for f in sorted(folder.iterdir()) if f.is_file() and GUARDED.match(f.name)
               and handed_out_file(step, f.name) is not None and f.read_text(errors="replace") != handed_out_file(step, f.name)]
    # Built alone: the program is copied into an empty folder, so its includes ("03_tma_load/...") resolve in
    # this repository, never in the submission.
    src = work / step / program.name
    src.write_text(submitted)
    error = compile_program(nvcc, src, work / "program", link, work / "build.log")
    if not g.test("it builds", not error, error):
        g.set("NO-BUILD", error)
        return g
    outside = ([f"{', '.join(changed)} changed (graded with the tutorial's own)"] if changed else []) + edits
    if not g.test("nothing changed outside the holes", not outside, "\n".join(outside)):
        g.set("EDITED", "; ".join(outside[:3] + ([f"and {len(outside) - 3} more"] if len(outside) > 3 else [])))
    names = [f"{step[:2]}.{k + 1}" for k in untouched]
    if not g.test("every hole filled", not untouched, f"hole {', '.join(names)} as handed out" if names else ""):
        g.set("UNFILLED", f"hole {', '.join(names)} as handed out")
    if g.verdict:
        return g
    rules = load_step(step).lab
    import sass  # noqa: PLC0415
    try:
        found = mechanism(step, work / "program", src, (work / "build.log").read_text(), nvcc)
    except sass.ToolMissing as e:  # a machine that cannot read machine code cannot judge it: not a grade
        tool = str(e).split()[0]
        why = (f"{tool} not found: the machine code cannot be checked without it; put it on PATH, set CUDA_HOME "
               f"to a toolkit with bin/{tool}, or run `make venv` (it installs it)")
        for k in rules:
            g.test(f"mechanism {step[:2]}.{k} ({', '.join(hole_kernels(rules[k]))})", None, why)
        g.set("SKIP", f"{why}; not a grade")
        return g
    for k, problems in found.items():
        kernels = ", ".join(hole_kernels(rules[k]))
        if not g.test(f"mechanism {step[:2]}.{k} ({kernels})", not problems,
                      ("\n".join(problems) + f"\nthe hole teaches: {rules[k]['teaches']}") if problems else ""):
            g.set("MECHANISM", f"hole {step[:2]}.{k}: {'; '.join(problems[:3])} (it teaches: {rules[k]['teaches']})")
    if g.verdict:
        return g
    error = compile_program(nvcc, src, work / "program.shadow", link, work / "build.shadow.log", ("-DTUTORIAL_SHADOW",))
    if error:  # the student's code builds, but not with the shadow's hooks: the tutorial's fault, said as such
        g.test("the shadow build builds", False, error)
        g.set("NO-BUILD", f"the shadow build (-DTUTORIAL_SHADOW) does not build: {error}")
    return g


def judge(g: Grade, out: str, err: str, code: int) -> Grade:
    """The run's verdict: its parts, then the step's own rules (this repository's check.py and expected output)."""
    lines = out.splitlines()
    first_bad = ""
    for i, ln in enumerate(lines):
        m = CHECK_RE.match(ln)
        if not m:
            continue
        g.total += 1
        hung = i + 1 < len(lines) and lines[i + 1].strip().startswith("hung:")
        if m["verdict"] == "PASS":
            g.passed += 1
            g.lines.append(f"  part {m['name']:<32} passed")
        elif hung:
            g.lines.append(f"  part {m['name']:<32} HUNG   {lines[i + 1].strip()}")
            first_bad = first_bad or f"{m['name']} {lines[i + 1].strip()}"
        else:
            g.lines.append(f"  part {m['name']:<32} FAILED ({m['wrong']} of {m['total']} wrong)")
            first_bad = first_bad or f"{m['name']}: {m['wrong']} of {m['total']} wrong"
        g.test(f"part {m['name']}", m["verdict"] == "PASS", lines[i + 1].strip() if hung else ln)
    if code == 124:
        run_verdict, detail = "TIMEOUT", err.strip()
    else:
        step = load_step(g.step)
        v = evaluate(step, out, code, step.expected_path.read_text(), err)
        run_verdict = {0: "PASS", 1: "FAIL", 77: "SKIP"}[EXIT[v.status]]
        detail = first_bad or (v.problems[0].splitlines()[0] if v.problems else "")
    g.test("the run: every rule of the step", {"PASS": True, "SKIP": None}.get(run_verdict, False),
           f"{run_verdict}{': ' + detail if detail else ''}")
    if not g.verdict:
        g.verdict, g.detail = run_verdict, detail
    else:
        g.lines.append(f"  the run: {run_verdict}{': ' + detail if detail else ''}")
    return g


def sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    home = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "compute-sanitizer"
    return found or (str(home) if home.is_file() else None)


def sanitize_tools(step: str) -> list[str]:
    """The step's sanitizer tools (its program's `// sanitize-tools:` line, else all three)."""
    listed = re.search(r"^// sanitize-tools: (.+)$", step_program(step).read_text(), re.M)
    return listed[1].split() if listed else ["memcheck", "racecheck", "synccheck"]


def sanitizer_findings(out: str, code: int) -> tuple[list[str], str, bool]:
    """(the errors compute-sanitizer reported, its summary line, clean?). Clean: exit 0 (it ran with
    --error-exitcode 1) and a summary of 0 errors; racecheck's warnings alone are shown, not failed."""
    lines = [ln[len("========= "):].strip() for ln in out.splitlines() if ln.startswith("========= ")]
    summary = next((ln for ln in lines if re.match(r"(ERROR|RACECHECK) SUMMARY:", ln)), "")
    errors = re.search(r"SUMMARY: (?:\d+ hazards? displayed \()?(\d+) errors?", summary)
    found = [ln for ln in lines if re.match(r"(Error|Invalid|Barrier error|Race reported)", ln)]
    return found, summary, code == 0 and errors is not None and int(errors[1]) == 0


def race_and_protocol(g: Grade, timeout: float) -> Grade:
    """After a passing run: the step's sanitizer tools on --quick, restricted to the holes' kernels (RACE), then
    the shadow build on --quick (PROTOCOL): a hazard the hardware hid on this run is still a mistake."""
    work, rules = g.work, load_step(g.step).lab
    kernels = list(dict.fromkeys(re.match(r"\w+", k)[0] for r in rules.values() for k in hole_kernels(r)))
    tool_path = sanitizer()
    for tool in sanitize_tools(g.step):
        name = f"compute-sanitizer {tool} on {', '.join(kernels)} (--quick)"
        if tool_path is None:
            g.test(name, None, "compute-sanitizer not found (PATH, CUDA_HOME/bin)")
            g.set("SKIP", "compute-sanitizer not found: set CUDA_HOME or PATH; not a grade")
            return g
        filters = [a for k in kernels for a in ("--kernel-name", f"kns={k}")]
        args = ["--tool", tool, "--report-api-errors", "no", "--error-exitcode", "1"]
        out, err, code = run_program(pathlib.Path(tool_path), timeout * 2, [*args, *filters, str(work / "program"), "--quick"])
        if "Internal Sanitizer Error" in out:
            # compute-sanitizer 2025.3 (CUDA 13.0) fails this way on step 07 with a kernel filter ("failed to
            # handle a hardware exception"), and not without one: then every kernel is checked, as make sanitize-NN does
            name = f"compute-sanitizer {tool} on every kernel (--quick; with the holes' kernels alone it failed)"
            out, err, code = run_program(pathlib.Path(tool_path), timeout * 2, [*args, str(work / "program"), "--quick"])
        (work / f"{tool}.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
        if code == 77:
            g.test(name, None, "no Hopper GPU")
            g.set("SKIP", "no Hopper GPU here (never a pass)")
            return g
        found, summary, ok = sanitizer_findings(out, code)
        g.test(name, ok, "\n".join(found[:5] + [summary]) if not ok else summary)
        g.lines.append(f"  {tool:<37} {'clean' if ok else 'FOUND ' + (found[0] if found else summary or f'exit {code}')[:110]}")
        if not ok:
            g.set("RACE", f"{tool}: {(found[0] if found else summary or f'exit {code}')[:160]} (kernels {', '.join(kernels)})")
            return g
    out, err, code = run_program(work / "program.shadow", timeout, ["--quick"])
    (work / "shadow.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
    reports = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("shadow:")]
    if code == 77:
        g.test("the shadow build (--quick)", None, "no Hopper GPU")
        g.set("SKIP", "no Hopper GPU here (never a pass)")
    elif reports:
        g.test("the shadow build (--quick)", False, "\n".join(reports[:5]))
        g.lines.append(f"  {'shadow build':<37} {reports[0][:120]}")
        g.set("PROTOCOL", reports[0][len("shadow: "):][:220])
    elif code != 0:
        bad = next((ln for ln in out.splitlines() if CHECK_RE.match(ln) and " FAIL " in ln), f"exit {code}")
        g.test("the shadow build (--quick)", False, bad)
        g.set("FAIL", f"the shadow build's --quick run: {bad}")
    else:
        g.test("the shadow build (--quick)", True, "no protocol rule broken")
        g.lines.append(f"  {'shadow build':<37} no protocol rule broken")
    return g


def run_and_judge(g: Grade, timeout: float) -> Grade:
    """The runs after prepare(): the program (FAIL, TIMEOUT, SKIP), then, if it passed, RACE and PROTOCOL."""
    out, err, code = run_program(g.work / "program", timeout, [])
    (g.work / "run.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
    judge(g, out, err, code)
    if g.verdict == "PASS":
        g.verdict = ""
        race_and_protocol(g, timeout)
        g.set("PASS", "")
    return g


def grade_one(step: str, submission: pathlib.Path, timeout: float, nvcc: list[str], link: list[str],
              work: pathlib.Path) -> Grade:
    g = prepare(step, submission, work, nvcc, link)
    return g if g.verdict else run_and_judge(g, timeout)


def report_text(g: Grade) -> str:
    return "".join(ln + "\n" for ln in g.lines) + (
        f"score {g.step}: {g.passed} of {g.total} checked parts passed\n"
        f"{g.step}: {g.verdict}{' (' + g.detail + ')' if g.detail else ''}\n")


def results_json(g: Grade) -> dict:
    """Gradescope's results.json: all or nothing (1 for PASS, else 0), each test with its status ("passed" or
    "failed", the only two Gradescope takes) and output. A test that could not run here has no status and a
    score of 0, and its output says why."""
    def test(t: dict) -> dict:
        if t["status"] in ("passed", "failed"):
            return {"name": t["name"], "status": t["status"], "output": t["output"]}
        why = t["output"] if t["output"].startswith("not run here: ") else f"not run here: {t['output']}"
        return {"name": t["name"], "score": 0.0, "output": why}
    return {"score": 1.0 if g.verdict == "PASS" else 0.0, "max_score": 1.0,
            "output": f"{g.step}: {g.verdict}{' (' + g.detail + ')' if g.detail else ''}",
            "tests": [test(t) for t in g.tests],
            "extra_data": {"verdict": g.verdict, "exit_code": g.exit_code, "parts_passed": g.passed,
                           "parts_total": g.total}}


def write_logs(g: Grade, logs: pathlib.Path) -> None:
    """The student's logs: the builds, the runs, the report and results.json."""
    logs.mkdir(parents=True, exist_ok=True)
    for name in ("build.log", "build.shadow.log", "run.txt", "shadow.txt", *(f"{t}.txt" for t in sanitize_tools(g.step))):
        if g.work and (g.work / name).is_file() and g.work != logs:
            shutil.copy(g.work / name, logs / name)
    (logs / "grade.txt").write_text(report_text(g))
    (logs / "results.json").write_text(json.dumps(results_json(g), indent=2) + "\n")


def report(g: Grade) -> None:
    print(report_text(g), end="")


def step_arg(text: str) -> str:
    """'03', '03_tma_load' or '03_tma_load/' -> '03_tma_load'; anything else is a usage error."""
    text = text.rstrip("/")
    found = [d for d in step_dirs() if d == text or d[:2] == text]
    if len(found) != 1:
        raise argparse.ArgumentTypeError(f"no step '{text}' (steps: {', '.join(step_dirs())})")
    return found[0]


def grade_class(step: str, folder: pathlib.Path, csv_path: pathlib.Path, timeout: float, jobs: int,
                nvcc: list[str], link: list[str], logs: pathlib.Path, prebuilt: bool = False) -> int:
    """Every student folder of DIR: builds in parallel, runs one at a time (one GPU), one CSV row each, each
    student's logs and results.json under `logs`/<student>/. prebuilt: a submission that an earlier grade-class
    of the same DIR prepared (built, static verdicts) with the same flags is not prepared again."""
    students = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")
                      and p.resolve() != logs.resolve())
    if not students:
        print(f"grade-class: no student folder in {folder}")
        return 2
    place = folder.resolve()
    place = place.relative_to(REPO) if place.is_relative_to(REPO) else place  # the same on every machine
    work = GRADE_BUILD / step / hashlib.sha1(str(place).encode()).hexdigest()[:10]

    def ready(s: pathlib.Path) -> Grade:
        return (prebuilt and prepared(step, s, work / s.name, nvcc, link)) or prepare(step, s, work / s.name, nvcc, link)
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        prepared_ = list(pool.map(ready, students))
    rows = []
    for s, g in zip(students, prepared_):
        if not g.verdict:
            run_and_judge(g, timeout)
        write_logs(g, logs / s.name)
        print(f"{s.name:<24} {g.verdict:<9} {g.passed:>3} of {g.total:<3} {g.detail[:100]}")
        rows.append(g)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["student", "step", "verdict", "exit_code", "parts_passed", "parts_total", "detail", "log"])
        for g in rows:
            log = logs / g.student
            w.writerow([g.student, g.step, g.verdict, g.exit_code, g.passed, g.total, g.detail,
                        os.path.relpath(log, csv_path.parent)])
    counts = {v: sum(g.verdict == v for g in rows) for v in VERDICT_EXIT if any(g.verdict == v for g in rows)}
    print(f"grade-class {step}: {len(rows)} submissions: " + ", ".join(f"{v} {n}" for v, n in counts.items()))
    print(f"grade-class {step}: {csv_path} (one row each), logs and results.json under {logs}/<student>/")
    skipped = counts.get("SKIP", 0)
    if skipped:
        print(f"grade-class {step}: {skipped} of {len(rows)} could not be judged here (SKIP: no Hopper GPU, no "
              f"compute-sanitizer or no cuobjdump); every other row is final (exit 77)")
        return 77
    return 0


# ---- the bundle ------------------------------------------------------------------------------------------------

# What the bundle ships besides the step folders: the harness and the tools a student's targets use. Not
# shipped: bugs/ (their diffs quote solutions), tests/, results/, notebooks/, the instructor's guide, the
# other tools (lab_samples.py and mutation.py quote solutions).
BUNDLE_TOOLS = ["checker.py", "contract.py", "lab.py", "sass.py", "sanitize.sh", "ncu_profile.py"]
# The bundle's own ignore file: the tutorial's hides labs/ (where `make lab-NN` writes copies), and in the bundle
# labs/handed_out/ is what the grader compares with, so it must survive a commit and a clone.
BUNDLE_GITIGNORE = "# built and installed here, never committed\nbuild/\n.venv/\n__pycache__/\n*.pyc\n"


def bundle_files() -> dict[str, str | pathlib.Path]:
    """{path in the bundle: its text, or the file to copy}."""
    files: dict[str, str | pathlib.Path] = {
        "README.md": REPO / "labs" / "STUDENT.md", "Makefile": REPO / "Makefile", "requirements.txt": REPO / "requirements.txt",
        ".clang-format": REPO / ".clang-format", ".gitignore": BUNDLE_GITIGNORE,
        ".lab-bundle": "The lab bundle of the Hopper data-movement tutorial: the programs here are your copies.\n"}
    files |= {str(p.relative_to(REPO)): p for p in sorted((REPO / "common").rglob("*")) if p.is_file()}
    files |= {f"tools/{n}": REPO / "tools" / n for n in BUNDLE_TOOLS}
    files |= {str(p.relative_to(REPO)): p for p in sorted((REPO / "requirements").glob("*.txt"))}  # make's parts
    for step in step_dirs():
        copy, spans = student_copy(step_program(step).read_text(), step)
        for f in step_files(step):
            text = copy if f.suffix == ".cu" else student_file(f, step)
            files[f"{step}/{f.name}"] = files[f"labs/handed_out/{step}/{f.name}"] = text
        files[f"labs/handed_out/{step}/holes.txt"] = "".join(f"{a} {b}\n" for a, b in spans)
    names = set(files) | {str(pathlib.PurePath(n).parent) for n in files}
    for name, body in files.items():  # every link resolves in the bundle, or names its place in the tutorial
        if name.endswith(".md"):
            text = body.read_text() if isinstance(body, pathlib.Path) else body
            folder = "labs" if name == "README.md" else str(pathlib.PurePath(name).parent)
            files[name] = relink(text, folder, lambda p: p in names or p == ".")
    return files


def hole_list(step: str) -> list[tuple[int, str]]:
    """(1-based line, hint) of each hole of the step's program as handed out: from the solution's markers in
    the tutorial, from the copy's TODO lines in the bundle (whose programs have no markers)."""
    if not BUNDLE_MARK.exists():
        return [(first + 1, hint) for first, _, hint, _, _ in holes(step_program(step).read_text())]
    copy, spans = handed_out(step)
    lines = copy.splitlines()
    return [(f + 1, re.sub(r"^\s*// TODO\(lab \d+\.\d+\): ", "", lines[f])) for f, _ in spans]


def dist(out: pathlib.Path) -> None:
    """A tarball an instructor can hand out: one folder, tutorial-labs/, that builds, runs and self-grades."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        for name, body in sorted(bundle_files().items()):
            blob = body.read_bytes() if isinstance(body, pathlib.Path) else body.encode()
            info = tarfile.TarInfo(f"tutorial-labs/{name}")
            info.size, info.mode = len(blob), 0o644
            tar.addfile(info, io.BytesIO(blob))
    print(f"wrote {out}: unpack it (tar xzf), then read tutorial-labs/README.md")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="verb", required=True)
    m = sub.add_parser("make", help="write the student copy of a step")
    m.add_argument("step", type=step_arg)
    m.add_argument("--out", type=pathlib.Path, default=REPO / "labs")
    for verb in ("grade", "grade-class"):
        g = sub.add_parser(verb, help="grade one submission folder" if verb == "grade" else
                           "grade every submission folder of DIR into a CSV")
        g.add_argument("step", type=step_arg)
        g.add_argument("folder", type=pathlib.Path, help="a student's folder (holding NN_topic/)" if verb == "grade"
                       else "DIR: one folder per student, each holding NN_topic/")
        g.add_argument("--timeout", type=float, default=600.0, help="seconds a run may take (default 600)")
        g.add_argument("--nvcc", help="the compiler and its flags (default: asked from make)")
        g.add_argument("--link", help="the link flags (default: asked from make)")
        if verb == "grade-class":
            g.add_argument("--csv", type=pathlib.Path, help="default: DIR/grades_NN.csv")
            g.add_argument("--logs", type=pathlib.Path, help="each student's logs and results.json go to "
                           "LOGS/<student>/ (default: DIR/logs_NN)")
            g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel builds")
            g.add_argument("--prebuilt", action="store_true", help="reuse what an earlier grade-class of DIR built "
                           "(with the same flags), e.g. on a machine with no GPU: build there, run here")
    o = sub.add_parser("grade-output", help="grade a saved output of a run (what grade prints after its run)")
    o.add_argument("step", type=step_arg)
    o.add_argument("output", type=pathlib.Path)
    o.add_argument("--exit-code", type=int, default=0, help="that run's exit code")
    d = sub.add_parser("dist", help="write the bundle for students")
    d.add_argument("--out", type=pathlib.Path, default=REPO / "build" / "labs.tar.gz")
    h = sub.add_parser("holes", help="list the holes and their hints")
    h.add_argument("step", nargs="?", type=step_arg)
    a = ap.parse_args()

    if a.verb == "dist":
        dist(a.out)
        return 0
    if a.verb == "holes":
        for s in [a.step] if a.step else step_dirs():
            for k, (line, hint) in enumerate(hole_list(s), 1):
                print(f"{s[:2]}.{k}  {s}/{step_program(s).name}:{line}  {hint}")
        return 0
    if a.verb == "make":
        if BUNDLE_MARK.exists():
            print(f"lab: this is the lab bundle; your copy of {a.step} is {a.step}/ already")
            return 2
        dst = make_lab(a.step, a.out)
        print(f"wrote {dst}: fill the TODO(lab ...) holes in {step_program(a.step).name}, then "
              f"`python3 tools/lab.py grade {a.step[:2]} {a.out}`")
        return 0
    if a.verb == "grade-output":
        if not a.output.is_file():
            print(f"lab: {a.output}: not a file")
            return 2
        g = judge(Grade("-", a.step), a.output.read_text(errors="replace"), "", a.exit_code)
        report(g)
        return g.exit_code
    if not a.folder.is_dir():
        print(f"lab: {a.folder}: not a folder")
        return 2
    nvcc, link = build_command(a.step) if a.nvcc is None or a.link is None else ([], [])
    nvcc, link = shlex.split(a.nvcc) if a.nvcc else nvcc, shlex.split(a.link) if a.link is not None else link
    if a.verb == "grade-class":
        return grade_class(a.step, a.folder, a.csv or a.folder / f"grades_{a.step[:2]}.csv", a.timeout, a.jobs, nvcc,
                           link, a.logs or a.folder / f"logs_{a.step[:2]}", a.prebuilt)
    g = grade_one(a.step, a.folder, a.timeout, nvcc, link, GRADE_BUILD / a.step / a.folder.resolve().name)
    write_logs(g, g.work)
    report(g)
    print(f"logs and results.json: {os.path.relpath(g.work)}/")
    return g.exit_code


if __name__ == "__main__":
    sys.exit(main())
