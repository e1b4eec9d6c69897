"""Classroom labs: student copies of the steps, with holes to fill, and a grader.

    python3 tools/lab.py make 03_tma_load [--out labs]     the student copy: labs/03_tma_load/
    python3 tools/lab.py grade 03_tma_load --binary labs/build/03_tma_load
    python3 tools/lab.py dist --out build/labs.tar.gz      every step's student copy + the harness, no solutions
    python3 tools/lab.py holes [03_tma_load]               the holes and their hints

A hole is a marked region of a step's program (never of its headers: later
steps include those, so they stay whole):

    // LAB-BEGIN: what to write, as a hint
    ...the solution's lines...
    // LAB-STUB: a line that keeps the student copy compiling (optional, any number)
    // LAB-END

In the solution the markers are comments. In the student copy each region
becomes `// TODO(lab NN.k): hint` followed by its stub lines, uncommented; the
copy compiles, runs, and fails its checks until the holes are filled. The
grader runs the student's binary like `make check-NN`, prints one line per
checked part (passed / FAILED / hung, with the bounded wait's report), a score
line, then the checker's verdict; its exit code is the checker's (0 only when
every rule passes).
"""

from __future__ import annotations

import argparse
import io
import pathlib
import re
import subprocess
import sys
import tarfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from checker import run_program, step_or_exit  # noqa: E402
from contract import CHECK_RE, REPO, step_dirs  # noqa: E402

BEGIN = re.compile(r"^(?P<indent>\s*)// LAB-BEGIN: (?P<hint>.+)$")
STUB = re.compile(r"^\s*// LAB-STUB: (?P<code>.*)$")
END = re.compile(r"^\s*// LAB-END\s*$")


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


def student_text(text: str, step: str) -> str:
    """The program with every hole replaced by its TODO and its stub lines."""
    lines = text.splitlines()
    out, last = [], 0
    for k, (first, end, hint, stubs, indent) in enumerate(holes(text), 1):
        out += lines[last:first]
        out.append(f"{indent}// TODO(lab {step[:2]}.{k}): {hint}")
        out += [f"{indent}{s}" for s in stubs]
        last = end + 1
    out += lines[last:]
    return "\n".join(out) + "\n"


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


def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def scrub_lesson(text: str, step: str, program: str) -> str:
    """The lesson as a student copy shows it: a line that quotes a hole's solution (in a code or a diff
    block) becomes that hole's TODO line, so the copy shows the hole and not the answer."""
    sols, out = solution_lines(program), []
    for ln in text.splitlines():
        body = ln[1:] if ln[:1] in "+- " and squash(ln[1:]) in sols else ln
        k = sols.get(squash(body))
        out.append(f"{ln[:len(ln) - len(ln.lstrip())]}// TODO(lab {step[:2]}.{k}): see the hole in the program" if k else ln)
    return "\n".join(out) + "\n"


def student_file(f: pathlib.Path, step: str) -> str:
    """A step folder's file as the student copy holds it."""
    text = f.read_text()
    if f.suffix == ".cu":
        return student_text(text, step)
    if f.name == "README.md":
        return scrub_lesson(text, step, step_program(step).read_text())
    return text


def step_program(step: str) -> pathlib.Path:
    return next((REPO / step).glob("*.cu"))


def make_lab(step: str, out_root: pathlib.Path) -> pathlib.Path:
    """The student copy of one step folder: its program with holes, everything else as it is."""
    dst = out_root / step
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted((REPO / step).iterdir()):
        if f.is_file():
            (dst / f.name).write_text(student_file(f, step))
    return dst


def grade(step: str, binary: pathlib.Path | None, timeout: float, saved: pathlib.Path | None = None,
          saved_code: int = 0) -> int:
    """Grade a student's binary (run like `make check-NN`), or a saved output of one."""
    if saved is not None:
        out, err, code = saved.read_text(), "", saved_code
    elif binary is None or not binary.is_file():
        print(f"grade {step}: {binary} not found (make grade-{step[:2]} builds it)")
        return 2
    else:
        out, err, code = run_program(binary, timeout, [])
    lines = out.splitlines()
    passed = total = 0
    for i, ln in enumerate(lines):
        m = CHECK_RE.match(ln)
        if not m:
            continue
        total += 1
        hung = i + 1 < len(lines) and lines[i + 1].strip().startswith("hung:")
        if m["verdict"] == "PASS":
            passed += 1
            print(f"  part {m['name']:<32} passed")
        elif hung:
            print(f"  part {m['name']:<32} HUNG   {lines[i + 1].strip()}")
        else:
            print(f"  part {m['name']:<32} FAILED ({m['wrong']} of {m['total']} wrong)")
    if code not in (0, 1):
        print(f"  the program exited {code}: {err.strip().splitlines()[-1] if err.strip() else '(no message)'}")
    print(f"score {step}: {passed} of {total} checked parts passed")
    if saved is None:  # keep the run beside the binary, for the checker and the instructor
        saved = binary.parent / f"{step}.grade.txt"
        saved.write_text(out)
        (binary.parent / f"{step}.grade.exit").write_text(f"{code}\n")
    verdict = subprocess.run([sys.executable, str(REPO / "tools" / "checker.py"), step, "--output", str(saved),
                              "--exit-code", str(code)], capture_output=True, text=True)
    print(verdict.stdout.strip().splitlines()[-1] if verdict.stdout.strip() else verdict.stderr.strip())
    return verdict.returncode


def dist(out: pathlib.Path) -> None:
    """A tarball an instructor can hand out: the harness, the tools, every step as a student copy."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        for name in ["Makefile", "requirements.txt", ".clang-format", ".gitignore", "common", "tools", "labs/README.md"]:
            p = REPO / name
            if p.exists():
                tar.add(p, arcname=f"tutorial-labs/{name}", filter=lambda t: None if "__pycache__" in t.name else t)
        for step in step_dirs():
            for f in sorted((REPO / step).iterdir()):
                if not f.is_file():
                    continue
                data = student_file(f, step)
                info = tarfile.TarInfo(f"tutorial-labs/{step}/{f.name}")
                blob = data.encode()
                info.size = len(blob)
                tar.addfile(info, io.BytesIO(blob))
    print(f"wrote {out}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    m = sub.add_parser("make")
    m.add_argument("step")
    m.add_argument("--out", type=pathlib.Path, default=REPO / "labs")
    g = sub.add_parser("grade")
    g.add_argument("step")
    g.add_argument("--binary", type=pathlib.Path)
    g.add_argument("--timeout", type=float, default=600.0)
    g.add_argument("--output", type=pathlib.Path, help="grade this saved output of a run instead")
    g.add_argument("--exit-code", type=int, default=0, help="with --output: that run's exit code")
    d = sub.add_parser("dist")
    d.add_argument("--out", type=pathlib.Path, default=REPO / "build" / "labs.tar.gz")
    h = sub.add_parser("holes")
    h.add_argument("step", nargs="?")
    a = ap.parse_args()
    if a.verb == "dist":
        dist(a.out)
        return 0
    steps = [a.step] if getattr(a, "step", None) else step_dirs()
    for s in steps:
        step_or_exit(s, a.verb)
    if a.verb == "holes":
        for s in steps:
            for k, (first, _, hint, _, _) in enumerate(holes(step_program(s).read_text()), 1):
                print(f"{s[:2]}.{k}  {step_program(s).name}:{first + 1}  {hint}")
        return 0
    if a.verb == "make":
        dst = make_lab(a.step, a.out)
        print(f"wrote {dst}: fill the TODO(lab ...) holes in {step_program(a.step).name}, then "
              f"`make grade-{a.step[:2]} LAB={a.out}`")
        return 0
    return grade(a.step, a.binary, a.timeout, a.output, a.exit_code)


if __name__ == "__main__":
    sys.exit(main())
