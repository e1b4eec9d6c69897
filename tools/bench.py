"""`make bench`: run every step at full size and record its PERF lines.

    python3 tools/bench.py [--build build] 01_memcpy_baseline 02_cp_async ...

Writes results/<GPU name>.csv (e.g. results/NVIDIA_H200.csv), one row per PERF
line. Rows of the steps run now replace that GPU's earlier rows for the same
steps; other steps' rows stay, so benchmarking one step updates only it. A step
that fails (any non-zero exit, 77 included) makes the whole command fail, and
its old rows are kept rather than replaced by nothing.
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import re
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from checker import GPU_RE, parse_perf  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"
COLUMNS = ["step", "name", "ms", "gb_per_s", "pct_of_memcpy", "gpu", "sm", "cuda", "driver", "date"]


def gpu_file_name(gpu_name: str) -> str:
    """'NVIDIA H200' -> 'NVIDIA_H200.csv'."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", gpu_name).strip("_") + ".csv"


def parse_gpu(output: str) -> dict[str, str]:
    for ln in output.splitlines():
        m = GPU_RE.match(ln)
        if m:
            tail = re.search(r"CUDA (\S+) driver (.+)$", ln)
            return {"gpu": m["name"], "sm": m["sm"], "cuda": tail[1] if tail else "",
                    "driver": tail[2] if tail else ""}
    raise ValueError("no GPU line in the output")


def read_rows(path: pathlib.Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def write_rows(path: pathlib.Path, rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description="Run every step and record its PERF lines.")
    ap.add_argument("steps", nargs="+")
    ap.add_argument("--build", default="build")
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()

    new: dict[str, list[dict[str, str]]] = {}   # csv file -> rows
    done: dict[str, set[str]] = {}              # csv file -> steps run now
    failed = []
    for step in a.steps:
        binary = REPO / a.build / step
        t0 = time.time()
        try:
            p = subprocess.run([str(binary)], capture_output=True, text=True, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            print(f"bench {step}: FAIL (timed out after {a.timeout:.0f} s)")
            failed.append(step)
            continue
        if p.returncode != 0:
            print(f"bench {step}: FAIL (exit {p.returncode}) {p.stderr.strip()}")
            failed.append(step)
            continue
        perf, problems = parse_perf(p.stdout)
        if problems:
            print(f"bench {step}: FAIL {problems}")
            failed.append(step)
            continue
        if not perf:  # a step whose results are layouts or TIME lines (05): nothing to record
            print(f"bench {step}: passed, no PERF lines to record")
            continue
        gpu = parse_gpu(p.stdout)
        fname = gpu_file_name(gpu["gpu"])
        date = time.strftime("%Y-%m-%d")
        for name, v in perf.items():
            new.setdefault(fname, []).append({
                "step": step, "name": name, "ms": f"{v['ms']:.3f}", "gb_per_s": f"{v['gbps']:.1f}",
                "pct_of_memcpy": f"{v['pct']:.1f}", **gpu, "date": date})
        done.setdefault(fname, set()).add(step)
        print(f"bench {step}: {len(perf)} PERF lines in {time.time() - t0:.1f} s -> results/{fname}")

    for fname, rows in new.items():
        path = RESULTS / fname
        kept = [r for r in read_rows(path) if r["step"] not in done[fname]]
        write_rows(path, sorted(kept + rows, key=lambda r: r["step"]))
    if failed:
        print(f"bench: FAILED: {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
