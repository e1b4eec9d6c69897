"""The checker engine: every NN_topic/check.py declares a Step and calls run().

A step's program prints (DESIGN.md, "The program contract"):

    == 01_memcpy_baseline: ...            deterministic
    problem: ...                          deterministic
    check  name ........ PASS  (0 of N wrong)
    GPU    NVIDIA H200 (...)              machine-dependent: form only
    PERF   name   0.512 ms  4194.3 GB/s  98.1 % of memcpy
    TIME   ...                            machine-dependent: form only
    RESULT: PASS

The verdict, in order: exit 77 is SKIP (never a pass); any other non-zero exit
is FAIL; then every rule below, each failure reported with what was expected.
Only the Python standard library is used, so `make check-NN` works with a
plain python3 on a GPU machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib.util
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent

MACHINE_PREFIXES = ("GPU", "PERF", "TIME")
PERF_RE = re.compile(
    r"^PERF\s+(?P<name>\S+)\s+(?P<ms>\d+\.\d+) ms\s+(?P<gbps>\d+\.\d+) GB/s\s+"
    r"(?P<pct>\d+\.\d+) % of memcpy$"
)
CHECK_RE = re.compile(r"^check\s+(?P<name>\S+) \.+ (?P<verdict>PASS|FAIL)  \((?P<wrong>\d+) of (?P<total>\d+) wrong\)$")
GPU_RE = re.compile(r"^GPU\s+(?P<name>.+?) \(sm_(?P<sm>\d+), (?P<sms>\d+) SMs, (?P<l2>\d+) MiB L2\)")
REFERENCE = "cudaMemcpy_D2D"

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
EXIT = {PASS: 0, FAIL: 1, SKIP: 77}
EXIT_MEANING = {1: "a correctness check failed", 2: "bad arguments or a CUDA error", 77: "cannot run here"}


@dataclasses.dataclass
class Step:
    """What a step declares: its PERF lines with their floors, its headline
    result (the README's column), and the SASS its kernels must contain."""

    name: str                       # "01_memcpy_baseline": folder and binary name
    perf_floors: dict[str, float]   # PERF name -> lowest acceptable fraction of memcpy
    headline: str                   # the PERF name quoted in README.md's step table
    sass: dict[str, list[str]]      # kernel name -> SASS opcodes it must contain (see tools/sass.py)
    # (faster, slower) PERF pairs: the claims a lesson makes ("batching beats
    # one load at a time"), checked on every run, not only at the recording.
    perf_order: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    @property
    def folder(self) -> pathlib.Path:
        return REPO / self.name

    @property
    def expected_path(self) -> pathlib.Path:
        return self.folder / "expected_output.txt"


@dataclasses.dataclass
class Verdict:
    status: str
    problems: list[str]
    perf: dict[str, float]          # PERF name -> % of memcpy, as printed


def load_step(step_dir: str) -> Step:
    """The Step that NN_topic/check.py declares (tests, sass.py and bench use it)."""
    path = REPO / step_dir / "check.py"
    spec = importlib.util.spec_from_file_location(f"check_{step_dir}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.STEP


def is_machine_line(line: str) -> bool:
    return any(re.match(rf"^{p}\s", line) for p in MACHINE_PREFIXES)


def deterministic_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not is_machine_line(ln)]


def parse_perf(text: str) -> tuple[dict[str, dict[str, float]], list[str]]:
    """PERF lines by name, and a problem for every malformed or repeated one."""
    perf: dict[str, dict[str, float]] = {}
    problems = []
    for ln in text.splitlines():
        if not ln.startswith("PERF"):
            continue
        m = PERF_RE.match(ln)
        if not m:
            problems.append(f"malformed PERF line (want 'PERF name  X ms  Y GB/s  Z % of memcpy'): {ln!r}")
            continue
        name = m["name"]
        if name in perf:
            problems.append(f"PERF {name} appears twice")
        perf[name] = {k: float(m[k]) for k in ("ms", "gbps", "pct")}
    return perf, problems


def evaluate(step: Step, output: str, exit_code: int, expected: str | None, stderr: str = "") -> Verdict:
    """Judge one run. expected=None skips the comparison with expected_output.txt
    (used by --update, which records a new one)."""
    if exit_code == 77:
        line = stderr.strip().splitlines()[-1] if stderr.strip() else "(no message)"
        return Verdict(SKIP, [f"the program cannot run here (exit 77): {line}"], {})
    problems: list[str] = []
    if exit_code != 0:
        problems.append(f"exit code {exit_code}: {EXIT_MEANING.get(exit_code, 'unexpected')}"
                        + (f"; stderr: {stderr.strip()}" if stderr.strip() else ""))

    lines = [ln for ln in output.splitlines() if ln.strip()]
    if not lines or lines[-1] != "RESULT: PASS":
        problems.append(f"last line is {lines[-1]!r}, want 'RESULT: PASS'" if lines else "no output")
    if not lines or not lines[0].startswith(f"== {step.name}:"):
        problems.append(f"first line must be '== {step.name}: <title>'")

    checks = 0
    for ln in lines:
        if ln.startswith("check"):
            m = CHECK_RE.match(ln)
            if not m:
                problems.append(f"malformed check line: {ln!r}")
            elif m["verdict"] != "PASS" or m["wrong"] != "0":
                problems.append(f"check failed: {ln.strip()}")
            checks += 1
        elif ln.startswith("GPU") and not re.match(r"^GPU\s+\S", ln):
            problems.append(f"malformed GPU line: {ln!r}")
        elif ln.startswith("TIME") and not re.match(r"^TIME\s+\S", ln):
            problems.append(f"malformed TIME line: {ln!r}")
    if checks == 0:
        problems.append("no check lines: nothing was verified")
    if not any(GPU_RE.match(ln) for ln in lines):
        problems.append("no GPU line ('GPU    <name> (sm_XY, N SMs, M MiB L2) ...')")

    perf, perf_problems = parse_perf(output)
    problems += perf_problems
    for name, floor in step.perf_floors.items():
        if name not in perf:
            problems.append(f"PERF {name} is missing")
        elif perf[name]["pct"] < 100.0 * floor:
            problems.append(f"PERF {name} is {perf[name]['pct']:.1f} % of memcpy, below its floor of "
                            f"{100.0 * floor:.1f} %")
    for name in perf:
        if name not in step.perf_floors:
            problems.append(f"PERF {name} is not declared in {step.name}/check.py (give it a floor)")
    for faster, slower in step.perf_order:
        if faster in perf and slower in perf and not perf[faster]["pct"] > perf[slower]["pct"]:
            problems.append(f"PERF {faster} ({perf[faster]['pct']:.1f} %) should beat {slower} "
                            f"({perf[slower]['pct']:.1f} %): the lesson's claim no longer holds")
    if REFERENCE in perf and abs(perf[REFERENCE]["pct"] - 100.0) > 0.05:
        problems.append(f"PERF {REFERENCE} must read 100.0 % of memcpy (it is the reference)")

    if expected is not None:
        want, got = deterministic_lines(expected), deterministic_lines(output)
        if want != got:
            diff = difflib.unified_diff(want, got, "expected_output.txt", "this run", lineterm="", n=1)
            problems.append("deterministic lines differ from expected_output.txt:\n    "
                            + "\n    ".join(diff))
    return Verdict(FAIL if problems else PASS, problems, {k: v["pct"] for k, v in perf.items()})


def report(step: Step, verdict: Verdict, log: pathlib.Path | None) -> None:
    for p in verdict.problems:
        print(f"  {verdict.status}: {p}")
    for name, pct in verdict.perf.items():
        floor = step.perf_floors.get(name)
        if floor is not None:
            mark = "ok" if pct >= 100.0 * floor else "BELOW FLOOR"
            print(f"  PERF {name:<22} {pct:6.1f} % of memcpy  (floor {100.0 * floor:5.1f} %)  {mark}")
    where = f"; log {log.relative_to(REPO) if log.is_relative_to(REPO) else log}" if log else ""
    print(f"{step.name}: {verdict.status}{where}")


def run_program(binary: pathlib.Path, timeout: float, args: list[str]) -> tuple[str, str, int]:
    try:
        p = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return out, f"timed out after {timeout:.0f} s: the program hung or is far too slow", 124
    except OSError as e:
        return "", f"cannot start {binary}: {e} (run `make` first)", 127
    return p.stdout, p.stderr, p.returncode


def run(step: Step, argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=f"Check step {step.name} against its expected output.")
    ap.add_argument("--binary", type=pathlib.Path, default=REPO / "build" / step.name)
    ap.add_argument("--output", type=pathlib.Path, help="judge this saved output instead of running")
    ap.add_argument("--exit-code", type=int, default=0, help="with --output: the exit code of that run")
    ap.add_argument("--expected", type=pathlib.Path, default=step.expected_path)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds before a run counts as hung")
    ap.add_argument("--update", action="store_true",
                    help="run on a GPU and, if every other rule passes, rewrite expected_output.txt")
    a = ap.parse_args(argv)

    log = None
    if a.output:
        out, err, code = a.output.read_text(), "", a.exit_code
    else:
        out, err, code = run_program(a.binary, a.timeout, [])
        log = REPO / "build" / f"{step.name}.check.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"$ {a.binary}\n# exit code {code}\n# stdout\n{out}# stderr\n{err}")

    if a.update:
        verdict = evaluate(step, out, code, None, err)
        if verdict.status == PASS:
            a.expected.write_text(out)
            print(f"{step.name}: wrote {a.expected.relative_to(REPO)} from this passing run")
            return 0
        report(step, verdict, log)
        print(f"{step.name}: NOT updated")
        return EXIT[verdict.status]

    if not a.expected.exists():
        print(f"{step.name}: FAIL: {a.expected} is missing (record it with --update on a GPU)")
        return 1
    verdict = evaluate(step, out, code, a.expected.read_text(), err)
    report(step, verdict, log)
    return EXIT[verdict.status]
