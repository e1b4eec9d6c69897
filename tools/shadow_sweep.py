"""The protocol checker on a GPU: every planted mistake caught, every correct program clean.

    python3 tools/shadow_sweep.py step 04_tma_store [--tool-lib L --sanitizer-lib D]    make shadow-04
    python3 tools/shadow_sweep.py bugs [--only 09] [--jobs 16] [--nvcc "nvcc <flags>"]   make mutation SHADOW=1
    python3 tools/shadow_sweep.py bugs --from-records "NVIDIA H200"    the table again from the recorded runs
    python3 tools/shadow_sweep.py correct [--full] [--only 09]                          make shadow [FULL=1]

Every run is a program under the checker's tool (common/shadow/tool/: CUDA's
Sanitizer API patches its kernels; CUDA_INJECTION64_PATH loads it): a step's
build with the wrappers' hooks (build/shadow/NN_topic), or a twin's normal
build (build/twins/NN_topic), which has none. A run passes when the tool
ran (its summary line on stderr counts the CTAs it checked), no rule broke
and the program exited 0; its reports are stderr lines "shadow: <rule>: ...".

`step`: one step and its twins on --quick: the verdict of each, exit 0 (all
passed), 1, 2 (the tool is not built), 77 (no GPU).

Code nobody annotated (issue 41's proof): tests/shadow_proof/mistakes/*.diff
plant mistakes in a twin or in tests/shadow_proof/raw_kernels.cu (raw PTX);
these are built as the normal build (no hooks: what the tool alone sees),
the twins with CuTe's headers, which only the CPU machine's .venv has:
`prebuild` builds every planted copy there (build/shadow_sweep/, carried to
the GPU machine), and `bugs` uses a planted binary that is already there
(--rebuild: none). `labs`
runs the labs' sample fills (tools/lab_samples.py: the solution and every
other correct fill must pass, a protocol fill be caught, a wrong fill fail;
a race fill is shown) under the tool; `correct
--full --runs N` repeats the full-size runs and counts false alarms. --out
DIR writes the record (shadow_<GPU>.md) and the runs there instead of results/.

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
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bugs  # noqa: E402
import mutation  # noqa: E402
from bench import record_run, run_dir, step_link  # noqa: E402
from checker import evaluate, load_step  # noqa: E402
from contract import GPU_RE, REPO, RESULTS, checked_verdict, gpu_slug, recorded_run, step_dirs  # noqa: E402

SWEEP = REPO / "build" / "shadow_sweep"
TOOL_LIB, SUMMARY = bugs.TOOL_LIB, bugs.TOOL_SUMMARY
TIMEOUT_FLAG = bugs.PLANTED_TIMEOUT_FLAG  # a planted copy's waits give up after 2 s


def nvcc_flags(nvcc: str) -> str:
    """The Makefile's compiler and flags (normal build), as the shadow build of a planted copy."""
    return f"{nvcc} {bugs.SHADOW_DEFINE} {TIMEOUT_FLAG}"


class Planted:
    def __init__(self, step: str, diff: pathlib.Path, label: str, expect: str):
        self.step, self.diff, self.label, self.expect = step, diff, label, expect
        self.tree = SWEEP / label.replace("/", "_")
        self.binary: pathlib.Path | None = None
        self.error = ""


PROOF = REPO / "tests" / "shadow_proof"


def matches(only: str, name: str) -> bool:
    """--only: a comma-separated list; a name matches if it contains any of them (none given: all)."""
    return not only or any(w and w in name for w in only.split(","))


def target_of(diff: pathlib.Path) -> str:
    """The program a proof mistake plants into: a twins folder, or tests/shadow_proof."""
    path = re.search(r"^--- a/(\S+)", diff.read_text(), re.M)[1]
    return str(pathlib.PurePosixPath(path).parent)


def hooked(step: str) -> bool:
    """A step's program is checked in its build with the hooks; a twin or raw PTX in its normal build."""
    return re.fullmatch(r"\d\d_\w+", step) is not None


def planted_mistakes(only: str) -> list[Planted]:
    out = []
    for step in step_dirs():
        for n, path in sorted(bugs.diff_paths(step).items()):
            out.append(Planted(step, path, f"{step}.bug{n}", bugs.describe(path)["shadow"]))
    for d in mutation.defects():  # the tests' defects (a step's own bugs are above already)
        if d.catcher.startswith("shadow:") and d.path.parent == mutation.DEFECTS:
            step, *rules = d.catcher[len("shadow:"):].split()
            out.append(Planted(step, d.path, f"{step}.{d.path.stem}", " ".join(rules)))
    for diff in sorted((PROOF / "mistakes").glob("*.diff")):  # code nobody annotated
        out.append(Planted(target_of(diff), diff, f"unannotated.{diff.stem}", bugs.describe(diff)["shadow"]))
    return [p for p in out if matches(only, p.label)]


def planted_any(p: Planted) -> pathlib.Path:
    """A copy of common/, every step and tests/shadow_proof with the diff applied."""
    shutil.rmtree(p.tree, ignore_errors=True)
    for d in ["common", *step_dirs()]:
        shutil.copytree(REPO / d, p.tree / d, ignore=shutil.ignore_patterns("bugs", "*.md", "*.txt", "*.py"))
    shutil.copytree(PROOF, p.tree / "tests" / "shadow_proof", ignore=shutil.ignore_patterns("mistakes"))
    bugs.apply_diff(p.diff, p.tree)
    return p.tree


def build_one(p: Planted, nvcc: str, normal: str, twin_flags: str, prebuilt: bool) -> Planted:
    name = "program_shadow" if hooked(p.step) else "program"
    binary = p.tree / p.step / name
    if prebuilt and binary.is_file():
        p.binary = binary  # built on the CPU machine (shadow_sweep.py prebuild) and carried here
        return p
    try:
        if hooked(p.step):
            bugs.planted_copy(p.diff, p.tree)
            p.binary = bugs.build(p.step, p.tree, nvcc, step_link(p.step), name)
        else:
            planted_any(p)
            flags = f"{normal} {twin_flags}" if p.step.endswith("/twins") else normal
            p.binary = bugs.build(p.step, p.tree, flags, "", name)
    except (ValueError, OSError) as e:
        p.error = str(e)
    return p


def gpu_name(out: str) -> str:
    m = next((GPU_RE.match(ln) for ln in out.splitlines() if GPU_RE.match(ln)), None)
    return m["name"] if m else ""


def tool_env(a) -> dict | None:
    """The environment that loads the checker's tool (--tool-lib) into a program, or None if it is not built."""
    return bugs.tool_env(pathlib.Path(a.tool_lib), a.sanitizer_lib)


def run_checked(binary: pathlib.Path, args: list[str], timeout: float, env: dict | None) -> tuple[int, str, str]:
    """The program under the tool (env None: alone): exit code, stdout, stderr (the tool's lines are there)."""
    try:
        p = subprocess.run([str(binary), *args], capture_output=True, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:.0f} s"


def programs_of(step: str) -> list[tuple[str, pathlib.Path]]:
    """A step's runs under the checker: its build with the hooks, and its twins' normal build."""
    out = [(step, REPO / "build" / "shadow" / step)]
    if list((REPO / step / "twins").glob("*.cu")):
        out.append((f"{step}/twins", REPO / "build" / "twins" / step))
    return out


def sweep_step(a) -> int:
    env = tool_env(a)
    worst = 0
    for label, binary in programs_of(a.step):
        if not binary.is_file():
            print(f"shadow {label}: not built ({binary.relative_to(REPO)})")
            return 2
        code, out, err = run_checked(binary, ["--quick"], a.timeout, env)
        log = binary.with_name(binary.name + ".quick.log")
        log.write_text(out + err)
        if code == 77:
            print(f"shadow {label}: SKIP (exit 77): {checked_verdict(code, out, err)[1]}")
            return 77
        if env is None:
            print(f"shadow {label}: the checker's tool is not built ({TOOL_LIB.relative_to(REPO)}: make shadow-tool says why)")
            return 2
        status, why = checked_verdict(code, out, err)
        for ln in out.splitlines():
            if re.match(r"^check\s.* FAIL|^\s+hung:", ln):
                print(ln)
        print(f"shadow {label}: {status}: {why}; log {log.relative_to(REPO)}")
        worst = max(worst, 0 if status == "PASS" else 1)
    return worst


def sweep_bugs(a) -> tuple[list[str], bool, str]:
    planted = planted_mistakes(a.only)
    if not a.from_records:
        nvcc = nvcc_flags(a.nvcc)
        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
            planted = list(pool.map(lambda p: build_one(p, nvcc, a.nvcc, a.twin_flags, not a.rebuild), planted))
        print(f"shadow_sweep: {len(planted)} planted copies built in {time.time() - t0:.0f} s", flush=True)
    rows, ok, gpu = [], True, a.from_records
    for p in planted:
        args = bugs.shadow_args(p.expect, [])
        if a.from_records:  # the table again from the runs recorded on that GPU (results/runs/<GPU>/)
            path = runs_of(a, gpu) / f"{p.label}.shadow.txt"
            if not path.is_file():
                rows.append(f"| `{p.label}` | {p.expect} | not run: no record {path.name} | | |")
                ok = False
                continue
            code, out, err = recorded_run(path.read_text())
        elif p.error or p.binary is None:
            rows.append(f"| `{p.label}` | {p.expect} | STALE: {p.error.splitlines()[0] if p.error else 'no binary'} | | |")
            ok = False
            continue
        else:
            code, out, err = run_checked(p.binary, args, a.timeout, tool_env(a))
        if code == 77:
            print("shadow_sweep: no Hopper GPU here (exit 77)")
            return [], False, ""
        gpu = gpu or gpu_name(out)
        # a refusal stops the program before CUDA starts: the tool is never loaded, and need not be
        ran = SUMMARY.search(err) is not None or p.expect == "refused"
        caught, shown = bugs.judge_shadow(p.expect, code, out + "\n" + err)
        caught &= ran
        shown = shown if ran else f"{shown}; the checker's tool did not run"
        ok &= caught
        reports = bugs.shadow_rules(out + "\n" + err)
        where = f"{reports[0]['func']} ({reports[0]['where']})" if reports else ""
        text = reports[0]["text"].replace("|", "/") if reports else ""
        rows.append(f"| `{p.label}` | {p.expect} | {'caught' if caught else 'MISSED'}: {shown} | {where} | {text} |")
        if gpu and not a.from_records:
            record_run(runs_of(a, gpu) / f"{p.label}.shadow.txt",
                       [p.diff.relative_to(REPO).as_posix(), *args], code, out, err)
        print(f"shadow_sweep {p.label}: {'caught' if caught else 'MISSED'} ({shown})", flush=True)
    head = ["| planted mistake | rule it breaks (`shadow:`; `--full`: run at full size) | shadow build, `--quick` unless `--full` | where | the report |",
            "| --- | --- | --- | --- | --- |"]
    return head + rows, ok, gpu


def sweep_correct(a) -> tuple[list[str], bool, str]:
    rows = ["| program | alone `--quick` | under the checker `--quick` | overhead | under the checker, full size |",
            "| --- | --- | --- | --- | --- |"]
    ok, gpu, env = True, "", tool_env(a)
    if env is None:
        print(f"shadow_sweep: the checker's tool is not built ({TOOL_LIB.relative_to(REPO)}; make shadow-tool)")
        return [], False, ""
    proof = [("tests/shadow_proof", REPO / "build" / "shadow_proof" / "raw_kernels")]
    for step in [*step_dirs(), "tests/shadow_proof"]:
        if not matches(a.only, step):
            continue
        for label, checked in (proof if step == "tests/shadow_proof" else programs_of(step)):
            # a twin, raw PTX: no hooks, one binary (the normal build is the one checked)
            normal = REPO / "build" / step if label == step and step != "tests/shadow_proof" else checked
            if not normal.is_file() or not checked.is_file():
                print(f"shadow_sweep: build {normal} and {checked} first (make all; make SHADOW=1 all)")
                return [], False, ""
            t0 = time.time()
            ncode, nout, _ = run_checked(normal, ["--quick"], a.timeout, None)
            t1 = time.time()
            scode, sout, serr = run_checked(checked, ["--quick"], a.timeout, env)
            t2 = time.time()
            if ncode == 77:
                print("shadow_sweep: no Hopper GPU here (exit 77)")
                return [], False, ""
            gpu = gpu or gpu_name(sout)
            status, why = checked_verdict(scode, sout, serr)
            quick_ok = status == "PASS"
            full = "not run"
            if a.full and label != "tests/shadow_proof":  # raw PTX: no expected output, --quick only
                passed, secs, first = 0, [], ""
                for k in range(a.runs):
                    t3 = time.time()
                    fcode, fout, ferr = run_checked(checked, ["--reps", "1"], a.timeout, env)
                    secs.append(time.time() - t3)
                    fstatus, fwhy = checked_verdict(fcode, fout, ferr)
                    v = evaluate(load_step(label), fout, fcode, (REPO / label / "expected_output.txt").read_text(),
                                 ferr, shadow=True)
                    good = fstatus == "PASS" and v.status == "PASS"
                    passed += good
                    if not good and not first:
                        first = f"run {k + 1}: {fwhy[:120]}" + (f"; {v.problems[0][:120]}" if v.problems else "")
                    if gpu:
                        suffix = "" if a.runs == 1 else f".run{k + 1}"
                        record_run(runs_of(a, gpu) / f"{label.replace('/', '_')}.shadow{suffix}.txt", ["--reps", "1"],
                                   fcode, fout, ferr)
                full = (f"{passed} of {a.runs} runs passed, no rule broken ({min(secs):.0f}-{max(secs):.0f} s each)"
                        + (f"; {first}" if first else ""))
                quick_ok &= passed == a.runs
            ok &= quick_ok and ncode == 0
            rows.append(f"| {label} | {t1 - t0:.1f} s | {t2 - t1:.1f} s ({status}) | "
                        f"{(t2 - t1) / max(t1 - t0, 1e-3):.1f}x | {full} |")
            print(f"shadow_sweep {label}: {rows[-1]}", flush=True)
            if status != "PASS":
                print(f"  {why}")
    return rows, ok, gpu


# The labs' samples (tools/lab_samples.py) this sweep runs, by kind, and what each must do under the checker:
# a correct fill (the solution, or another way to write it) no alarm, a protocol fill its rule named, a wrong
# fill its checks failed; a race fill is shown.
LAB_WANT = {"solution": "PASS", "comments": "PASS", "correct": "PASS", "protocol": "a rule named",
            "wrong": "the program's checks fail", "race": "shown (not judged)"}


def lab_kind(sample: str) -> str | None:
    """'correct_1_two_tiles' -> 'correct', 'solution' -> 'solution'; None for a sample this sweep does not run."""
    kind = sample if sample in LAB_WANT else sample.split("_")[0]
    return kind if kind in LAB_WANT else None


def sweep_labs(a) -> tuple[list[str], bool, str]:
    """Every step's sample fills (tools/lab_samples.py) in the build with the hooks, under the tool: each as
    LAB_WANT says. A fill is code nobody annotated for the checker: raw PTX, another order, another helper."""
    env = tool_env(a)
    if env is None:
        print(f"shadow_sweep: the checker's tool is not built ({TOOL_LIB.relative_to(REPO)}; make shadow-tool)")
        return [], False, ""
    out_dir = SWEEP / "labs"
    shutil.rmtree(out_dir, ignore_errors=True)
    steps = [s for s in step_dirs() if matches(a.only, s)]
    p = subprocess.run([sys.executable, str(REPO / "tools" / "lab_samples.py"), *steps, "--out", str(out_dir)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f"shadow_sweep: tools/lab_samples.py failed:\n{p.stdout}{p.stderr}")
        return [], False, ""
    jobs = [(step, d.name, next((d / step).glob("*.cu"), None))
            for step in steps if (out_dir / step).is_dir() for d in sorted((out_dir / step).iterdir())
            if d.is_dir() and lab_kind(d.name)]
    if not jobs:
        print(f"shadow_sweep: tools/lab_samples.py wrote no sample this sweep judges under {out_dir}")
        return [], False, ""

    def build(job):
        step, sample, program = job
        if program is None:
            return job, None, "no program"
        binary = program.with_suffix("")
        compiler, *flags = shlex.split(nvcc_flags(a.nvcc))
        cmd = [compiler, f"-I{program.parent.parent}", *flags, str(program), "-o", str(binary), *shlex.split(step_link(step))]
        b = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        return job, (binary if b.returncode == 0 else None), (b.stdout + b.stderr)[-300:]

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        built = list(pool.map(build, jobs))
    rows = ["| step | fill | wanted | under the checker, `--quick` | the first report |", "| --- | --- | --- | --- | --- |"]
    ok, gpu = True, ""
    for (step, sample, _), binary, log in built:
        if binary is None:
            rows.append(f"| {step} | {sample} | {LAB_WANT[lab_kind(sample)]} | does not build: {log.splitlines()[-1] if log else ''} | |")
            ok = False
            continue
        code, out, err = run_checked(binary, ["--quick"], a.timeout, env)
        if code == 77:
            print("shadow_sweep: no Hopper GPU here (exit 77)")
            return [], False, ""
        gpu = gpu or gpu_name(out)
        reports = bugs.shadow_rules(out + "\n" + err)
        ran = SUMMARY.search(err) is not None
        kind = lab_kind(sample)
        if LAB_WANT[kind] == "PASS":
            good = checked_verdict(code, out, err)[0] == "PASS"
        elif kind == "protocol":
            good = ran and code != 0 and bool(reports)
        elif kind == "wrong":
            good = ran and code == 1
        else:  # a race fill: shown, not judged (the checker follows shared memory, racecheck all of it)
            good = ran
        ok &= good
        first = f"{reports[0]['rule']} {reports[0]['name']}: {reports[0]['text'][:100]}".replace("|", "/") if reports else ""
        rows.append(f"| {step} | {sample} | {LAB_WANT[kind]} | {'as wanted' if good else 'NOT as wanted'}: exit {code}"
                    f"{'' if ran else ', the tool did not run'} | {first} |")
        print(f"shadow_sweep labs {step} {sample}: {rows[-1]}", flush=True)
        if gpu:
            record_run(runs_of(a, gpu) / f"{step}.lab_{sample}.shadow.txt", ["--quick"], code, out, err)
    return rows, ok, gpu


def runs_of(a, gpu: str) -> pathlib.Path:
    """Where a run is recorded: results/runs/<GPU>/, or --out DIR/runs/<GPU>/."""
    return pathlib.Path(a.out) / "runs" / gpu_slug(gpu) if a.out else run_dir(gpu)


def prebuild(a) -> int:
    """Every planted copy built here for the GPU run (the twins need this machine: CuTe's headers are in .venv;
    the rest is built here so that the GPU machine's time goes to runs)."""
    planted = planted_mistakes(a.only)
    nvcc = nvcc_flags(a.nvcc)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        planted = list(pool.map(lambda p: build_one(p, nvcc, a.nvcc, a.twin_flags, False), planted))
    bad = [p for p in planted if p.error]
    for p in planted:
        print(f"shadow_sweep prebuild {p.label}: {p.binary.relative_to(REPO) if p.binary else p.error.splitlines()[0]}")
    return 1 if bad else 0


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
    ap.add_argument("what", choices=["step", "bugs", "correct", "labs", "prebuild"])
    ap.add_argument("step", nargs="?", default="", help="step: the step folder (04_tma_store)")
    ap.add_argument("--tool-lib", default=str(TOOL_LIB), help="the checker's tool (make shadow-tool builds it)")
    ap.add_argument("--sanitizer-lib", default="", help="the folder of libsanitizer-public.so (the Makefile's)")
    ap.add_argument("--only", default="", help="only the steps or mistakes whose name contains one of these (a,b,c)")
    ap.add_argument("--full", action="store_true", help="correct: also the full-size runs")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--nvcc", default=bugs.make_nvcc(),
                    help="the compiler and the normal build's flags (the Makefile passes them)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--runs", type=int, default=1, help="correct --full: full-size runs of each program")
    ap.add_argument("--out", default="", help="write the record and the runs under DIR (default: results/)")
    ap.add_argument("--rebuild", action="store_true", help="bugs: build every planted copy here, none carried")
    ap.add_argument("--from-records", default="", metavar="GPU",
                    help="bugs: no run; the table from the runs recorded on GPU (e.g. 'NVIDIA H200')")
    ap.add_argument("--twin-flags", default=bugs.twin_flags(), help="the twins' extra flags (the Makefile's TWIN_FLAGS)")
    a = ap.parse_args()
    if a.what == "step":
        return sweep_step(a)
    if a.what == "prebuild":
        return prebuild(a)
    rows, ok, gpu = {"bugs": sweep_bugs, "correct": sweep_correct, "labs": sweep_labs}[a.what](a)
    if not rows:
        return 77 if not ok and not gpu else 1
    if gpu:
        path = (pathlib.Path(a.out) if a.out else RESULTS) / f"shadow_{gpu_slug(gpu)}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        title = {"bugs": "## Every planted mistake, under the protocol checker",
                 "correct": "## Every correct program and twin under the protocol checker (no false alarm), and its overhead",
                 "labs": "## The labs' sample fills under the protocol checker"}[a.what]
        old = path.read_text() if path.is_file() else f"# The shadow build on the {gpu}\n"
        sections = re.split(r"(?m)^(?=## )", old)
        kept = [s for s in sections if not s.startswith(title)]
        before = next((s for s in sections if s.startswith(title)), "")
        rows = merge_rows(before, rows, partial=bool(a.only))
        path.write_text("".join(kept).rstrip("\n") + f"\n\n{title}\n\n" + "\n".join(rows) + "\n")
        print(f"shadow_sweep: wrote {path}")
    print("\n".join(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
