"""The program contract, in Python: one place for every fact the tools share.

A step's program prints (README.md, "How to read the output"):

    == 01_memcpy_baseline: ...            deterministic
    problem: ...                          deterministic
    check  name ........ PASS  (0 of N wrong)
    GPU    NVIDIA H200 (...)              machine-dependent: form only
    PERF   name   0.512 ms  4194.3 GB/s  98.1 % of memcpy   (step 09: 1.267 ms  867.5 TFLOP/s  101.4 % of cublas)
    TIME   ...                            machine-dependent: form only
    RESULT: PASS

Here: the line patterns, which lines are machine-dependent, how a GPU's name
becomes a results file name, and the one CSV reader. Only the standard
library, so the checker runs with a plain python3 on a GPU machine.
"""

from __future__ import annotations

import csv
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"

MACHINE_PREFIXES = ("GPU", "PERF", "TIME")
# A data-movement step's rate is bandwidth against cudaMemcpy; the GEMM's (09)
# is arithmetic against cuBLAS: each line names its unit and its reference.
PERF_RE = re.compile(
    r"^PERF\s+(?P<name>\S+)\s+(?P<ms>\d+\.\d+) ms\s+(?P<rate>\d+\.\d+) (?P<unit>GB/s|TFLOP/s)\s+"
    r"(?P<pct>\d+\.\d+) % of (?P<ref>memcpy|cublas)$"
)
UNIT_OF = {"memcpy": "GB/s", "cublas": "TFLOP/s"}
CHECK_RE = re.compile(r"^check\s+(?P<name>\S+) \.+ (?P<verdict>PASS|FAIL)  \((?P<wrong>\d+) of (?P<total>\d+) wrong\)$")
GPU_RE = re.compile(r"^GPU\s+(?P<name>.+?) \(sm_(?P<sm>\d+), (?P<sms>\d+) SMs, (?P<l2>\d+) MiB L2\)")
REFERENCE = "cudaMemcpy_D2D"
# The lines that are a reference themselves and must read 100.0 %: memcpy's, and cuBLAS's for each of step
# 09's problems (cublas, edge_cublas, splitk_cublas).
REFERENCE_RE = re.compile(r"^(cudaMemcpy_D2D|(\w+_)?cublas)$")
REFERENCE_GPU = "NVIDIA H200"  # expected outputs and the README's numbers come from it


def step_dirs() -> list[str]:
    """Every step folder, in order: 01_memcpy_baseline, 02_cp_async, ..."""
    return sorted(p.name for p in REPO.glob("[0-9][0-9]_*") if p.is_dir())


def twin_dirs() -> list[str]:
    """Every step's twins folder (NN_topic/twins, a second program: the step's kernels through CCCL and CuTe)."""
    return sorted(f"{p.parent.name}/twins" for p in REPO.glob("[0-9][0-9]_*/twins") if list(p.glob("*.cu")))


def binary_path(step: str) -> pathlib.Path:
    """Where make builds a step's program: build/NN_topic, or build/twins/NN_topic for NN_topic/twins."""
    return REPO / "build" / ("twins/" + step.removesuffix("/twins") if step.endswith("/twins") else step)


def is_machine_line(line: str) -> bool:
    return any(re.match(rf"^{p}\s", line) for p in MACHINE_PREFIXES)


def deterministic_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not is_machine_line(ln)]


def check_lines(text: str) -> list[re.Match]:
    """The well-formed check lines of an output, in order."""
    return [m for m in (CHECK_RE.match(ln) for ln in text.splitlines()) if m]


def gpu_slug(gpu_name: str) -> str:
    """'NVIDIA H200' -> 'NVIDIA_H200': how a GPU names its files in results/."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", gpu_name).strip("_")


def perf_csv(gpu_name: str) -> pathlib.Path:
    """results/<gpu>.csv: every step's PERF lines recorded on that GPU."""
    return RESULTS / f"{gpu_slug(gpu_name)}.csv"


def read_csv(path: pathlib.Path) -> list[dict[str, str]]:
    """Rows of a CSV file with a header line; [] if it does not exist."""
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))
