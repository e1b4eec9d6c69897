"""Classroom labs: student copies of the steps, with holes to fill, and a grader an instructor can trust.

    python3 tools/lab.py make 03 [--out labs]           the student copy: labs/03_tma_load/
    python3 tools/lab.py grade 03 SUBMISSION            grade one student's folder; the exit code is the verdict's
    python3 tools/lab.py grade-class 03 DIR [--csv F]   grade every student folder in DIR into one CSV
    python3 tools/lab.py dist --out build/labs.tar.gz   the bundle for students: every step's copy, no solutions
    python3 tools/lab.py holes [03]                     the holes and their hints

The pieces: tools/lab_copy.py (the holes and the copy), lab_compare.py (code compared as code), lab_rules.py
(what a hole teaches, in the machine code), lab_grade.py (a submission's files, builds and static verdicts),
lab_run.py (the runs and the report), lab_class.py (a class), lab_bundle.py (the bundle).

Grading never trusts the submission beyond its student files (the step's program and its parts/ headers): it
compares each with the copy as handed out (an edit outside the holes fails the grade), builds them against
this repository's harness and headers, runs the program with a time limit, and judges the output with this
repository's check.py and expected_output.txt; the submission's own copies of those are never read, only
compared (comments and whitespace aside). Before the run, the hole's own code must show what it teaches
(check.py's `lab`); after a passing run, the step's compute-sanitizer tools and the shadow build on --quick
must find nothing. Verdicts, first match wins, with the exit code of `grade`:

    NO-BUILD   2    a student file missing from the submission, or it does not compile
    EDITED     1    code outside the holes changed, or the code of check.py, expected_output.txt or a header
    UNFILLED   1    a hole is as handed out (whitespace and comments aside)
    MECHANISM  1    a hole's own code, or its kernels' machine code, lacks what it teaches (rule and kernel named)
    TIMEOUT    124  the run passed the time limit
    SKIP       77   this machine cannot judge: no Hopper GPU, no compute-sanitizer, or no cuobjdump for the
                    SASS rules (never a pass, never a fail; `make grader-tools` installs cuobjdump)
    FAIL       1    a check failed, a wait hung, or a floor of the hole's own lines failed twice in a row
    RACE       1    after a passing run, a compute-sanitizer tool reported an error or a hazard in the holes' kernels
    PROTOCOL   1    then, the shadow build's run stopped on a broken protocol rule
    PASS       0    every rule the holes answer for passed

NO-BUILD, EDITED, UNFILLED and MECHANISM need no GPU and are final on any machine; grade-class exits 0 when
every row is final, 77 when some row is SKIP.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shlex
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import contract  # noqa: E402
import lab_bundle  # noqa: E402
import lab_class  # noqa: E402
import lab_copy  # noqa: E402
import lab_grade  # noqa: E402
import lab_run  # noqa: E402


def step_arg(text: str) -> str:
    """'03', '03_tma_load' or '03_tma_load/' -> '03_tma_load'; anything else is a usage error."""
    text = text.rstrip("/")
    found = [d for d in contract.step_dirs() if d == text or d[:2] == text]
    if len(found) != 1:
        raise argparse.ArgumentTypeError(f"no step '{text}' (steps: {', '.join(contract.step_dirs())})")
    return found[0]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    sub = ap.add_subparsers(dest="verb", required=True)
    m = sub.add_parser("make", help="write the student copy of a step")
    m.add_argument("step", type=step_arg)
    m.add_argument("--out", type=pathlib.Path, default=lab_copy.root() / "labs")
    for verb in ("grade", "grade-class"):
        g = sub.add_parser(verb, help="grade one submission folder" if verb == "grade" else
                           "grade every submission folder of DIR into a CSV")
        g.add_argument("step", type=step_arg)
        g.add_argument("folder", type=pathlib.Path, help="a student's folder (holding NN_topic/)" if verb == "grade"
                       else "DIR: one folder per student, each holding NN_topic/")
        g.add_argument("--timeout", type=float, default=600.0, help="seconds a run may take (default 600)")
        g.add_argument("--nvcc", help="the compiler and its flags (default: asked from make)")
        g.add_argument("--link", help="the link flags (default: the step's libraries, from its build facts)")
        if verb == "grade-class":
            g.add_argument("--csv", type=pathlib.Path, help="default: DIR/grades_NN.csv")
            g.add_argument("--logs", type=pathlib.Path, help="each student's logs and results.json go to "
                           "LOGS/<student>/ (default: DIR/logs_NN)")
            g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel builds (the runs take "
                           "the GPU one at a time)")
            g.add_argument("--prebuilt", action="store_true", help="reuse what an earlier grade-class of DIR built "
                           "for the same files, rules and flags, e.g. on a machine with no GPU: build there, run here")
            g.add_argument("--resume", action="store_true", help="a student an earlier grade-class of DIR graded (one "
                           "stopped by a time limit) is not graded again, if nothing changed")
    o = sub.add_parser("grade-output", help="grade a saved output of a run (what grade prints after its run)")
    o.add_argument("step", type=step_arg)
    o.add_argument("output", type=pathlib.Path)
    o.add_argument("--exit-code", type=int, default=0, help="that run's exit code")
    d = sub.add_parser("dist", help="write the bundle for students")
    d.add_argument("--out", type=pathlib.Path, default=lab_copy.root() / "build" / "labs.tar.gz")
    h = sub.add_parser("holes", help="list the holes and their hints")
    h.add_argument("step", nargs="?", type=step_arg)
    return ap


def main() -> int:
    a = parser().parse_args()
    if a.verb == "dist":
        lab_bundle.dist(a.out)
        return 0
    if a.verb == "holes":
        for s in [a.step] if a.step else contract.step_dirs():
            for label, rel, line, hint in lab_bundle.hole_list(s):
                print(f"{label}  {rel}:{line}  {hint}")
        return 0
    if a.verb == "make":
        if lab_copy.in_bundle():
            print(f"lab: this is the lab bundle; your copy of {a.step} is {a.step}/ already")
            return 2
        dst = lab_copy.make_lab(a.step, a.out)
        files = ", ".join(rel for rel in lab_copy.hole_labels(a.step) if lab_copy.hole_labels(a.step)[rel])
        print(f"wrote {dst}: fill the TODO(lab ...) holes in {files}, then "
              f"`python3 tools/lab.py grade {a.step[:2]} {a.out}`")
        return 0
    if a.verb == "grade-output":
        if not a.output.is_file():
            print(f"lab: {a.output}: not a file")
            return 2
        g = lab_grade.Grade("-", a.step)
        lab_run.judge(g, a.output.read_text(errors="replace"), "", a.exit_code)
        print(lab_run.report_text(g), end="")
        return g.exit_code
    if not a.folder.is_dir():
        print(f"lab: {a.folder}: not a folder")
        return 2
    nvcc = shlex.split(a.nvcc) if a.nvcc else lab_grade.build_command(a.step)
    link = shlex.split(a.link) if a.link is not None else lab_grade.link_flags(a.step, nvcc)
    if a.verb == "grade-class":
        return lab_class.grade_class(a.step, a.folder, a.csv or a.folder / f"grades_{a.step[:2]}.csv", a.timeout,
                                     a.jobs, nvcc, link, a.logs or a.folder / f"logs_{a.step[:2]}", a.prebuilt,
                                     a.resume)
    g = lab_run.grade_one(a.step, a.folder, a.timeout, nvcc, link,
                          lab_grade.grade_build() / a.step / a.folder.resolve().name)
    lab_run.write_logs(g, g.work)
    print(lab_run.report_text(g), end="")
    print(f"logs and results.json: {os.path.relpath(g.work)}/")
    return g.exit_code


if __name__ == "__main__":
    sys.exit(main())
