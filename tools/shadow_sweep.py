"""The shadow build on a GPU: every planted mistake caught, every correct program clean.

    python3 tools/shadow_sweep.py bugs [--only 09] [--jobs 16] [--nvcc "nvcc <flags>"]   make mutation SHADOW=1
    python3 tools/shadow_sweep.py correct [--full] [--only 09]                          make shadow [FULL=1]

`bugs`: every learner mistake (NN_topic/bugs/N.diff) and every defect of
tests/defects/ whose catcher is `shadow:` is planted into a copy of the
sources (tools/bugs.py), all copies built as the shadow build in parallel,
then run one at a time with --quick. A mistake is caught when the run fails
and its first shadow report names one of the rules its diff's `shadow:` line
(or catcher) names; a mistake in the data (`shadow: check <line>`) when that
check line fails; `shadow: refused` when the program stops with exit 2. Each
run is recorded in results/runs/<GPU>/<step>.bugN.shadow.txt, and the table
(mistake, rule reported, where) in results/shadow_<GPU>.md.

`correct`: every step's shadow build with --quick, timed beside the normal
build's --quick run (the shadow's overhead), and with --full also at full
size, judged by the checker against the expected output (PERF floors aside).
Both must pass with no shadow report: no false alarm. The rows go into the
same results file.
Exit code: 0 when everything was as it must be, 1 otherwise, 77 with no GPU.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bugs  # noqa: E402
import mutation  # noqa: E402
from bench import record_run, run_dir, step_link  # noqa: E402
from checker import evaluate, load_step  # noqa: E402
from contract import GPU_RE, REPO, RESULTS, gpu_slug, step_dirs  # noqa: E402

SWEEP = REPO / "build" / "shadow_sweep"
# Waits in a planted copy give up after 2 s (10 s by default): a mistake that
# hangs is reported sooner, and --quick's waits take far less even when slow.
TIMEOUT_FLAG = "-DMBAR_TIMEOUT_NS=2000000000ull"


def nvcc_flags(nvcc: str) -> str:
    """The Makefile's compiler and flags (normal build), as the shadow build of a planted copy."""
    return f"{nvcc} {bugs.SHADOW_DEFINE} {TIMEOUT_FLAG}"


class Planted:
    def __init__(self, step: str, diff: pathlib.Path, label: str, expect: str):
        self.step, self.diff, self.label, self.expect = step, diff, label, expect
        self.tree = SWEEP / label.replace("/", "_")
        self.binary: pathlib.Path | None = None
        self.error = ""


def planted_mistakes(only: str) -> list[Planted]:
    out = []
    for step in step_dirs():
        for n, path in sorted(bugs.diff_paths(step).items()):
            out.append(Planted(step, path, f"{step}.bug{n}", bugs.describe(path)["shadow"]))
    for d in mutation.defects():  # the tests' defects (a step's own bugs are above already)
        if d.catcher.startswith("shadow:") and d.path.parent == mutation.DEFECTS:
            step, *rules = d.catcher[len("shadow:"):].split()
            out.append(Planted(step, d.path, f"{step}.{d.path.stem}", " ".join(rules)))
    return [p for p in out if only in p.label]


def build_one(p: Planted, nvcc: str) -> Planted:
    try:
        bugs.planted_copy(p.diff, p.tree)
        p.binary = bugs.build(p.step, p.tree, nvcc, step_link(p.step), "program_shadow")
    except ValueError as e:
        p.error = str(e)
    return p


def gpu_name(out: str) -> str:
    m = next((GPU_RE.match(ln) for ln in out.splitlines() if GPU_RE.match(ln)), None)
    return m["name"] if m else ""


def sweep_bugs(a) -> tuple[list[str], bool, str]:
    planted = planted_mistakes(a.only)
    nvcc = nvcc_flags(a.nvcc)
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        planted = list(pool.map(lambda p: build_one(p, nvcc), planted))
    print(f"shadow_sweep: {len(planted)} planted copies built in {time.time() - t0:.0f} s", flush=True)
    rows, ok, gpu = [], True, ""
    for p in planted:
        if p.error or p.binary is None:
            rows.append(f"| `{p.label}` | {p.expect} | STALE: {p.error.splitlines()[0] if p.error else 'no binary'} | | |")
            ok = False
            continue
        args = bugs.shadow_args(p.expect, [])
        code, out, err = bugs.run_binary(p.binary, args, a.timeout)
        if code == 77:
            print("shadow_sweep: no Hopper GPU here (exit 77)")
            return [], False, ""
        gpu = gpu or gpu_name(out)
        caught, shown = bugs.judge_shadow(p.expect, code, out)
        ok &= caught
        reports = bugs.shadow_rules(out)
        where = f"{reports[0]['func']} ({reports[0]['where']})" if reports else ""
        text = reports[0]["text"].replace("|", "/") if reports else ""
        rows.append(f"| `{p.label}` | {p.expect} | {'caught' if caught else 'MISSED'}: {shown} | {where} | {text} |")
        if gpu:
            record_run(run_dir(gpu) / f"{p.label}.shadow.txt",
                       [p.diff.relative_to(REPO).as_posix(), *args], code, out, err)
        print(f"shadow_sweep {p.label}: {'caught' if caught else 'MISSED'} ({shown})", flush=True)
    head = ["| planted mistake | rule it breaks (`shadow:`; `--full`: run at full size) | shadow build, `--quick` unless `--full` | where | the report |",
            "| --- | --- | --- | --- | --- |"]
    return head + rows, ok, gpu


def sweep_correct(a) -> tuple[list[str], bool, str]:
    rows = ["| step | normal `--quick` | shadow `--quick` | overhead | shadow, full size |", "| --- | --- | --- | --- | --- |"]
    ok, gpu = True, ""
    for step in step_dirs():
        if a.only not in step:
            continue
        normal, shadow = REPO / "build" / step, REPO / "build" / "shadow" / step
        if not normal.is_file() or not shadow.is_file():
            print(f"shadow_sweep: build {normal} and {shadow} first (make all; make SHADOW=1 all)")
            return [], False, ""
        t0 = time.time()
        ncode, nout, _ = bugs.run_binary(normal, ["--quick"], a.timeout)
        t1 = time.time()
        scode, sout, serr = bugs.run_binary(shadow, ["--quick"], a.timeout)
        t2 = time.time()
        if ncode == 77:
            print("shadow_sweep: no Hopper GPU here (exit 77)")
            return [], False, ""
        gpu = gpu or gpu_name(sout)
        quick_ok = scode == 0 and not bugs.shadow_rules(sout)
        full = "not run"
        if a.full:
            t3 = time.time()
            fcode, fout, ferr = bugs.run_binary(shadow, [], a.timeout)
            v = evaluate(load_step(step), fout, fcode, (REPO / step / "expected_output.txt").read_text(), ferr,
                         shadow=True)
            full = f"{v.status} in {time.time() - t3:.0f} s" + (f": {v.problems[0][:120]}" if v.problems else "")
            quick_ok &= v.status == "PASS"
            if gpu:
                record_run(run_dir(gpu) / f"{step}.shadow.txt", [], fcode, fout, ferr)
        ok &= quick_ok and ncode == 0
        rows.append(f"| {step} | {t1 - t0:.1f} s | {t2 - t1:.1f} s ({'PASS' if quick_ok else f'FAIL, exit {scode}'}) | "
                    f"{(t2 - t1) / max(t1 - t0, 1e-3):.1f}x | {full} |")
        print(f"shadow_sweep {step}: {rows[-1]}", flush=True)
        if not quick_ok:
            print("\n".join(ln for ln in sout.splitlines() if "FAIL" in ln or "shadow:" in ln or "hung:" in ln))
    return rows, ok, gpu


def merge_rows(section: str, rows: list[str], partial: bool) -> list[str]:
    """The table of a sweep (header and rows) merged into the same section of the file: a row whose first
    cell the sweep ran replaces the old one in place; with --only (partial), the rows of steps and
    mistakes it did not run stay as they were, in their place; a whole sweep keeps none of them."""
    key = lambda row: row.split("|")[1].strip()  # noqa: E731
    head, new = rows[:2], {key(r): r for r in rows[2:]}
    old = [ln for ln in section.splitlines() if ln.startswith("| ")][2:]
    out = [new.pop(key(r), r) for r in old if partial or key(r) in new]
    return head + out + [r for r in rows[2:] if key(r) in new]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["bugs", "correct"])
    ap.add_argument("--only", default="", help="only the steps or mistakes whose name contains this")
    ap.add_argument("--full", action="store_true", help="correct: also the full-size runs")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--nvcc", default="nvcc " + (REPO / "build" / "flags.txt").read_text().strip()
                    if (REPO / "build" / "flags.txt").is_file() else "nvcc",
                    help="the compiler and the normal build's flags (the Makefile passes them)")
    ap.add_argument("--timeout", type=float, default=600.0)
    a = ap.parse_args()
    rows, ok, gpu = sweep_bugs(a) if a.what == "bugs" else sweep_correct(a)
    if not rows:
        return 77 if not ok and not gpu else 1
    if gpu:
        path = RESULTS / f"shadow_{gpu_slug(gpu)}.md"
        title = {"bugs": "## Every planted mistake, in the shadow build",
                 "correct": "## Every correct program, in the shadow build (no false alarm), and its overhead"}[a.what]
        old = path.read_text() if path.is_file() else f"# The shadow build on the {gpu}\n"
        sections = re.split(r"(?m)^(?=## )", old)
        kept = [s for s in sections if not s.startswith(title)]
        before = next((s for s in sections if s.startswith(title)), "")
        rows = merge_rows(before, rows, partial=bool(a.only))
        path.write_text("".join(kept).rstrip("\n") + f"\n\n{title}\n\n" + "\n".join(rows) + "\n")
        print(f"shadow_sweep: wrote {path.relative_to(REPO)}")
    print("\n".join(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
