"""The bundle for students (tools/lab.py dist, `make lab-dist`): one folder, tutorial-labs/, that builds, runs
and self-grades, with no answer in it.

It holds every step's copy (its student files with holes, its lesson with each quoted hole shown as its TODO),
the harness, the Makefile and the tools a student's targets use; under labs/handed_out/ the copies as handed
out, which its grader compares with. The student files of a step are where every other step finds them:
10 includes 09's parts, so in the bundle lab 10 builds on the student's own lab 09.
"""

from __future__ import annotations

import io
import pathlib
import re
import tarfile

import contract
import lab_copy

# What the bundle ships besides the step folders: the harness and the tools a student's targets use. Not
# shipped: bugs/ (their diffs quote solutions), tests/, results/, notebooks/, the instructor's guide, the other
# tools (lab_samples.py and lab_fills.py hold the sample fills, which are answers; mutation.py quotes defects).
BUNDLE_TOOLS = ["checker.py", "contract.py", "sass.py", "sanitize.sh", "ncu_profile.py", "lab.py", "lab_copy.py",
                "lab_compare.py", "lab_rules.py", "lab_grade.py", "lab_run.py", "lab_class.py", "lab_bundle.py"]
# The bundle's own ignore file: the tutorial's hides labs/ (where `make lab-NN` writes copies), and in the bundle
# labs/handed_out/ is what the grader compares with, so it must survive a commit and a clone.
BUNDLE_GITIGNORE = "# built and installed here, never committed\nbuild/\n.venv/\n__pycache__/\n*.pyc\n"
MARK = "The lab bundle of the Hopper data-movement tutorial: the programs here are your copies.\n"


def bundle_files() -> dict[str, str | pathlib.Path]:
    """{path in the bundle: its text, or the file to copy}."""
    root = lab_copy.root()
    files: dict[str, str | pathlib.Path] = {
        "README.md": root / "labs" / "STUDENT.md", "Makefile": root / "Makefile",
        "requirements.txt": root / "requirements.txt", ".clang-format": root / ".clang-format",
        ".gitignore": BUNDLE_GITIGNORE, lab_copy.BUNDLE_MARK: MARK}
    files |= {str(p.relative_to(root)): p for p in sorted((root / "common").rglob("*")) if p.is_file()}
    files |= {f"tools/{n}": root / "tools" / n for n in BUNDLE_TOOLS}
    files |= {str(p.relative_to(root)): p for p in sorted((root / "requirements").glob("*.txt"))}  # make's parts
    for step in contract.step_dirs():
        holes = []
        for f in lab_copy.step_files(step):
            rel = str(f.relative_to(root))
            files[rel] = files[f"{lab_copy.HANDED_OUT}/{rel}"] = lab_copy.student_file(f, step)
        for rel, labels in lab_copy.hole_labels(step).items():
            _, spans = lab_copy.student_copy(lab_copy.solution_text(rel), labels)
            holes += [f"{rel} {label} {a} {b}\n" for label, (a, b) in zip(labels, spans)]
        files[f"{lab_copy.HANDED_OUT}/{step}/holes.txt"] = "".join(holes)
    names = set(files) | {str(pathlib.PurePath(n).parent) for n in files}
    for name, body in files.items():  # every link resolves in the bundle, or names its place in the tutorial
        if name.endswith(".md"):
            text = body.read_text() if isinstance(body, pathlib.Path) else body
            folder = "labs" if name == "README.md" else str(pathlib.PurePath(name).parent)
            files[name] = lab_copy.relink(text, folder, lambda p: p in names or p == ".")
    return files


def hole_list(step: str) -> list[tuple[str, str, int, str]]:
    """(label, file, 1-based line, hint) of each hole of a step: where its LAB-BEGIN is in the tutorial, where
    its TODO is in the bundle (whose files have no markers)."""
    if not lab_copy.in_bundle():
        return [(label, rel, h.first + 1, h.hint) for label, rel, h in lab_copy.step_holes(step)]
    out = []
    for rel in lab_copy.student_files(step):
        copy, spans, labels = lab_copy.handed_out(step, rel)
        lines = copy.splitlines()
        out += [(label, rel, a + 1, re.sub(r"^\s*// TODO\(lab \d+\.\d+\): ", "", lines[a]))
                for label, (a, _) in zip(labels, spans)]
    return sorted(out, key=lambda t: int(t[0].split(".")[1]))


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
