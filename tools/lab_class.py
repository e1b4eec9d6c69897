"""Grading a class (tools/lab.py grade-class): every student folder of DIR, one CSV row each.

Each submission gets the verdict it would get alone: the builds (NO-BUILD, EDITED, UNFILLED, MECHANISM need
no GPU) run in parallel, `--jobs` at a time, and all of them finish before the first run; then the runs take
the GPU one at a time, each with the machine to itself, and a floor that fails is run again (tools/lab_run.py).
"""

from __future__ import annotations

import concurrent.futures
import csv
import hashlib
import json
import os
import pathlib

import lab_copy
import lab_grade
import lab_run


def verdicts(csv_path: pathlib.Path) -> dict[str, str]:
    """{student: verdict} of a class's CSV."""
    with open(csv_path, newline="") as f:
        return {r["student"]: r["verdict"] for r in csv.DictReader(f)}


def students(folder: pathlib.Path, logs: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")
                  and p.resolve() != logs.resolve())


def graded(step: str, s: pathlib.Path, work: pathlib.Path, nvcc: list[str], link: list[str]) -> lab_grade.Grade | None:
    """The grade an earlier, interrupted grade-class left beside a student's build for these very files, rules
    and flags, unless it was a SKIP; else None."""
    try:
        saved = json.loads((work / "graded.json").read_text())
    except (OSError, ValueError):
        return None
    if saved.pop("key", None) != lab_grade.submission_key(step, s, nvcc, link):
        return None
    if saved["verdict"] == "SKIP":  # what that machine could not judge is judged again here (a GPU's, say)
        return None
    return lab_grade.Grade(s.name, step, work=work, **saved)


def grade_class(step: str, folder: pathlib.Path, csv_path: pathlib.Path, timeout: float, jobs: int,
                nvcc: list[str], link: list[str], logs: pathlib.Path, prebuilt: bool = False,
                resume: bool = False) -> int:
    """Every student folder of DIR: one CSV row each, each student's logs and results.json under
    `logs`/<student>/. prebuilt: a submission that an earlier grade-class of the same DIR prepared (built,
    static verdicts) for the very same files, rules and flags is not prepared again. resume: nor graded again,
    if an earlier one that stopped before the end (a time limit) graded it."""
    class_ = students(folder, logs)
    if not class_:
        print(f"grade-class: no student folder in {folder}")
        return 2
    place = folder.resolve()
    root = lab_copy.root()
    place = place.relative_to(root) if place.is_relative_to(root) else place  # the same on every machine
    work = lab_grade.grade_build() / step / hashlib.sha1(str(place).encode()).hexdigest()[:10]
    done = {s.name: g for s in class_ if resume for g in [graded(step, s, work / s.name, nvcc, link)] if g}

    def ready(s: pathlib.Path) -> lab_grade.Grade:
        return (done.get(s.name) or ((prebuilt or resume) and lab_grade.prepared(step, s, work / s.name, nvcc, link))
                or lab_grade.prepare(step, s, work / s.name, nvcc, link))
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        grades = list(pool.map(ready, class_))  # every build done before the first run
    for s, g in zip(class_, grades):
        if s.name not in done:
            if not g.verdict:
                lab_run.run_and_judge(g, timeout)
            g.work.mkdir(parents=True, exist_ok=True)
            (g.work / "graded.json").write_text(json.dumps(
                {"key": lab_grade.submission_key(step, s, nvcc, link), "verdict": g.verdict, "detail": g.detail,
                 "passed": g.passed, "total": g.total, "lines": g.lines, "tests": g.tests, "kernels": g.kernels}))
        lab_run.write_logs(g, logs / s.name)
        print(f"{s.name:<24} {g.verdict:<9} {g.passed:>3} of {g.total:<3} {g.detail[:100]}")
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["student", "step", "verdict", "exit_code", "parts_passed", "parts_total", "detail", "log"])
        for g in grades:
            w.writerow([g.student, g.step, g.verdict, g.exit_code, g.passed, g.total, g.detail,
                        os.path.relpath(logs / g.student, csv_path.parent)])
    counts = {v: n for v in lab_grade.VERDICT_EXIT for n in [sum(g.verdict == v for g in grades)] if n}
    print(f"grade-class {step}: {len(grades)} submissions: " + ", ".join(f"{v} {n}" for v, n in counts.items()))
    print(f"grade-class {step}: {csv_path} (one row each), logs and results.json under {logs}/<student>/")
    skipped = counts.get("SKIP", 0)
    if skipped:
        print(f"grade-class {step}: {skipped} of {len(grades)} could not be judged here (SKIP: no Hopper GPU, no "
              f"compute-sanitizer or no cuobjdump); every other row is final (exit 77)")
        return 77
    return 0
