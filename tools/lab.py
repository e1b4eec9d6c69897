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
compared (an edited one is reported, and fails the grade). Verdicts, first
match wins, with the exit code of `grade`:

    NO-BUILD  2    no program in the submission, or it does not compile
    EDITED    1    the program changed outside its holes, or check.py, expected_output.txt or a header changed
    UNFILLED  1    a hole is exactly as handed out
    TIMEOUT   124  the run passed the time limit
    SKIP      77   no Hopper GPU here (never a pass)
    FAIL      1    a check failed or a wait hung (the first one is named)
    PASS      0    every rule of the step passed
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import dataclasses
import difflib
import io
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
VERDICT_EXIT = {"PASS": 0, "FAIL": 1, "UNFILLED": 1, "EDITED": 1, "NO-BUILD": 2, "SKIP": 77, "TIMEOUT": 124}
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


def outside_edits(copy: str, spans: list[tuple[int, int]], submitted: str) -> list[str]:
    """Every change of the submitted program outside its holes, as 'line N: ...' of the copy as handed out.
    Inside a hole (its TODO line, its stubs, and just before or after them) anything goes."""
    a, b = [ln.rstrip() for ln in copy.splitlines()], [ln.rstrip() for ln in submitted.splitlines()]
    in_hole = lambda i: any(f <= i <= l for f, l in spans)  # noqa: E731
    at_hole = lambda i: any(f <= i <= l + 1 for f, l in spans)  # noqa: E731
    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for i in range(i1, i2):
            if not in_hole(i):
                edits.append(f"line {i + 1} {'deleted' if tag == 'delete' else 'changed'}: {a[i].strip()[:60]!r}")
        if tag == "insert" and not at_hole(i1):
            edits.append(f"lines added before line {i1 + 1}: {b[j1].strip()[:60]!r}")
    return edits


def untouched_holes(copy: str, spans: list[tuple[int, int]], submitted: str, step: str) -> list[str]:
    """The holes (NN.k) the submission left exactly as handed out."""
    a, b = [ln.rstrip() for ln in copy.splitlines()], [ln.rstrip() for ln in submitted.splitlines()]
    touched = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            touched |= {k for k, (f, l) in enumerate(spans) if (i1 <= l and i2 > f) or (i1 == i2 and f <= i1 <= l + 1)}
    return [f"{step[:2]}.{k + 1}" for k in range(len(spans)) if k not in touched]


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

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT[self.verdict]


def find_program(submission: pathlib.Path, step: str) -> pathlib.Path | None:
    """The student's program: SUBMISSION/NN_topic/<name>.cu, or SUBMISSION/<name>.cu."""
    name = step_program(step).name
    for p in (submission / step / name, submission / name):
        if p.is_file():
            return p
    return None


def build_command(step: str) -> tuple[list[str], list[str]]:
    """The compiler with the Makefile's flags, and the step's link flags: asked from make, so that they are
    the ones `make build-NN` uses (NVCCFLAGS, MBAR_TIMEOUT_NS and ARCH included)."""
    p = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(REPO), f"compile-command-{step[:2]}"],
                       capture_output=True, text=True)
    lines = p.stdout.splitlines()
    if p.returncode != 0 or len(lines) != 2:
        raise SystemExit(f"lab: `make compile-command-{step[:2]}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return shlex.split(lines[0]), shlex.split(lines[1])


def prepare(step: str, submission: pathlib.Path, work: pathlib.Path, nvcc: list[str], link: list[str]) -> Grade:
    """Everything before the run: the static verdicts (NO-BUILD, EDITED, UNFILLED) and the build. The binary is
    work/program. Runs on any machine; only the run needs the GPU."""
    g = Grade(submission.name, step)
    program = find_program(submission, step)
    if program is None:
        g.verdict, g.detail = "NO-BUILD", f"no {step}/{step_program(step).name} in the submission"
        return g
    copy, spans = handed_out(step)
    submitted = program.read_text(errors="replace")
    edits = outside_edits(copy, spans, submitted)
    folder = program.parent
    changed = [f.name for f in sorted(folder.iterdir()) if f.is_file() and GUARDED.match(f.name)
               and handed_out_file(step, f.name) is not None and f.read_text(errors="replace") != handed_out_file(step, f.name)]
    # Built alone: the program is copied into an empty folder, so its includes ("03_tma_load/...") resolve in
    # this repository, never in the submission.
    shutil.rmtree(work, ignore_errors=True)
    (work / step).mkdir(parents=True)
    src = work / step / program.name
    src.write_text(submitted)
    p = subprocess.run([*nvcc, f"-I{REPO}", str(src), "-o", str(work / "program"), *link], cwd=REPO,
                       capture_output=True, text=True)
    (work / "build.log").write_text(p.stdout + p.stderr)
    if p.returncode != 0:
        first = next((ln for ln in (p.stdout + p.stderr).splitlines() if "error" in ln), "see build.log")
        g.verdict, g.detail = "NO-BUILD", first.replace(str(work) + "/", "").strip()
    elif edits or changed:
        g.verdict = "EDITED"
        g.detail = "; ".join(([f"{', '.join(changed)} changed (graded with the tutorial's own)"] if changed else [])
                             + edits[:3] + ([f"and {len(edits) - 3} more"] if len(edits) > 3 else []))
    elif untouched := untouched_holes(copy, spans, submitted, step):
        g.verdict, g.detail = "UNFILLED", f"hole {', '.join(untouched)} as handed out"
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
    if code == 124:
        run_verdict, detail = "TIMEOUT", err.strip()
    else:
        step = load_step(g.step)
        v = evaluate(step, out, code, step.expected_path.read_text(), err)
        run_verdict = {0: "PASS", 1: "FAIL", 77: "SKIP"}[EXIT[v.status]]
        detail = first_bad or (v.problems[0].splitlines()[0] if v.problems else "")
    if not g.verdict:
        g.verdict, g.detail = run_verdict, detail
    else:
        g.lines.append(f"  the run: {run_verdict}{': ' + detail if detail else ''}")
    return g


def grade_one(step: str, submission: pathlib.Path, timeout: float, nvcc: list[str], link: list[str],
              work: pathlib.Path) -> Grade:
    g = prepare(step, submission, work, nvcc, link)
    if g.verdict == "NO-BUILD":
        return g
    out, err, code = run_program(work / "program", timeout, [])
    (work / "run.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
    return judge(g, out, err, code)


def report(g: Grade) -> None:
    for ln in g.lines:
        print(ln)
    print(f"score {g.step}: {g.passed} of {g.total} checked parts passed")
    print(f"{g.step}: {g.verdict}{' (' + g.detail + ')' if g.detail else ''}")


def step_arg(text: str) -> str:
    """'03', '03_tma_load' or '03_tma_load/' -> '03_tma_load'; anything else is a usage error."""
    text = text.rstrip("/")
    found = [d for d in step_dirs() if d == text or d[:2] == text]
    if len(found) != 1:
        raise argparse.ArgumentTypeError(f"no step '{text}' (steps: {', '.join(step_dirs())})")
    return found[0]


def grade_class(step: str, folder: pathlib.Path, csv_path: pathlib.Path, timeout: float, jobs: int,
                nvcc: list[str], link: list[str]) -> int:
    """Every student folder of DIR: builds in parallel, runs one at a time (one GPU), one CSV row each."""
    students = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not students:
        print(f"grade-class: no student folder in {folder}")
        return 2
    work = GRADE_BUILD / step
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        prepared = list(pool.map(lambda s: prepare(step, s, work / s.name, nvcc, link), students))
    rows = []
    for s, g in zip(students, prepared):
        if g.verdict != "NO-BUILD":
            out, err, code = run_program(work / s.name / "program", timeout, [])
            (work / s.name / "run.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
            judge(g, out, err, code)
        print(f"{s.name:<24} {g.verdict:<9} {g.passed:>3} of {g.total:<3} {g.detail[:100]}")
        rows.append(g)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["student", "step", "parts_passed", "parts_total", "verdict", "exit_code", "detail"])
        for g in rows:
            w.writerow([g.student, g.step, g.passed, g.total, g.verdict, g.exit_code, g.detail])
    print(f"grade-class {step}: {len(rows)} submissions graded into {csv_path} (logs: {work})")
    if any(g.verdict == "SKIP" for g in rows):
        print(f"grade-class {step}: no Hopper GPU here, so the runs were skipped: not a grade (exit 77)")
        return 77
    return 0


# ---- the bundle ------------------------------------------------------------------------------------------------

# What the bundle ships besides the step folders: the harness and the tools a student's targets use. Not
# shipped: bugs/ (their diffs quote solutions), tests/, results/, notebooks/, the instructor's guide, the
# other tools (lab_samples.py and mutation.py quote solutions).
BUNDLE_TOOLS = ["checker.py", "contract.py", "lab.py", "sass.py", "sanitize.sh", "ncu_profile.py"]


def bundle_files() -> dict[str, str | pathlib.Path]:
    """{path in the bundle: its text, or the file to copy}."""
    files: dict[str, str | pathlib.Path] = {
        "README.md": REPO / "labs" / "STUDENT.md", "Makefile": REPO / "Makefile", "requirements.txt": REPO / "requirements.txt",
        ".clang-format": REPO / ".clang-format", ".gitignore": REPO / ".gitignore",
        ".lab-bundle": "The lab bundle of the Hopper data-movement tutorial: the programs here are your copies.\n"}
    files |= {str(p.relative_to(REPO)): p for p in sorted((REPO / "common").rglob("*")) if p.is_file()}
    files |= {f"tools/{n}": REPO / "tools" / n for n in BUNDLE_TOOLS}
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
            g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel builds")
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
            for k, (first, _, hint, _, _) in enumerate(holes(step_program(s).read_text()), 1):
                print(f"{s[:2]}.{k}  {s}/{step_program(s).name}:{first + 1}  {hint}")
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
        return grade_class(a.step, a.folder, a.csv or a.folder / f"grades_{a.step[:2]}.csv", a.timeout, a.jobs, nvcc, link)
    g = grade_one(a.step, a.folder, a.timeout, nvcc, link, GRADE_BUILD / a.step / a.folder.resolve().name)
    report(g)
    return g.exit_code


if __name__ == "__main__":
    sys.exit(main())
