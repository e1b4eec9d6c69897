"""`make profile-NN`: the Nsight Compute counters a step's check.py declares.

    python3 tools/ncu_profile.py 05_swizzle [--binary build/05_swizzle] [--args "--quick"]

check.py's `profile` names one kernel (or gives `ncu_filter`, ncu's own
options that pick the launches), the name of each profiled launch in order, the ncu metrics to read (column -> metric) and ratios of two
columns. Optional: `args`, the program's arguments for the run, and
`every`: N, when each named launch is followed by N - 1 launches of the same
work (warm-up and timed runs) that are profiled but not reported. One ncu run collects them (clocks left as they are:
--clock-control none); the table goes to results/ncu_<step>_<gpu>.csv, one row
per launch, and the lesson shows it from there.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from checker import step_or_exit  # noqa: E402
from contract import GPU_RE, REPO, RESULTS, gpu_slug  # noqa: E402


def profile_csv(step: str, gpu_name: str) -> pathlib.Path:
    return RESULTS / f"ncu_{step}_{gpu_slug(gpu_name)}.csv"


def parse_ncu_csv(text: str) -> list[dict[str, float]]:
    """ncu --csv output -> one {metric: value} per profiled launch, in launch order."""
    start = text.find('"ID"')
    if start < 0:
        raise ValueError("no ncu table in the output")
    launches: dict[int, dict[str, float]] = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        launches.setdefault(int(r["ID"]), {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    return [launches[k] for k in sorted(launches)]


def table(profile: dict, launches: list[dict[str, float]]) -> list[list[str]]:
    names, every = profile["launches"], profile.get("every", 1)
    if len(launches) != len(names) * every:
        raise ValueError(f"expected {len(names) * every} launches of {profile['kernel']}, ncu reported {len(launches)}")
    launches = launches[::every]
    header = ["launch", *profile["metrics"], *profile.get("ratios", {})]
    rows = [header]
    for name, m in zip(names, launches):
        values = {col: m[metric] for col, metric in profile["metrics"].items()}
        row = [name, *(f"{values[c]:.0f}" for c in profile["metrics"])]
        row += [f"{values[a] / values[b]:.2f}" for a, b in profile.get("ratios", {}).values()]
        rows.append(row)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step")
    ap.add_argument("--binary", type=pathlib.Path)
    ap.add_argument("--args", default="", help="arguments for the program")
    a = ap.parse_args()
    step = step_or_exit(a.step, "profile")
    if not step.profile:
        print(f"{step.name}/check.py declares no profile: nothing to measure")
        return 2
    cuda_bin = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin"
    ncu = shutil.which("ncu") or str(cuda_bin / "ncu")
    if not pathlib.Path(ncu).is_file():
        print(f"ncu (Nsight Compute) not found on PATH or in {cuda_bin}: install Nsight Compute "
              "(README.md, Troubleshooting) or put its folder on PATH")
        return 2
    binary = a.binary or REPO / "build" / step.name
    if not binary.is_file():
        print(f"{binary} not found: build it with `make build-{step.name[:2]}`")
        return 2
    p = step.profile
    # Which launches: every launch of one kernel by default, or the step's own
    # ncu filter (06: the second launch of each TMA kernel).
    which = p.get("ncu_filter", ["--kernel-name", p["kernel"]])
    cmd = [ncu, "--clock-control", "none", *which, "--metrics",
           ",".join(p["metrics"].values()), "--csv", str(binary), *p.get("args", []), *shlex.split(a.args)]
    run = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    gpu = next((m["name"] for m in map(GPU_RE.match, run.stdout.splitlines()) if m), None)
    if run.returncode == 77:  # the program's guard: no Hopper GPU here; its one line says why (never a pass)
        said = [ln for ln in (run.stdout + run.stderr).splitlines() if ln.strip() and not ln.startswith("==")]
        print(f"profile {step.name}: SKIP (exit 77): {said[-1] if said else 'the program cannot run here'}")
        return 77
    if run.returncode != 0 or gpu is None:
        print(f"profile {step.name}: ncu or the program failed (exit {run.returncode}):\n{run.stdout[-2000:]}"
              f"{run.stderr[-2000:]}")
        return 1
    try:
        rows = table(p, parse_ncu_csv(run.stdout))
    except (ValueError, KeyError) as e:
        print(f"profile {step.name}: {e}")
        return 1
    out = profile_csv(step.name, gpu)
    with out.open("w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    print(f"wrote {out.relative_to(REPO)}")
    for r in rows:
        print("  " + "  ".join(f"{c:>18}" for c in r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
