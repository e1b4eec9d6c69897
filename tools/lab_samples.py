"""A class of known submissions per step, to prove the grader before trusting it with students.

    python3 tools/lab_samples.py 03 04 06 --out build/sample_class     (or: all)

writes build/sample_class/03_tma_load/<sample>/03_tma_load/..., each a student folder; then
`make grade-class NN=03 DIR=build/sample_class/03_tma_load` must give each sample its verdict:

    solution          PASS        every hole filled with the solution's lines
    comments          PASS        the solution, re-indented and commented everywhere, check.py and a header
                                  with a comment more (comments and whitespace are never an edit)
    unfilled          UNFILLED    the copy as handed out
    wrong             FAIL        one hole filled with a plausible mistake (the run shows it)
    edited_checker    EDITED      the wrong fill, with check.py and expected_output.txt edited to accept it
    no_build          NO-BUILD    the solution with a line that does not compile in a hole
    <kind>_<k>_<what> the fills of hole NN.k (tools/lab_fills.py), each with its kind's verdict (EXPECTED):
                      correct PASS, bypass MECHANISM (or FAIL), mistake MECHANISM, race RACE,
                      protocol PROTOCOL, paste anything but PASS

`--record DIR` grades each class into DIR as `make grade-class` would (`--jobs`; with `--serial` one build
at a time, into grades_NN_serial.csv, whose verdicts must be grades_NN.csv's), resuming a class that an
earlier call left unfinished, and keeps each student's grade.txt and results.json: results/labs/NVIDIA_H200/
on the H200, results/labs/CPU/ on a machine with no GPU.
Without a GPU the verdicts that need no run are final (unfilled, edited_checker, no_build, bypass and
mistake, and a paste that does not build or lacks the mechanism); the others are SKIP, never PASS
(results/labs/CPU/). The fills are answers, so the student bundle ships neither this file nor lab_fills.py.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lab  # noqa: E402
import lab_class  # noqa: E402
import lab_copy  # noqa: E402
import lab_grade  # noqa: E402
from lab_fills import FILLS, NOT_POSSIBLE, WRONG  # noqa: E402

EXPECTED = {"solution": {"PASS"}, "comments": {"PASS"}, "unfilled": {"UNFILLED"}, "wrong": {"FAIL"},
            "edited_checker": {"EDITED"}, "no_build": {"NO-BUILD"}, "correct": {"PASS"},
            "bypass": {"MECHANISM", "FAIL"}, "mistake": {"MECHANISM"}, "race": {"RACE"},
            "protocol": {"PROTOCOL"}}
KINDS = ("correct", "bypass", "mistake", "race", "protocol", "paste")
NOT_CODE = "this line is not C++;"


def expected(name: str) -> set[str] | None:
    """The verdicts a sample may get (None: a paste, recorded as it comes, never PASS)."""
    return EXPECTED.get(name, EXPECTED.get(name.split("_")[0]))


def sample_name(label: str, fill: str) -> str:
    """'01.1', 'correct_two_tiles' -> 'correct_1_two_tiles': the hole's number after the kind."""
    kind, _, what = fill.partition("_")
    return f"{kind}_{label.split('.')[1]}" + (f"_{what}" if what else "")


def step_of(label: str) -> str:
    return next(d for d in lab_copy.contract.step_dirs() if d[:2] == label[:2])


def filled(step: str, fills: dict[str, str] | None = None) -> dict[str, str]:
    """{student file: its text} with every hole filled: with the solution's lines, or hole NN.k with fills[NN.k]."""
    return {rel: lab_copy.filled_text(lab_copy.solution_text(rel), labels, fills)
            for rel, labels in lab_copy.hole_labels(step).items()}


def with_comments(files: dict[str, str]) -> dict[str, str]:
    """The files re-indented and commented everywhere, as a student may: code unchanged."""
    out = {}
    for rel, text in files.items():
        lines = [("  " + ln if ln.strip() and not ln.lstrip().startswith("#") else ln)
                 + ("  // mine" if ln.rstrip().endswith(";") else "") for ln in text.splitlines()]
        out[rel] = "/* my lab, my comments */\n" + "\n".join(lines) + "\n\n"
    return out


def samples(step: str) -> dict[str, dict[str, str]]:
    """{sample name: {student file: its text}}."""
    right = filled(step)
    rel0 = next(rel for rel, labels in lab_copy.hole_labels(step).items() if labels)  # a file with a hole
    old, new = WRONG[step]
    hit = next(rel for rel, text in right.items() if old in text)
    out = {"solution": right, "comments": with_comments(right),
           "unfilled": {rel: lab_copy.handed_out(step, rel)[0] for rel in right},
           "wrong": {**right, hit: right[hit].replace(old, new, 1)}}
    text = right[rel0]
    at = text.index("\n", text.index("// TODO(lab ")) + 1
    out["no_build"] = {**right, rel0: text[:at] + NOT_CODE + "\n" + text[at:]}
    for label in (lab for labels in lab_copy.hole_labels(step).values() for lab in labels):
        for fill, body in FILLS.get(label, {}).items():
            out[sample_name(label, fill)] = filled(step, {label: body})
    return out


def write(folder: pathlib.Path, step: str, files: dict[str, str], edit_checker: bool = False,
          commented: bool = False) -> None:
    """A student folder as a student would hand it in: the whole step folder, their files changed."""
    for f in lab_copy.step_files(step):
        dst = folder / f.relative_to(lab_copy.root())
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(lab_copy.student_file(f, step))
    for rel, text in files.items():
        (folder / rel).write_text(text)
    dst = folder / step
    if edit_checker:  # what a student might try: no floors, and an expected output that is their own run's
        (dst / "check.py").write_text((dst / "check.py").read_text() + "\nperf_floors = {}\n")
        (dst / "expected_output.txt").write_text((dst / "expected_output.txt").read_text().replace("PASS", "FAIL"))
    if commented:  # comments and blank lines in the checker's data and in a header: not an edit
        (dst / "check.py").write_text("# my notes\n" + (dst / "check.py").read_text() + "\n# the end\n")
        header = next((h for h in sorted(dst.glob("*.cuh")) + sorted(dst.glob("*.h"))), None)
        if header:
            header.write_text(header.read_text() + "\n// read on 2026-11-29\n")


def sample_class(step: str, out: pathlib.Path, only: set[str] | None = None) -> pathlib.Path:
    folder = out / step
    for name, files in samples(step).items():
        if only and name not in only:
            continue
        write(folder / name, step, files, commented=name == "comments")
        if name == "wrong" and (not only or "edited_checker" in only):
            write(folder / "edited_checker", step, files, edit_checker=True)
    return folder


def record(step: str, folder: pathlib.Path, into: pathlib.Path, jobs: int, serial: bool, timeout: float) -> int:
    """Grade a step's sample class into `into` (results/labs/<GPU or CPU>/) as grade-class does, resuming one
    an earlier call left unfinished (a time limit): grades_NN.csv, or with `serial` grades_NN_serial.csv,
    graded one build at a time, whose verdicts must be those of grades_NN.csv. Of each student's logs, once
    the class is complete, only grade.txt and results.json are kept."""
    nvcc = lab_grade.build_command(step)
    link = lab_grade.link_flags(step, nvcc)
    suffix = "_serial" if serial else ""
    logs, csv_path = into / f"logs_{step[:2]}{suffix}", into / f"grades_{step[:2]}{suffix}.csv"
    for stale in (logs.iterdir() if logs.is_dir() else []):  # a sample no longer in the class
        if not (folder / stale.name).is_dir():
            shutil.rmtree(stale)
    code = lab_class.grade_class(step, folder, csv_path, timeout, 1 if serial else jobs, nvcc, link, logs,
                                 resume=True)
    for f in logs.rglob("*"):  # the logs of the builds and runs stay in build/grade/
        if f.is_file() and f.name not in ("grade.txt", "results.json"):
            f.unlink()
    other = into / f"grades_{step[:2]}.csv"
    if serial and other.is_file():
        a, b = lab_class.verdicts(other), lab_class.verdicts(csv_path)
        differ = {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}
        if differ:
            print(f"lab_samples: {step}: one build at a time, the verdicts differ: {differ}")
            return 1
        print(f"lab_samples: {step}: the same verdicts with parallel builds and one at a time")
    return code


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="+", help="step numbers or folders, or `all`")
    ap.add_argument("--out", type=pathlib.Path, default=lab_copy.root() / "build" / "sample_class")
    ap.add_argument("--record", type=pathlib.Path, metavar="DIR",
                    help="then grade each class into DIR (results/labs/NVIDIA_H200, results/labs/CPU)")
    ap.add_argument("--jobs", type=int, default=8, help="with --record: parallel builds (default 8)")
    ap.add_argument("--serial", action="store_true", help="with --record: grade one build at a time into "
                    "grades_NN_serial.csv and compare its verdicts with grades_NN.csv's (give it its own --out)")
    ap.add_argument("--timeout", type=float, default=600.0, help="with --record: seconds a run may take")
    a = ap.parse_args()
    steps = lab_copy.contract.step_dirs() if a.steps == ["all"] else [lab.step_arg(s) for s in a.steps]
    code = 0
    for s in steps:
        folder = sample_class(s, a.out)
        print(f"wrote {folder}: make grade-class NN={s[:2]} DIR={folder}")
        if a.record:
            code = max(code, record(s, folder, a.record, a.jobs, a.serial, a.timeout))
    return code


if __name__ == "__main__":
    sys.exit(main())
