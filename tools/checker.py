"""The checker engine (`make check-NN`): one engine, a data-only rules file per step.

    python3 tools/checker.py 03_tma_load [--binary build/03_tma_load] [--timeout 600]
    python3 tools/checker.py 03_tma_load --output saved.txt [--exit-code 0]
    python3 tools/checker.py 03_tma_load --update      (on a GPU: record expected_output.txt)
    python3 tools/checker.py 03_tma_load/twins          (the step's twins: build/twins/03_tma_load)

NN_topic/check.py holds the step's rules as plain Python values (no code):

    perf_floors  {PERF name: lowest acceptable fraction of memcpy}
    headline     the PERF name (or "check:<prefix>") quoted in README.md's step table
    perf_order   [(faster, slower), ...]: claims a lesson makes, checked on every run: faster's % of
                 its reference above slower's; (a, b, r): a's rate (GB/s, TFLOP/s) at least r times b's
    sass         {kernel: [SASS opcodes it must contain]}      (tools/sass.py)
    sass_absent  {kernel: [SASS opcodes it must NOT contain]}
    sass_count   {kernel: {SASS pattern: how many times exactly}}
    fences       {kernel: {PTX fence/release/acquire/cluster-barrier opcode: count}}  (tools/sass.py --pins)
    sass_fences  {kernel: {SASS opcode of such an instruction: count}}: what survives into machine code
    sass_order   {kernel: [(anchor, [step, ...], stop), ...]}: what must come BEFORE each anchor
                 instruction, nearest first (tools/sass.py, check_order): a proxy fence between the
                 threads' last shared store and the barrier that hands the buffer to a TMA store, a read
                 wait with its exact count before a buffer is rewritten, a wgmma wait before a stage is
                 handed back
    profile      what `make profile-NN` measures with ncu      (tools/ncu_profile.py)
    lab          {hole k: {"teaches": ..., rules}}: what the kernels of lab hole NN.k must show in
                 their machine code once it is filled (tools/lab.py grades a fill without it MECHANISM)
    bench_runs   how many full runs `make bench` records (default 1; 09: 3, its headline is a range)
    build        what the build and the sanitizers need beyond the shared flags (link, sanitize_kernels,
                 sanitize_tools): read through tools/contract.py, build_facts

The verdict, in order: exit 77 is SKIP (never a pass); any other non-zero exit
is FAIL; then every rule, each failure reported with what was expected.
Exit codes: 0 pass, 1 fail, 77 skip, 2 the check itself could not run (a
missing binary, bad options).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import math
import pathlib
import runpy
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from contract import (CHECK_RE, GPU_RE, REFERENCE_RE, REPO, PERF_RE, UNIT_OF,  # noqa: E402
                      binary_path, deterministic_lines, step_dirs)

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
EXIT = {PASS: 0, FAIL: 1, SKIP: 77}
EXIT_MEANING = {1: "a correctness check failed", 2: "bad arguments or a CUDA error", 77: "cannot run here"}
RULE_KEYS = {"perf_floors", "headline", "perf_order", "sass", "sass_absent", "sass_count", "fences", "sass_fences",
             "sass_order", "profile", "lab", "bench_runs", "build"}
# A lab hole's rules (tools/lab_rules.py says what each means): what its fill must show once it is filled.
LAB_KEYS = {"teaches", "perf", "hole", "hole_absent", "hole_order", "exchange", "sass", "sass_absent", "sass_count",
            "ptx_count", "build_log_absent"}


@dataclasses.dataclass
class Step:
    """What a step's check.py declares."""

    name: str                                # "01_memcpy_baseline": folder and binary name
    perf_floors: dict[str, float]
    headline: str
    sass: dict[str, list[str]]
    perf_order: list[tuple] = dataclasses.field(default_factory=list)  # (faster, slower[, least ratio])
    sass_absent: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    sass_count: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    fences: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    sass_fences: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    sass_order: dict[str, list[tuple]] = dataclasses.field(default_factory=dict)
    profile: dict | None = None
    lab: dict[int, dict] = dataclasses.field(default_factory=dict)  # hole k (lab NN.k) -> its mechanism rules
    bench_runs: int = 1  # full runs `make bench` records (tools/bench.py): a headline stated as a range needs 3
    build: dict = dataclasses.field(default_factory=dict)  # read through contract.build_facts, not here

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
    perf: dict[str, float]  # PERF name -> % of its reference (memcpy or cuBLAS), as printed
    ref: dict[str, str] = dataclasses.field(default_factory=dict)  # PERF name -> "memcpy" or "cublas"


def load_step(step_dir: str) -> Step:
    """The Step that NN_topic/check.py declares, read as data."""
    path = REPO / step_dir / "check.py"
    if not path.is_file():
        raise FileNotFoundError(f"{step_dir}/check.py not found: is '{step_dir}' a step folder? "
                                f"(steps: {', '.join(step_dirs())})")
    try:
        values = {k: v for k, v in runpy.run_path(str(path)).items() if not k.startswith("_")}  # _x: a helper
    except Exception as e:  # a syntax or name error in the data file: say where, not a traceback
        raise ValueError(f"{step_dir}/check.py does not load: {type(e).__name__}: {e}") from e
    unknown = set(values) - RULE_KEYS
    if unknown:
        raise ValueError(f"{step_dir}/check.py: unknown names {sorted(unknown)} (allowed: {sorted(RULE_KEYS)})")
    try:
        step = Step(name=step_dir, **values)
    except TypeError as e:
        raise ValueError(f"{step_dir}/check.py: {e}") from e
    for k, rules in step.lab.items():
        bad = set(rules) - LAB_KEYS
        if not isinstance(k, int) or bad or not rules.get("teaches") or not any(  # an empty rule is none
                rules.get(key) and (not isinstance(rules[key], dict) or any(rules[key].values()))
                for key in LAB_KEYS - {"teaches", "perf"}):
            raise ValueError(f"{step_dir}/check.py: lab[{k!r}] needs 'teaches' and at least one rule "
                             f"(keys: {sorted(LAB_KEYS)}){f'; unknown {sorted(bad)}' if bad else ''}")
    # Every name a rule uses must be a PERF line the floors declare: a typo
    # would otherwise make the rule skip silently.
    for claim in step.perf_order:
        if not (isinstance(claim, tuple) and len(claim) in (2, 3) and all(isinstance(n, str) for n in claim[:2])
                and (len(claim) == 2 or isinstance(claim[2], (int, float)) and claim[2] > 0)):
            raise ValueError(f"{step_dir}/check.py: perf_order entry {claim!r}: want (faster, slower) or "
                             f"(faster, slower, least ratio > 0)")
    named = [n for claim in step.perf_order for n in claim[:2]]
    if not step.headline.startswith("check:"):
        named.append(step.headline)
    undeclared = sorted(set(named) - set(step.perf_floors))
    if undeclared:
        raise ValueError(f"{step_dir}/check.py: {undeclared} named in headline/perf_order but not in perf_floors")
    return step


def step_or_exit(step_dir: str, tool: str) -> Step:
    """load_step for the command-line tools: a bad step or rules file is one line and exit 2."""
    try:
        return load_step(step_dir.rstrip("/"))
    except (FileNotFoundError, ValueError) as e:
        print(f"{tool}: {e}", file=sys.stderr)
        sys.exit(2)


def parse_perf(text: str) -> tuple[dict[str, dict[str, float]], list[str]]:
    """PERF lines by name, and a problem for every malformed or repeated one."""
    perf: dict[str, dict[str, float]] = {}
    problems = []
    for ln in text.splitlines():
        if not ln.startswith("PERF"):
            continue
        m = PERF_RE.match(ln)
        if not m:
            problems.append(f"malformed PERF line (want 'PERF name  X ms  Y GB/s  Z % of memcpy', or "
                            f"'Y TFLOP/s  Z % of cublas'): {ln!r}")
            continue
        if UNIT_OF[m["ref"]] != m["unit"]:
            problems.append(f"PERF {m['name']}: a rate in {m['unit']} against {m['ref']} (want {UNIT_OF[m['ref']]})")
        if m["name"] in perf:
            problems.append(f"PERF {m['name']} appears twice")
        perf[m["name"]] = {**{k: float(m[k]) for k in ("ms", "rate", "pct")}, "unit": m["unit"], "ref": m["ref"]}
    return perf, problems


def order_problems(claim: tuple, perf: dict[str, dict[str, float]]) -> list[str]:
    """A lesson's claim about two PERF lines of one run. (faster, slower):
    faster's percent of its reference above slower's. Each percent divides
    by a reference timed in the same run (09: interleaved with the part
    itself), so a drift of the clocks between the two parts cancels (lesson
    09 shows a part's rate move by 12 % between runs, its percent by half a
    point). For the memcpy steps the percent is the rate over one memcpy rate, so
    this is the rates' order. (faster, slower, r): faster's rate (GB/s or
    TFLOP/s) at least r times slower's, for lines of different problems
    (different references), where only the rates compare."""
    faster, slower = claim[:2]
    if faster not in perf or slower not in perf:
        return []  # a missing line is reported by the floors
    a, b = perf[faster], perf[slower]
    if len(claim) == 2 and not a["pct"] > b["pct"]:
        return [f"PERF {faster} ({a['pct']:.1f} % of {a['ref']}) should beat {slower} ({b['pct']:.1f} % of "
                f"{b['ref']}): the lesson's claim no longer holds"]
    if len(claim) == 3 and not a["rate"] >= claim[2] * b["rate"]:
        return [f"PERF {faster} ({a['rate']:.1f} {a['unit']}) should reach {claim[2]:g} x {slower} "
                f"({b['rate']:.1f} {b['unit']}): the lesson's claim no longer holds"]
    return []


def evaluate(step: Step, output: str, exit_code: int, expected: str | None, stderr: str = "",
             shadow: bool = False) -> Verdict:
    """Judge one run. expected=None skips the comparison with expected_output.txt
    (used by --update, which records a new one). shadow: a run of the shadow
    build (make SHADOW=1), whose timings mean nothing: PERF lines are checked
    for their form, not their floors or their order."""
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
    if checks == 0:
        problems.append("no check lines: nothing was verified")
    if not any(GPU_RE.match(ln) for ln in lines):
        problems.append("no GPU line ('GPU    <name> (sm_XY, N SMs, M MiB L2) ...')")

    perf, perf_problems = parse_perf(output)
    problems += perf_problems
    for name, floor in ({} if shadow else step.perf_floors).items():
        if name not in perf:
            problems.append(f"PERF {name} is missing")
        elif perf[name]["pct"] < 100.0 * floor:
            problems.append(f"PERF {name} is {perf[name]['pct']:.1f} % of {perf[name]['ref']}, below its floor of "
                            f"{100.0 * floor:.1f} %")
    for name in perf:
        if name not in step.perf_floors:
            problems.append(f"PERF {name} is not declared in {step.name}/check.py (give it a floor)")
    for claim in ([] if shadow else step.perf_order):
        problems += order_problems(claim, perf)
    for name, v in perf.items():
        if REFERENCE_RE.match(name) and abs(v["pct"] - 100.0) > 0.05:
            problems.append(f"PERF {name} must read 100.0 % of {v['ref']} (it is the reference)")

    if expected is not None:
        want, got = deterministic_lines(expected), deterministic_lines(output)
        if want != got:
            diff = difflib.unified_diff(want, got, "expected_output.txt", "this run", lineterm="", n=1)
            problems.append("deterministic lines differ from expected_output.txt:\n    " + "\n    ".join(diff))
    return Verdict(FAIL if problems else PASS, problems, {k: v["pct"] for k, v in perf.items()},
                   {k: v["ref"] for k, v in perf.items()})


def report(step: Step, verdict: Verdict, log: pathlib.Path | None, shadow: bool = False) -> None:
    for p in verdict.problems:
        print(f"  {verdict.status}: {p}")
    for name, pct in ({} if shadow else verdict.perf).items():
        floor = step.perf_floors.get(name)
        if floor is not None:
            mark = "ok" if pct >= 100.0 * floor else "BELOW FLOOR"
            print(f"  PERF {name:<26} {pct:6.1f} % of {verdict.ref.get(name, 'memcpy')}  (floor {100.0 * floor:5.1f} %)  {mark}")
    where = f"; log {log.relative_to(REPO) if log.is_relative_to(REPO) else log}" if log else ""
    print(f"{step.name}: {verdict.status}{where}")


def run_program(binary: pathlib.Path, timeout: float, args: list[str], env: dict | None = None) -> tuple[str, str, int]:
    """stdout, stderr and exit code of one run (in `env`, else this process's environment); undecodable bytes
    become U+FFFD."""
    try:
        p = subprocess.run([str(binary), *args], capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return out, f"timed out after {timeout:g} s: the program hung or is far too slow", 124
    return p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), p.returncode


def positive_seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds")
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive, finite number of seconds")
    return v


def usage_error(message: str) -> int:
    print(f"checker: {message}")
    return 2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check a step's program against its expected output and rules.")
    ap.add_argument("step", help="the step folder, e.g. 03_tma_load, or its twins: 03_tma_load/twins")
    ap.add_argument("--binary", type=pathlib.Path, help="default: build/<step> (twins: build/twins/<step>)")
    ap.add_argument("--output", type=pathlib.Path, help="judge this saved output instead of running")
    ap.add_argument("--exit-code", type=int, default=0, help="with --output: the exit code of that run")
    ap.add_argument("--expected", type=pathlib.Path, help="default: <step>/expected_output.txt")
    ap.add_argument("--timeout", type=positive_seconds, default=600.0, help="seconds before a run counts as hung")
    ap.add_argument("--shadow", action="store_true",
                    help="a shadow build's run (make SHADOW=1): PERF floors and orders are not judged")
    ap.add_argument("--update", action="store_true",
                    help="run on a GPU and, if every other rule passes, rewrite expected_output.txt")
    a = ap.parse_args(argv)
    try:
        step = load_step(a.step.rstrip("/"))
    except (FileNotFoundError, ValueError) as e:
        return usage_error(str(e))
    binary = a.binary or binary_path(step.name)
    expected_path = a.expected or step.expected_path

    log = None
    if a.output:
        if not a.output.is_file():
            return usage_error(f"--output {a.output}: not a file")
        out, err, code = a.output.read_bytes().decode("utf-8", "replace"), "", a.exit_code
    else:
        if not binary.is_file():
            return usage_error(f"{binary} not found: build it with `make {'all' if '/' in step.name else 'build-' + step.name[:2]}`")
        out, err, code = run_program(binary, a.timeout, [])
        log = binary.with_name(binary.name + ".check.log")
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"$ {binary}\n# exit code {code}\n# stdout\n{out}# stderr\n{err}")

    if a.update and a.shadow:
        return usage_error("--update records expected output from a normal build, not the shadow build")
    if a.update:
        verdict = evaluate(step, out, code, None, err)
        if verdict.status == PASS:
            expected_path.write_text(out)
            print(f"{step.name}: wrote {expected_path} from this passing run")
            return 0
        report(step, verdict, log)
        print(f"{step.name}: NOT updated")
        return EXIT[verdict.status]

    if not expected_path.is_file():
        print(f"{step.name}: FAIL: {expected_path} is missing (record it with --update on a GPU)")
        return 1
    verdict = evaluate(step, out, code, expected_path.read_text(), err, shadow=a.shadow)
    report(step, verdict, log, a.shadow)
    return EXIT[verdict.status]


if __name__ == "__main__":
    sys.exit(main())
