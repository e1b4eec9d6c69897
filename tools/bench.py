"""`make bench`: run every step at full size and record what it printed.

    python3 tools/bench.py [--build build] [--repeat N] [--keep-bug-runs] 01_memcpy_baseline 02_cp_async ...

For each step, on the GPU this runs on:
- its PERF lines go into results/<GPU>.csv (e.g. results/NVIDIA_H200.csv),
  one row per line; rows of the steps run now replace that GPU's earlier rows
  for those steps, other steps' rows stay;
- its whole output goes to results/runs/<GPU>/<step>.txt, and the output of
  each planted mistake (NN_topic/bugs/N.diff, applied and built by
  tools/bugs.py with the flags of build/flags.txt) to <step>.bugN.txt, with
  the exit code on the first line. Lessons quote these runs (tools/results_table.py),
  and the tests check that every recorded run still passes its checker.
A step runs N times in a row, N its check.py's bench_runs (default 1) or
--repeat N if larger: the first run is recorded as above, the others as
<step>.run2.txt ... <step>.runN.txt (the spread a lesson quotes,
tools/results_table.py; the tests judge every one of them), and older runK
files past N are removed, so no run of an earlier version stays beside them.
A step that fails (any non-zero exit) makes the whole command fail, and its
old rows are kept rather than replaced by nothing. A step that cannot run here
(exit 77: no Hopper GPU) stops the command with a SKIP line and exit 77, nothing
recorded: no other step can run either. A planted mistake's run may fail: that
is what it is for.
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from checker import parse_perf, positive_seconds, step_or_exit  # noqa: E402
from contract import GPU_RE, REPO, RESULTS, gpu_slug, link_flags, perf_csv, read_csv  # noqa: E402
import bugs  # noqa: E402

# rate is in unit (GB/s, or TFLOP/s for the GEMM); pct is the percent of reference (memcpy, or cublas).
COLUMNS = ["step", "name", "ms", "rate", "unit", "pct", "reference", "gpu", "sm", "cuda", "driver", "date"]


def parse_gpu(output: str) -> dict[str, str]:
    for ln in output.splitlines():
        m = GPU_RE.match(ln)
        if m:
            tail = ln.split(") CUDA ", 1)[1].split(" driver ", 1) if ") CUDA " in ln else ["", ""]
            return {"gpu": m["name"], "sm": m["sm"], "cuda": tail[0], "driver": tail[1] if len(tail) > 1 else ""}
    raise ValueError("no GPU line in the output")


def run_dir(gpu_name: str) -> pathlib.Path:
    """results/runs/<GPU>/: the recorded outputs of full runs on that GPU."""
    return RESULTS / "runs" / gpu_slug(gpu_name)


def write_rows(path: pathlib.Path, rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def run(binary: pathlib.Path, args: list[str], timeout: float) -> tuple[int, str, str]:
    p = subprocess.run([str(binary), *args], capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def record_run(path: pathlib.Path, args: list[str], code: int, out: str, err: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {' '.join(['$', path.name.split('.')[0], *args])}: exit {code}\n{out}"
                    + "".join(f"# stderr: {ln}\n" for ln in err.splitlines()))


def prune_runs(folder: pathlib.Path, step: str, runs: int) -> None:
    """Remove <step>.runK.txt for K > runs: no run of an earlier version stays beside this one's (a lesson's
    spread table reads every runK file there). Other steps' runs and the planted mistakes' stay."""
    for old in folder.glob(f"{step}.run[0-9]*.txt"):
        k = old.name[len(step) + 4:-4]
        if k.isdigit() and int(k) > runs:
            old.unlink()


def step_link(step: str) -> str:
    """The libraries a step links (its build facts, contract.build_facts), as the Makefile passes them."""
    libs = link_flags(step)
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return f"{libs} -Xlinker -rpath={cuda}/lib64" if libs else ""


def main() -> int:
    ap = argparse.ArgumentParser(description="Run every step and record its PERF lines and outputs.")
    ap.add_argument("steps", nargs="+")
    ap.add_argument("--build", default="build")
    ap.add_argument("--timeout", type=positive_seconds, default=600.0)
    ap.add_argument("--repeat", type=int, default=1, help="run each step N times (runs 2..N: <step>.runK.txt)")
    ap.add_argument("--keep-bug-runs", action="store_true",
                    help="leave the planted mistakes' recorded runs as they are (none built or run now)")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")

    new: dict[pathlib.Path, list[dict[str, str]]] = {}  # csv file -> rows
    done: dict[pathlib.Path, set[str]] = {}             # csv file -> steps run now
    failed = []
    for step in a.steps:
        rules = step_or_exit(step, "bench")
        binary = REPO / a.build / step
        if not binary.is_file():
            print(f"bench {step}: {binary} not found: build it with `make build-{step[:2]}`")
            return 2
        t0 = time.time()
        try:
            code, out, err = run(binary, [], a.timeout)
        except subprocess.TimeoutExpired:
            print(f"bench {step}: FAIL (timed out after {a.timeout:.0f} s)")
            failed.append(step)
            continue
        if code == 77:  # the program's guard: no Hopper GPU here, so no step can run (a skip is never a pass)
            print(f"bench: SKIP (exit 77): {(err.strip().splitlines() or ['the program cannot run here'])[-1]}")
            return 77
        perf, problems = parse_perf(out)
        if code != 0 or problems:
            print(f"bench {step}: FAIL (exit {code}) {problems} {err.strip()}")
            failed.append(step)
            continue
        try:
            gpu = parse_gpu(out)
        except ValueError as e:
            print(f"bench {step}: FAIL ({e})")
            failed.append(step)
            continue
        record_run(run_dir(gpu["gpu"]) / f"{step}.txt", [], code, out, err)
        runs = max(a.repeat, rules.bench_runs)
        prune_runs(run_dir(gpu["gpu"]), step, runs)
        for k in range(2, runs + 1):  # the same binary again: what varies from run to run
            try:
                kcode, kout, kerr = run(binary, [], a.timeout)
            except subprocess.TimeoutExpired:
                kcode, kout, kerr = 124, "", f"timed out after {a.timeout:.0f} s"
            record_run(run_dir(gpu["gpu"]) / f"{step}.run{k}.txt", [], kcode, kout, kerr)
            if kcode != 0 or parse_perf(kout)[1]:
                print(f"bench {step}: run {k} FAIL (exit {kcode}) {kerr.strip()}")
                failed.append(f"{step} run {k}")
        nvcc = f"{os.environ.get('NVCC', 'nvcc')} {(REPO / a.build / 'flags.txt').read_text().strip()}"
        for n in ([] if a.keep_bug_runs else sorted(bugs.diff_paths(step))):
            try:
                bcode, bout, berr = bugs.run(step, n, nvcc, step_link(step), a.timeout, [])
            except ValueError as e:  # a diff that no longer applies or builds: the bench fails
                print(f"bench {step} bugs/{n}.diff: FAIL ({e})")
                failed.append(f"{step}/bugs/{n}.diff")
                continue
            record_run(run_dir(gpu["gpu"]) / f"{step}.bug{n}.txt", [f"bugs/{n}.diff"], bcode, bout, berr)
            print(f"bench {step} bugs/{n}.diff: exit {bcode}")
        path = perf_csv(gpu["gpu"])
        date = time.strftime("%Y-%m-%d")
        for name, v in perf.items():
            new.setdefault(path, []).append({
                "step": step, "name": name, "ms": f"{v['ms']:.3f}", "rate": f"{v['rate']:.1f}", "unit": v["unit"],
                "pct": f"{v['pct']:.1f}", "reference": v["ref"], **gpu, "date": date})
        done.setdefault(path, set()).add(step)
        print(f"bench {step}: {len(perf)} PERF lines in {time.time() - t0:.1f} s -> {path.relative_to(REPO)}")

    for path, rows in new.items():
        kept = [r for r in read_csv(path) if r["step"] not in done[path]]
        write_rows(path, sorted(kept + rows, key=lambda r: r["step"]))
    if failed:
        print(f"bench: FAILED: {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
