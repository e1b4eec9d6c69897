"""The labs' holes and the student copy (tools/lab.py make): what a student receives, and how a submission
differs from it.

A hole is a marked region of one of a step's student files: its program (NN_topic/<topic>.cu) or one of its
part headers (NN_topic/parts/*.cuh), never another header (later steps include those, so they stay whole):

    // LAB-BEGIN: what to write, as a hint
    ...the solution's lines...
    // LAB-STUB: a line that keeps the student copy compiling (optional, any number)
    // LAB-END

The holes of a step are numbered NN.1, NN.2, ... in the order the compiler reads them: the program from the
top, each of the step's parts where the program (or a part) includes it. In the copy each hole becomes
`// TODO(lab NN.k): hint` followed by its stub lines, uncommented; the copy compiles, runs, and fails its
checks until the holes are filled.
"""

from __future__ import annotations

import difflib
import os
import pathlib
import re
from typing import NamedTuple

import contract

BEGIN = re.compile(r"^(?P<indent>\s*)// LAB-BEGIN: (?P<hint>.+)$")
STUB = re.compile(r"^\s*// LAB-STUB: (?P<code>.*)$")
END = re.compile(r"^\s*// LAB-END\s*$")
TODO = re.compile(r"^\s*// TODO\(lab (?P<label>\d+\.\d+)\): (?P<hint>.*)$")
# The bundle marks itself with this file; there the student files are the students' copies and the copies as
# handed out live under labs/handed_out/, for comparison.
BUNDLE_MARK = ".lab-bundle"
HANDED_OUT = "labs/handed_out"


def root() -> pathlib.Path:
    """The tutorial (or the bundle) this runs in; tests point contract.REPO at a tree of their own."""
    return contract.REPO


def in_bundle() -> bool:
    return (root() / BUNDLE_MARK).exists()


class MarkerError(ValueError):
    pass


class Hole(NamedTuple):
    first: int  # its LAB-BEGIN line, 0-based
    end: int    # its LAB-END line
    hint: str
    stubs: list[str]
    indent: str


def holes(text: str) -> list[Hole]:
    """Every hole of a file's text, in order."""
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
            found.append(Hole(start[0], i, start[1], start[2], start[3]))
            start = None
        elif re.search(r"//\s*LAB-(BEGIN|STUB|END)", line):
            raise MarkerError(f"line {i + 1}: a malformed lab marker: {line.strip()}")
    if start is not None:
        raise MarkerError(f"the hole that starts on line {start[0] + 1} has no LAB-END")
    return found


def hole_body(text: str, h: Hole) -> list[str]:
    """The solution's lines of a hole (its stubs and markers left out)."""
    return [ln for ln in text.splitlines()[h.first + 1:h.end] if not STUB.match(ln)]


# ---- a step's student files, and the order of its holes ----------------------------------------------------------

def step_program(step: str) -> pathlib.Path:
    return next((root() / step).glob("*.cu"))


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def student_files(step: str) -> list[str]:
    """A step's student files, relative to the tutorial's root, in the order the compiler reads them: its
    program, then each of its parts (NN_topic/parts/*.cuh) where it is first included; a part nothing
    includes comes last. The grader builds the student's versions of exactly these files."""
    parts = sorted(str(p.relative_to(root())) for p in (root() / step / "parts").glob("*")
                   if p.is_file() and p.suffix in (".cuh", ".h"))
    order: list[str] = []

    def read(rel: str) -> None:
        order.append(rel)
        for inc in INCLUDE.findall((root() / rel).read_text()):
            if inc in parts and inc not in order:
                read(inc)
    read(str(step_program(step).relative_to(root())))
    return order + [p for p in parts if p not in order]


def hole_labels(step: str) -> dict[str, list[str]]:
    """{student file: the labels (NN.k) of its holes}, numbered in the order the compiler reads them: a hole
    of the program after an #include of a part comes after that part's holes."""
    files, labels, k = student_files(step), {}, 0

    def read(rel: str) -> None:
        nonlocal k
        text = solution_text(rel)
        spots = [(h.first, None) for h in holes(text)]
        spots += [(m.start(), inc) for m in INCLUDE.finditer(text) for inc in [m[1]] if inc in files]
        line_of = lambda pos: text.count("\n", 0, pos)  # noqa: E731
        labels.setdefault(rel, [])
        for _, inc in sorted(((s if inc is None else line_of(s)), inc) for s, inc in spots):
            if inc is None:
                k += 1
                labels[rel].append(f"{step[:2]}.{k}")
            elif inc not in labels:
                read(inc)
    read(files[0])
    for rel in files:
        if rel not in labels:
            read(rel)
    return labels


def solution_text(rel: str) -> str:
    """A student file as the tutorial holds it, with its markers (in the bundle: the handed-out copy, which
    has none)."""
    return (root() / rel).read_text()


def step_holes(step: str) -> list[tuple[str, str, Hole]]:
    """(label, student file, hole) of every hole of a step, in label order (from the solution's markers)."""
    out = [(lab, rel, h) for rel, labs in hole_labels(step).items()
           for lab, h in zip(labs, holes(solution_text(rel)))]
    return sorted(out, key=lambda t: int(t[0].split(".")[1]))


# ---- the copy ----------------------------------------------------------------------------------------------------

def student_copy(text: str, labels: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """A file with every hole replaced by its TODO and its stub lines, and where each hole now is: (its TODO
    line, its last stub line), 0-based and inclusive."""
    lines = text.splitlines()
    out, spans, last = [], [], 0
    for label, h in zip(labels, holes(text)):
        out += lines[last:h.first]
        spans.append((len(out), len(out) + len(h.stubs)))
        out.append(f"{h.indent}// TODO(lab {label}): {h.hint}")
        out += [f"{h.indent}{s}" for s in h.stubs]
        last = h.end + 1
    out += lines[last:]
    return "\n".join(out) + "\n", spans


def filled_text(text: str, labels: list[str], fills: dict[str, str] | None = None) -> str:
    """The copy with every hole filled (the TODO line kept): with the solution's lines, or hole `label`
    with fills[label] (indented as the hole)."""
    lines, out, last = text.splitlines(), [], 0
    for label, h in zip(labels, holes(text)):
        out += lines[last:h.first]
        out.append(f"{h.indent}// TODO(lab {label}): {h.hint}")
        if fills and label in fills:
            out += [f"{h.indent}{ln}" if ln.strip() and not ln.startswith("#") else ln
                    for ln in fills[label].splitlines()]
        else:
            out += hole_body(text, h)
        last = h.end + 1
    return "\n".join(out + lines[last:]) + "\n"


def step_files(step: str) -> list[pathlib.Path]:
    """The files a step folder hands out: its own and its parts/ (bugs/ stays with the instructor: the
    diffs quote solutions; twins/ is a second program, not part of the lab)."""
    folder = root() / step
    return sorted([f for f in folder.iterdir() if f.is_file()] +
                  [f for f in (folder / "parts").glob("*") if f.is_file()])


def student_file(f: pathlib.Path, step: str) -> str:
    """A step folder's file as the student copy holds it (links not yet fixed)."""
    rel = str(f.relative_to(root()))
    labels = hole_labels(step)
    if rel in labels:
        return student_copy(f.read_text(), labels[rel])[0]
    if f.name == "README.md":
        return scrub_lesson(f.read_text())
    return f.read_text()


def make_lab(step: str, out_root: pathlib.Path) -> pathlib.Path:
    """The student copy of one step folder: its student files with holes, everything else as it is, dead
    links fixed."""
    for f in step_files(step):
        dst = out_root / f.relative_to(root())
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(student_file(f, step))
    for f in (out_root / step).glob("*.md"):  # once every file is there
        f.write_text(relink(f.read_text(), step, lambda p: (out_root / p).exists()))
    return out_root / step


# ---- the lesson: a listing that quotes a hole shows its TODO instead -------------------------------------------

def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


FENCE = re.compile(r"^\s*```")


def all_holes() -> list[tuple[str, str, Hole]]:
    """(label, file, hole) of every step's holes."""
    return [t for step in contract.step_dirs() for t in step_holes(step)]


def scrub_lesson(text: str) -> str:
    """A lesson as the copies show it. Each listing (a fenced block) is aligned with every student file it
    quotes, line by line; the run of its lines that quote a hole (its markers included, and whatever lies
    between them: a diff's + lines) becomes that hole's TODO line and stubs, as the copy has them, at the
    indentation the listing had; the code around it stays. A line outside a listing that quotes a whole line
    of an answer becomes the TODO line too."""
    holes_ = all_holes()
    files = {rel: solution_text(rel).splitlines() for rel in dict.fromkeys(rel for _, rel, _ in holes_)}
    answer_lines = {squash(ln): label for label, rel, h in holes_ for ln in hole_body(solution_text(rel), h)
                    if len(squash(ln)) >= 12}
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            j = next((j for j in range(i + 1, len(lines)) if FENCE.match(lines[j])), len(lines))
            out += [lines[i]] + scrub_listing(lines[i + 1:j], lines[i].strip()[3:].strip() == "diff", holes_, files)
            out += lines[j:j + 1]
            i = j + 1
            continue
        label = answer_lines.get(squash(lines[i]))
        out.append(f"{lines[i][:len(lines[i]) - len(lines[i].lstrip())]}// TODO(lab {label}): see the hole"
                   if label else lines[i])
        i += 1
    return "\n".join(out) + "\n"


def scrub_listing(block: list[str], diff: bool, holes_, files) -> list[str]:
    body = [ln[1:] if diff and ln[:1] in "+- " else ln for ln in block]
    keys = [squash(ln) for ln in body]
    best: tuple[int, str, list] = (0, "", [])  # a listing quotes one file: the one it shares the most code with
    for rel, flines in files.items():
        fkeys = [squash(ln) for ln in flines]
        blocks = difflib.SequenceMatcher(None, keys, fkeys, autojunk=False).get_matching_blocks()
        found = [(a, b, n) for a, b, n in blocks
                 if n >= 3 or any(len(keys[a + d]) >= 12 for d in range(n))]  # a lone `}` matches anywhere
        size = sum(len(keys[a + d]) for a, _, n in found for d in range(n))
        if size > best[0]:
            best = (size, rel, found)
    owner: dict[int, tuple[str, Hole]] = {}  # listing line -> the hole it quotes
    quoted: set[int] = set()                 # listing lines that quote the file
    for a, b, n in best[2]:
        for d in range(n):
            if keys[a + d]:
                quoted.add(a + d)
                hit = next(((lab, h) for lab, r, h in holes_ if r == best[1] and h.first <= b + d <= h.end), None)
                if hit:
                    owner[a + d] = hit
    out, i = [], 0
    while i < len(block):
        if i not in owner:
            out.append(block[i])
            i += 1
            continue
        label, h = owner[i]
        last = i  # the run ends at its hole's last quoted line before a line that quotes code outside it
        for j in range(i + 1, len(block)):
            if j in owner and owner[j][0] == label:
                last = j
            elif j in quoted:
                break
        indent = body[i][:len(body[i]) - len(body[i].lstrip())]
        mark = " " if diff else ""
        out.append(f"{mark}{indent}// TODO(lab {label}): {h.hint}")
        out += [f"{mark}{indent}{s}" for s in h.stubs]
        i = last + 1
    return out


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


# ---- what was handed out -----------------------------------------------------------------------------------------

def handed_out(step: str, rel: str) -> tuple[str, list[tuple[int, int]], list[str]]:
    """A student file as handed out, its holes' spans and labels. In the tutorial: made from the solution. In
    the bundle, whose student files are the students' own: the saved copy and labs/handed_out/NN/holes.txt."""
    if not in_bundle():
        labels = hole_labels(step)[rel]
        return (*student_copy(solution_text(rel), labels), labels)
    spans, labels = [], []
    for ln in (root() / HANDED_OUT / step / "holes.txt").read_text().splitlines():
        f, label, a, b = ln.split()
        if f == rel:
            spans.append((int(a), int(b)))
            labels.append(label)
    return (root() / HANDED_OUT / rel).read_text(), spans, labels


def handed_out_file(rel: str) -> str | None:
    """Another file of a step folder as handed out (None if there is no such file)."""
    p = root() / (HANDED_OUT + "/" + rel if in_bundle() else rel)
    if not p.is_file():
        return None
    return p.read_text() if in_bundle() else student_file(p, rel.split("/")[0])
