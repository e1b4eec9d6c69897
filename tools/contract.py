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
becomes a results file name, the one CSV reader, and each step's build facts
(what it links, what the sanitizers watch), which every tool reads through
build_facts or this file's command line:

    python3 tools/contract.py link NN_topic          the libraries a step links (-lcublas ...), or nothing
    python3 tools/contract.py link FILE.cu           an experiment's, from its "// link: ..." line
    python3 tools/contract.py links                  every step's, one NN_topic=-lx|-ly word each (the Makefile's)
    python3 tools/contract.py sanitize-args NN_topic[/twins]    compute-sanitizer's options for it
    python3 tools/contract.py sanitize-tools NN_topic[/twins]   the compute-sanitizer tools it runs

Only the standard library, so the checker runs with a plain python3 on a GPU
machine.
"""

from __future__ import annotations

import csv
import os
import pathlib
import re
import runpy
import sys

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


# ---- Build facts ---------------------------------------------------------------------------------------------
# What a step's build and its sanitizer runs need beyond the flags every step shares, as data in its check.py:
#     build = {"link": "-lcublas -lcublasLt", "sanitize_kernels": ["gemm_ws"], "sanitize_tools": ["memcheck"]}
# link: libraries the program links; sanitize_kernels: the kernels compute-sanitizer checks (by name, a
# substring: every kernel if none); sanitize_tools: the tools it runs (all three if none; a lesson says why
# one is left out). A step without a `build` has none of these.
SANITIZE_TOOLS = ("memcheck", "racecheck", "synccheck")
BUILD_DEFAULTS = {"link": "", "sanitize_kernels": [], "sanitize_tools": list(SANITIZE_TOOLS)}
LINK_LINE = re.compile(r"^// link: (.+)$", re.M)  # an experiment's (results/experiments/*.cu): not a step


def build_facts(step: str) -> dict:
    """A step's (NN_topic) or its twins' (NN_topic/twins) build facts, from its check.py, defaults filled in.
    A fact of the wrong kind, or a name that is not one, is a ValueError that names the file and the rule."""
    path = REPO / step / "check.py"
    if not path.is_file():
        raise ValueError(f"{step}/check.py not found: is '{step}' a step folder? (steps: {', '.join(step_dirs())})")
    given = runpy.run_path(str(path)).get("build", {})
    where = f"{step}/check.py: build"
    if not isinstance(given, dict) or set(given) - set(BUILD_DEFAULTS):
        raise ValueError(f"{where} must be a dict of {sorted(BUILD_DEFAULTS)}, not {given!r}")
    facts = {**BUILD_DEFAULTS, **given}
    if not isinstance(facts["link"], str) or not all(w.startswith("-l") for w in facts["link"].split()):
        raise ValueError(f"{where}['link'] must be a string of -l<library> words, not {facts['link']!r}")
    for key in ("sanitize_kernels", "sanitize_tools"):
        if not isinstance(facts[key], list) or not all(isinstance(k, str) and re.fullmatch(r"\w+", k)
                                                        for k in facts[key]):
            raise ValueError(f"{where}[{key!r}] must be a list of names, not {facts[key]!r}")
    if not facts["sanitize_tools"] or set(facts["sanitize_tools"]) - set(SANITIZE_TOOLS):
        raise ValueError(f"{where}['sanitize_tools'] must name some of {list(SANITIZE_TOOLS)}, not "
                         f"{facts['sanitize_tools']!r}")
    return facts


def link_flags(target: str) -> str:
    """The libraries a step (NN_topic) or an experiment's file (results/experiments/x.cu) links, or ""."""
    if target.endswith(".cu"):
        m = LINK_LINE.search((REPO / target).read_text())
        return m[1].strip() if m else ""
    return build_facts(target)["link"]


def sanitize_args(step: str) -> list[str]:
    """compute-sanitizer's options for a step: one --kernel-name filter per kernel it names."""
    return [a for k in build_facts(step)["sanitize_kernels"] for a in ("--kernel-name", f"kns={k}")]



# ---- the protocol checker's output (common/shadow/tool) ----------------------------------------------------------
# A report line (stdout under a failing check line, or the tool's stderr), and the tool's last line on stderr:
# proof that it ran, and what it checked.
SHADOW_LINE = re.compile(r"^\s+shadow: (?P<rule>[A-Z]\d) (?P<name>[\w-]+): (?P<text>.*); block \((?P<block>[\d,]+)\) "
                         r"thread (?P<thread>\d+), (?P<func>\S*) \((?P<where>[^)]*)\)$")
TOOL_SUMMARY = re.compile(r"^shadow: checked (?P<launches>\d+) launches of (?P<kernels>\d+) kernels, (?P<ctas>\d+) "
                          r"CTAs \((?P<unchecked>\d+) unchecked[^)]*\); (?P<verdict>.*)$", re.M)


def with_stderr(recorded: str) -> str:
    """A recorded run (results/runs/) with its stderr lines ("# stderr: ...") as the program printed them: the
    checker's tool reports there."""
    return "\n".join(ln[len("# stderr: "):] if ln.startswith("# stderr: ") else ln for ln in recorded.splitlines())


def recorded_run(recorded: str) -> tuple[int, str, str]:
    """A run recorded by tools/bench.py's record_run (results/runs/): its exit code, its stdout, and its
    stderr (the lines it keeps as "# stderr: ...")."""
    head, _, body = recorded.partition("\n")
    out = [ln for ln in body.splitlines() if not ln.startswith("# stderr: ")]
    err = [ln[len("# stderr: "):] for ln in body.splitlines() if ln.startswith("# stderr: ")]
    return int(re.search(r"exit (-?\d+)$", head)[1]), "\n".join(out), "\n".join(err)


def tool_env(lib: pathlib.Path) -> dict[str, str]:
    """The environment that loads the checker's tool (lib) into a program: CUDA_INJECTION64_PATH, and every
    module loaded eagerly, before its first launch, so that the tool can hand a hooked build its state."""
    return dict(os.environ, CUDA_INJECTION64_PATH=str(lib), CUDA_MODULE_LOADING="EAGER")


def shadow_rules(out: str) -> list[re.Match]:
    """The protocol checker's reports in an output, in order."""
    return [m for m in map(SHADOW_LINE.match, out.splitlines()) if m]


def checked_verdict(code: int, out: str, err: str) -> tuple[str, str]:
    """(PASS | FAIL | SKIP, why) for one run under the checker's tool. A run the tool did not watch is no pass."""
    if code == 77:
        return "SKIP", (err.strip().splitlines() or ["no GPU"])[-1]
    s = TOOL_SUMMARY.search(err)
    reports = shadow_rules(out + "\n" + err)
    if reports:
        r = reports[0]
        return "FAIL", f"{r['rule']} {r['name']}: {r['text']}; {r['func']} ({r['where']})"
    if not s:
        return "FAIL", f"exit {code}; the checker's tool did not run (no summary line): nothing was checked"
    if int(s["ctas"]) == 0:
        return "FAIL", f"exit {code}; the tool checked no CTA ({s['launches']} launches)"
    if code != 0:
        return "FAIL", f"exit {code}, no rule broken: " + "; ".join(
            ln.strip() for ln in out.splitlines() if re.match(r"^check\s.* FAIL|^\s+hung:", ln))[:300]
    return "PASS", f"no rule broken in {s['ctas']} CTAs of {s['launches']} launches, every check passed"


def main(argv: list[str]) -> int:
    usage = next(par for par in __doc__.split("\n\n") if "contract.py link" in par)
    if not argv or argv[0] not in ("link", "links", "sanitize-args", "sanitize-tools") \
            or len(argv) != (1 if argv[0] == "links" else 2):
        print(f"usage:\n{usage}", file=sys.stderr)
        return 2
    try:
        if argv[0] == "links":
            print(" ".join(f"{s}={link_flags(s).replace(' ', '|')}" for s in step_dirs() if link_flags(s)))
        elif argv[0] == "link":
            print(link_flags(argv[1].rstrip("/")))
        elif argv[0] == "sanitize-args":
            print(" ".join(sanitize_args(argv[1].rstrip("/"))))
        else:
            print(" ".join(build_facts(argv[1].rstrip("/"))["sanitize_tools"]))
    except (ValueError, OSError) as e:
        print(f"tools/contract.py {argv[0]}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
