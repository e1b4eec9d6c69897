"""The runs of a grade (tools/lab.py grade, after tools/lab_grade.py prepared the builds): the program, judged
with this repository's check.py and expected output; after a passing run, the sanitizers and the shadow
build; then the report and Gradescope's results.json.

What a run is graded on is what the holes teach: every check of the program, the expected output, and the
PERF floors only of the lines a hole answers for (check.py's lab, `perf`: a hole about speed), with the
lesson's claims between those lines. A floor that fails is run again before it fails a student (the run
again is in the report): a run that another process slowed is not the student's mistake.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import pathlib
import re
import shutil
import subprocess

import checker
import lab_copy
import lab_grade
from contract import CHECK_RE, checked_verdict, shadow_rules, tool_env
from lab_grade import Grade


def run_program(binary, timeout: float, args: list[str], env: dict | None = None):
    return checker.run_program(binary, timeout, args, env)


def judged_step(step: str) -> checker.Step:
    """The step's rules as a run of a lab is graded on them: the floors and claims of the PERF lines the holes
    answer for; every other line still declared (its form is checked), with no floor."""
    s = checker.load_step(step)
    mine = {n for r in lab_grade.hole_rules(step).values() for n in r.get("perf", [])}
    return dataclasses.replace(s, perf_floors={n: (f if n in mine else 0.0) for n, f in s.perf_floors.items()},
                               perf_order=[c for c in s.perf_order if set(c[:2]) <= mine])


def perf_only(problems: list[str]) -> bool:
    """Whether every problem of a run is a floor or a claim between two PERF lines: the run may have been
    slowed by something else on the machine."""
    return bool(problems) and all(p.startswith("PERF ") and re.search(r"below its floor|should (beat|reach)", p)
                                  for p in problems)


def judge(g: Grade, out: str, err: str, code: int) -> list[str]:
    """The run's verdict: its parts, then the step's own rules (this repository's check.py and expected output,
    the floors as judged_step says). Returns the rules' problems."""
    lines = out.splitlines()
    first_bad = ""
    for i, ln in enumerate(lines):
        m = CHECK_RE.match(ln)
        if not m:
            continue
        g.total += 1
        hung = i + 1 < len(lines) and lines[i + 1].strip().startswith("hung:")
        if m["verdict"] == "PASS":
            g.passed += 1
            g.lines.append(f"  part {m['name']:<32} passed")
        elif hung:
            g.lines.append(f"  part {m['name']:<32} HUNG   {lines[i + 1].strip()}")
            first_bad = first_bad or f"{m['name']} {lines[i + 1].strip()}"
        else:
            g.lines.append(f"  part {m['name']:<32} FAILED ({m['wrong']} of {m['total']} wrong)")
            first_bad = first_bad or f"{m['name']}: {m['wrong']} of {m['total']} wrong"
        g.test(f"part {m['name']}", m["verdict"] == "PASS", lines[i + 1].strip() if hung else ln)
    problems = []
    if code == 124:
        run_verdict, detail = "TIMEOUT", err.strip()
    else:
        step = judged_step(g.step)
        v = checker.evaluate(step, out, code, step.expected_path.read_text(), err)
        problems = v.problems
        run_verdict = {0: "PASS", 1: "FAIL", 77: "SKIP"}[checker.EXIT[v.status]]
        detail = first_bad or (v.problems[0].splitlines()[0] if v.problems else "")
    g.test("the run: every rule of the step", {"PASS": True, "SKIP": None}.get(run_verdict, False),
           f"{run_verdict}{': ' + detail if detail else ''}")
    if not g.verdict:
        g.verdict, g.detail = run_verdict, detail
    else:
        g.lines.append(f"  the run: {run_verdict}{': ' + detail if detail else ''}")
    return problems


def run_and_judge(g: Grade, timeout: float) -> Grade:
    """The runs after prepare(): the program (FAIL, TIMEOUT, SKIP; a failed floor alone is run once more),
    then, if it passed, RACE and PROTOCOL."""
    before = copy.deepcopy(g)
    out, err, code = run_program(g.work / "program", timeout, [])
    (g.work / "run.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
    problems = judge(g, out, err, code)
    if g.verdict == "FAIL" and perf_only(problems):
        first = problems[0]
        out, err, code = run_program(g.work / "program", timeout, [])
        (g.work / "run2.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
        again = copy.deepcopy(before)
        again.lines.append(f"  the run: {first} (run 1; a floor fails only twice in a row: run 2 below)")
        problems = judge(again, out, err, code)
        again.tests[-1]["output"] = f"run 1: {first}\nrun 2: {again.tests[-1]['output']}"
        if again.verdict == "FAIL" and perf_only(problems):
            again.detail = f"{again.detail} (in two runs)"
        g.__dict__.update(again.__dict__)
    if g.verdict == "PASS":
        g.verdict = ""
        race_and_protocol(g, timeout)
        g.set("PASS", "")
    return g


def sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    home = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "compute-sanitizer"
    return found or (str(home) if home.is_file() else None)


def sanitizer_findings(out: str, code: int) -> tuple[list[str], str, bool]:
    """(the errors compute-sanitizer reported, its summary line, clean?). Clean: exit 0 (it ran with
    --error-exitcode 1) and a summary of 0 errors; racecheck's warnings alone are shown, not failed."""
    lines = [ln[len("========= "):].strip() for ln in out.splitlines() if ln.startswith("========= ")]
    summary = next((ln for ln in lines if re.match(r"(ERROR|RACECHECK) SUMMARY:", ln)), "")
    errors = re.search(r"SUMMARY: (?:\d+ hazards? displayed \()?(\d+) errors?", summary)
    found = [ln for ln in lines if re.match(r"(Error|Invalid|Barrier error|Race reported)", ln)]
    return found, summary, code == 0 and errors is not None and int(errors[1]) == 0


def shadow_tool() -> pathlib.Path | None:
    """The protocol checker's tool (`make shadow-tool`: build/shadow_tool/libshadow_tool.so), or None if not built."""
    lib = lab_copy.root() / "build" / "shadow_tool" / "libshadow_tool.so"
    return lib if lib.is_file() else None


_REFERENCE: dict[str, tuple[bool, str]] = {}


def shadow_reference(step: str, tool: pathlib.Path, timeout: float) -> tuple[bool, str]:
    """(whether the checker's tool may judge this step here, why not): it passes the tutorial's own solution
    (its shadow build, make SHADOW=1 build-NN, on --quick), once per step and process. A judge that flags the
    solution, or never ends on it, would fail correct students: it is not used. In the lab bundle the step's
    files are the student's own, so there is no solution to try it on."""
    if step not in _REFERENCE:
        root = lab_copy.root()
        if lab_copy.in_bundle():
            _REFERENCE[step] = (False, "in the lab bundle the step's files are yours: no solution to try the "
                                       "checker on (your instructor's grade runs it)")
            return _REFERENCE[step]
        b = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(root), "SHADOW=1", f"build-{step[:2]}"],
                           capture_output=True, text=True)
        if b.returncode != 0:
            _REFERENCE[step] = (False, f"the solution's shadow build did not build: {(b.stdout + b.stderr)[-200:]}")
            return _REFERENCE[step]
        out, err, code = run_program(root / "build" / "shadow" / step, min(timeout, 120.0), ["--quick"],
                                     tool_env(tool))
        status, why = checked_verdict(code, out, err)
        _REFERENCE[step] = (status != "FAIL", f"the checker's tool fails this tutorial's own solution here ({why})")
    return _REFERENCE[step]


def shadow_run(g: Grade, timeout: float, tool: pathlib.Path):
    """The protocol checker on --quick: the submission's shadow build (-DTUTORIAL_SHADOW: the wrappers hand the
    checker what CUDA's Sanitizer API cannot see) run under the checker's tool, which the driver loads into the
    program (CUDA_INJECTION64_PATH) and which sees every shared access, barrier and copy of the student's code,
    annotated or not. Without the tool the shadow build alone would see almost nothing: never graded so."""
    return run_program(g.work / "program.shadow", timeout, ["--quick"], tool_env(tool))


def race_and_protocol(g: Grade, timeout: float) -> Grade:
    """After a passing run: the step's sanitizer tools on --quick, restricted to every kernel a hole's code is in
    or its rules name (RACE), then the shadow build on --quick (PROTOCOL): a hazard the hardware hid on this
    run is still a mistake."""
    work, kernels = g.work, g.kernels
    tool_path = sanitizer()
    for tool in lab_grade.build_facts(g.step)["sanitize_tools"]:
        name = f"compute-sanitizer {tool} on {', '.join(kernels)} (--quick)"
        if tool_path is None:
            g.test(name, None, "compute-sanitizer not found (PATH, CUDA_HOME/bin)")
            g.set("SKIP", "compute-sanitizer not found: set CUDA_HOME or PATH; not a grade")
            return g
        filters = [a for k in kernels for a in ("--kernel-name", f"kns={k}")]
        args = ["--tool", tool, "--report-api-errors", "no", "--error-exitcode", "1"]
        out, err, code = run_program(pathlib.Path(tool_path), timeout * 2, [*args, *filters, str(work / "program"), "--quick"])
        if "Internal Sanitizer Error" in out:
            # compute-sanitizer 2025.3 (CUDA 13.0) fails this way on step 07 with a kernel filter ("failed to
            # handle a hardware exception"), and not without one: then every kernel is checked, as make sanitize-NN does
            name = f"compute-sanitizer {tool} on every kernel (--quick; with the holes' kernels alone it failed)"
            out, err, code = run_program(pathlib.Path(tool_path), timeout * 2, [*args, str(work / "program"), "--quick"])
        (work / f"{tool}.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
        if code == 77:
            g.test(name, None, "no Hopper GPU")
            g.set("SKIP", "no Hopper GPU here (never a pass)")
            return g
        found, summary, ok = sanitizer_findings(out, code)
        g.test(name, ok, "\n".join(found[:5] + [summary]) if not ok else summary)
        g.lines.append(f"  {tool:<37} {'clean' if ok else 'FOUND ' + (found[0] if found else summary or f'exit {code}')[:110]}")
        if not ok:
            g.set("RACE", f"{tool}: {(found[0] if found else summary or f'exit {code}')[:160]} (kernels {', '.join(kernels)})")
            return g
    tool = shadow_tool()
    name = "the shadow build under the checker's tool (--quick)"
    if tool is None:
        g.test(name, None, "the checker's tool is not built")
        g.set("SKIP", "the protocol checker's tool is not built here (make shadow-tool: it needs CUDA's Sanitizer API, "
                      "in the toolkit's compute-sanitizer folder); not a grade")
        return g
    trusted, why = shadow_reference(g.step, tool, timeout)
    if not trusted:  # a judge that condemns the tutorial's own solution is not used on a student
        g.test(name, None, f"not judged: {why}")
        g.lines.append(f"  {'shadow build':<37} not judged: {why[:110]}")
        return g
    out, err, code = shadow_run(g, timeout, tool)
    (work / "shadow.txt").write_text(f"# exit {code}\n{out}# stderr\n{err}")
    status, why = checked_verdict(code, out, err)
    reports = shadow_rules(out + "\n" + err)
    if status == "SKIP":
        g.test(name, None, "no Hopper GPU")
        g.set("SKIP", "no Hopper GPU here (never a pass)")
    elif reports:
        g.test(name, False, "\n".join(m[0].strip() for m in reports[:5]))
        g.lines.append(f"  {'shadow build':<37} {why[:120]}")
        g.set("PROTOCOL", why[:220])
    elif status == "FAIL":
        g.test(name, False, why)
        g.set("FAIL", f"the shadow build's --quick run: {why}")
    else:
        g.test(name, True, why)
        g.lines.append(f"  {'shadow build':<37} no protocol rule broken")
    return g


def grade_one(step: str, submission, timeout: float, nvcc: list[str], link: list[str], work) -> Grade:
    g = lab_grade.prepare(step, submission, work, nvcc, link)
    return g if g.verdict else run_and_judge(g, timeout)


def report_text(g: Grade) -> str:
    return "".join(ln + "\n" for ln in g.lines) + (
        f"score {g.step}: {g.passed} of {g.total} checked parts passed\n"
        f"{g.step}: {g.verdict}{' (' + g.detail + ')' if g.detail else ''}\n")


def results_json(g: Grade) -> dict:
    """Gradescope's results.json: all or nothing (1 for PASS, else 0), each test with its status ("passed" or
    "failed", the only two Gradescope takes) and output. A test that could not run here has no status and no
    score, only its output, which says why; a SKIP (this machine could not judge) has no score at all: it is
    no grade, not a zero."""
    def test(t: dict) -> dict:
        if t["status"] in ("passed", "failed"):
            return {"name": t["name"], "status": t["status"], "output": t["output"]}
        why = t["output"] if t["output"].startswith("not run here: ") else f"not run here: {t['output']}"
        return {"name": t["name"], "output": why}
    out = {"output": f"{g.step}: {g.verdict}{' (' + g.detail + ')' if g.detail else ''}",
           "tests": [test(t) for t in g.tests],
           "extra_data": {"verdict": g.verdict, "exit_code": g.exit_code, "parts_passed": g.passed,
                          "parts_total": g.total}}
    if g.verdict != "SKIP":
        out = {"score": 1.0 if g.verdict == "PASS" else 0.0, "max_score": 1.0, **out}
    return out


def write_logs(g: Grade, logs: pathlib.Path) -> None:
    """The student's logs: the builds, the runs, the report and results.json."""
    logs.mkdir(parents=True, exist_ok=True)
    names = ("build.log", "build.shadow.log", "marked.log", "run.txt", "run2.txt", "shadow.txt",
             *(f"{t}.txt" for t in lab_grade.build_facts(g.step)["sanitize_tools"]))
    for name in names:
        if g.work and (g.work / name).is_file() and g.work != logs:
            shutil.copy(g.work / name, logs / name)
    (logs / "grade.txt").write_text(report_text(g))
    (logs / "results.json").write_text(json.dumps(results_json(g), indent=2) + "\n")
