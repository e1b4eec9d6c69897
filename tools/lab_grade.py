"""Grading one submission (tools/lab.py grade): everything before the runs, and the verdict a run gives.

Grading never trusts the submission beyond its student files (the step's program and its parts): it takes
their versions from the submission, compares each with the copy as handed out, and builds them in a scratch
tree (work/src/) that the compiler searches first, so `#include "09_gemm/parts/consume.cuh"` finds the
student's part and everything else (the harness, other steps' headers, 09's parts when 10 is graded in the
tutorial) is this repository's. The submission's check.py, expected_output.txt and headers are compared,
never read. The runs (tools/lab_run.py) judge the output with this repository's rules.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess

import checker
import contract
import lab_compare
import lab_copy
import lab_rules

# Every verdict, in the order the grader decides them (the first that applies is the grade), with its exit code.
VERDICT_EXIT = {"NO-BUILD": 2, "EDITED": 1, "UNFILLED": 1, "MECHANISM": 1, "TIMEOUT": 124, "SKIP": 77, "FAIL": 1,
                "RACE": 1, "PROTOCOL": 1, "PASS": 0}
# Files of a step folder besides its student files whose edit would change how a submission is judged.
GUARDED = re.compile(r"^(check\.py|expected_output\.txt|.*\.(cuh|h))$")
# What the SKIP for a missing disassembler says: how to get it, and its size, before anything is installed.
GRADER_TOOLS = ("`make grader-tools` installs it (the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels: "
                "about 6 MB once installed); or put a toolkit's cuobjdump on PATH, or set CUDA_HOME to a toolkit "
                "with bin/cuobjdump")


def grade_build():
    return lab_copy.root() / "build" / "grade"


@dataclasses.dataclass
class Grade:
    student: str
    step: str
    passed: int = 0
    total: int = 0
    verdict: str = ""
    detail: str = ""
    lines: list[str] = dataclasses.field(default_factory=list)  # the report, a line per checked part
    tests: list[dict] = dataclasses.field(default_factory=list)  # results.json: name, status, output
    work: object = None  # pathlib.Path: the build and the logs
    kernels: list[str] = dataclasses.field(default_factory=list)  # the holes' kernels: the sanitizers watch them

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT[self.verdict]

    def test(self, name: str, ok: bool | None, output: str = "") -> bool:
        """Record one test (None: it could not run here, `output` says why); returns ok."""
        self.tests.append({"name": name, "status": {True: "passed", False: "failed", None: None}[ok],
                           "output": output if ok is not None else f"not run here: {output}"})
        return bool(ok)

    def set(self, verdict: str, detail: str) -> None:
        if not self.verdict:
            self.verdict, self.detail = verdict, detail


# ---- what the build needs ----------------------------------------------------------------------------------------

def build_facts(step: str) -> dict:
    """What a step links and how its sanitizers run ({"link": "-lcublas ...", "sanitize_kernels": [...],
    "sanitize_tools": [...]}): its check.py's `build`, read through tools/contract.py as the Makefile reads it."""
    return contract.build_facts(step)


def link_flags(step: str, nvcc: list[str]) -> list[str]:
    """The step's libraries, found at run time in the toolkit whose nvcc builds (as the Makefile does)."""
    libs = build_facts(step)["link"].split()
    if not libs:
        return []
    found = shutil.which(nvcc[0])
    home = (os.path.dirname(os.path.dirname(os.path.realpath(found))) if found
            else os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    return [*libs, "-Xlinker", f"-rpath={home}/lib64"]


def build_command(step: str) -> list[str]:
    """The compiler with the Makefile's flags, asked from make, so that they are the ones `make build-NN` uses
    (NVCC or CUDA_HOME, NVCCFLAGS, MBAR_TIMEOUT_NS and ARCH included)."""
    p = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(lab_copy.root()),
                        f"compile-command-{step[:2]}"], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    if p.returncode != 0 or not lines:
        raise SystemExit(f"lab: `make compile-command-{step[:2]}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return shlex.split(lines[0])


def compile_program(nvcc: list[str], tree, src, out, link: list[str], log, extra: tuple[str, ...] = ()) -> str:
    """Builds src with the student's files first on the include path (`tree`), this repository's after;
    '' or the compiler's first error, its paths relative to the tree."""
    p = subprocess.run([nvcc[0], f"-I{tree}", *nvcc[1:], *extra, f"-I{lab_copy.root()}", str(src), "-o", str(out),
                        *link], cwd=lab_copy.root(), capture_output=True, text=True)
    log.write_text(p.stdout + p.stderr)
    if p.returncode == 0:
        return ""
    first = next((ln for ln in (p.stdout + p.stderr).splitlines() if "error" in ln), f"see {log}")
    return first.replace(f"{tree}/", "").strip() or "the build failed"


# ---- the submission ----------------------------------------------------------------------------------------------

def submission_base(submission, step: str):
    """Where the submission holds the step's files: SUBMISSION/NN_topic/, or SUBMISSION/ itself."""
    name = lab_copy.step_program(step).name
    return next((b for b in (submission / step, submission) if (b / name).is_file()), None)


def submitted_files(submission, step: str) -> dict[str, object]:
    """{student file (relative to the tutorial): its path in the submission, or None if it is missing}."""
    base = submission_base(submission, step)
    out = {}
    for rel in lab_copy.student_files(step):
        p = base / rel[len(step) + 1:] if base else None
        out[rel] = p if p is not None and p.is_file() else None
    return out


def submission_key(step: str, submission, nvcc: list[str], link: list[str]) -> str:
    """What a prepared build depends on: the student's files, the guarded ones, the step's rules and the
    compiler's flags (not its path)."""
    h = hashlib.sha1(" ".join([*nvcc[1:], "|", *link]).encode())
    base = submission_base(submission, step) or submission
    for f in sorted(p for p in base.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(base)).encode() + b"\0" + f.read_bytes())
    h.update((lab_copy.root() / step / "check.py").read_bytes())
    return h.hexdigest()


def prepared(step: str, submission, work, nvcc: list[str], link: list[str]) -> Grade | None:
    """The Grade prepare() left in `work` for this very submission, rules and flags, with its binaries; else
    None."""
    try:
        saved = json.loads((work / "prepared.json").read_text())
    except (OSError, ValueError):
        return None
    if saved.get("key") != submission_key(step, submission, nvcc, link):
        return None
    if not saved["verdict"] and not all((work / b).is_file() for b in ("program", "program.shadow")):
        return None
    if saved["verdict"] == "SKIP":  # what could not be judged there (no cuobjdump) is judged again here
        return None
    return Grade(submission.name, step, verdict=saved["verdict"], detail=saved["detail"], lines=saved["lines"],
                 tests=saved["tests"], work=work, kernels=saved.get("kernels", []))


def prepare(step: str, submission, work, nvcc: list[str], link: list[str]) -> Grade:
    """Everything before the runs: the static verdicts (NO-BUILD, EDITED, UNFILLED, MECHANISM) and both builds,
    work/program and work/program.shadow. Runs on any machine; only the runs need the GPU. These verdicts are
    final on a machine with no GPU. What it found is saved (work/prepared.json), so that `grade-class
    --prebuilt` can run on a GPU machine what another machine built."""
    g = prepare_here(step, submission, work, nvcc, link)
    (work / "prepared.json").write_text(json.dumps({"key": submission_key(step, submission, nvcc, link),
                                                    "verdict": g.verdict, "detail": g.detail, "lines": g.lines,
                                                    "tests": g.tests, "kernels": g.kernels}))
    return g


def compare_files(step: str, texts: dict[str, str]):
    """(the edits outside the holes, the holes left as handed out, {hole label: (its file, its lines in the
    submission)}) of a submission's student files."""
    outside, untouched, regions = [], [], {}
    for rel, text in texts.items():
        copy, spans, labels = lab_copy.handed_out(step, rel)
        edits, left, where = lab_compare.compare_with_copy(copy, spans, text)
        name = rel[len(step) + 1:]
        outside += [f"{name} {e}" if len(texts) > 1 else e for e in edits]
        untouched += [labels[k] for k in left]
        regions.update({labels[k]: (rel, r) for k, r in enumerate(where)})
    return outside, sorted(untouched, key=lambda lab: int(lab.split(".")[1])), regions


def prepare_here(step: str, submission, work, nvcc: list[str], link: list[str]) -> Grade:
    g = Grade(submission.name, step, work=work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    files = submitted_files(submission, step)
    program = next(iter(files))
    missing = [rel for rel, p in files.items() if p is None]
    if not g.test("the student's files are there", not missing, ", ".join(missing) or program):
        g.set("NO-BUILD", f"no {missing[0]} in the submission")
        return g
    texts = {rel: p.read_text(errors="replace") for rel, p in files.items()}
    outside, untouched, regions = compare_files(step, texts)
    base = submission_base(submission, step)
    changed = [f"{f.relative_to(base)}" for f in sorted(base.rglob("*"))
               if f.is_file() and GUARDED.match(f.name) and f"{step}/{f.relative_to(base)}" not in files
               and (orig := lab_copy.handed_out_file(f"{step}/{f.relative_to(base)}")) is not None
               and not lab_compare.same_code(f.name, orig, f.read_text(errors="replace"))]
    tree = work / "src"  # the student's files where the includes look for them first
    for rel, text in texts.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    error = compile_program(nvcc, tree, tree / program, work / "program", link, work / "build.log")
    if not g.test("it builds", not error, error):
        g.set("NO-BUILD", error)
        return g
    outside = ([f"{', '.join(changed)} changed (graded with the tutorial's own)"] if changed else []) + outside
    if not g.test("nothing changed outside the holes", not outside, "\n".join(outside)):
        g.set("EDITED", "; ".join(outside[:3] + ([f"and {len(outside) - 3} more"] if len(outside) > 3 else [])))
    left = f"hole {', '.join(untouched)} as handed out" if untouched else ""
    if not g.test("every hole filled", not untouched, left):
        g.set("UNFILLED", left)
    if g.verdict:
        return g
    mechanism(g, texts, regions, nvcc)
    if g.verdict:
        return g
    error = compile_program(nvcc, tree, tree / program, work / "program.shadow", link, work / "build.shadow.log",
                            ("-DTUTORIAL_SHADOW",))
    if error:  # the student's code builds, but not with the shadow's hooks: the tutorial's fault, said as such
        g.test("the shadow build builds", False, error)
        g.set("NO-BUILD", f"the shadow build (-DTUTORIAL_SHADOW) does not build: {error}")
    return g


# ---- the mechanism ---------------------------------------------------------------------------------------------

def hole_rules(step: str) -> dict[int, dict]:
    s = checker.load_step(step)
    return lab_rules.validate(s, s.lab)


def mechanism_problems(step: str, texts: dict[str, str], regions, nvcc: list[str], work, binary=None,
                       build_log: str = ""):
    """({hole k: the problems of its rules}, the kernels its code is in or its rules name, the disassembler
    missing here or ''). The PTX rules on the marked copy (only the compiler needed); the SASS rules on
    `binary`, if given; build_log_absent on `build_log`."""
    rules = hole_rules(step)
    tree = work / "marked"
    for rel, text in texts.items():
        mine = {int(lab.split(".")[1]): r for lab, (f, r) in regions.items() if f == rel}
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(lab_rules.marked(text, mine))
    error = lab_rules.compile_ptx(nvcc, tree, tree / next(iter(texts)), work / "marked.ptx", work / "marked.log")
    ptx = lab_rules.entries((work / "marked.ptx").read_text()) if not error else {}
    demangle = lab_rules.demangler()
    functions, missing = None, ""
    if binary is not None and any(r.get(key) for r in rules.values() for key in lab_rules.SASS_KEYS):
        import sass  # noqa: PLC0415
        try:
            functions = sass.dump_sass(binary)
        except sass.ToolMissing as e:
            missing = str(e).split()[0]
    found, kernels = {}, []
    for k, r in sorted(rules.items()):
        problems = [f"the PTX of the marked copy: {error}"] if error else lab_rules.hole_problems(r, ptx, k, demangle)
        kernels += [demangle(f).split("<")[0] for f, body in ptx.items() if lab_rules.hole_code(body, k) is not None]
        kernels += [n.split("<")[0] for n in lab_rules.rule_kernels(r)]
        problems += lab_rules.ptx_count_problems(r, ptx, demangle)
        if functions is not None:
            problems += lab_rules.sass_problems(r, functions)
        problems += [f"ptxas: {hit[:140]}" for rx in r.get("build_log_absent", [])
                     for hit in [next((ln.strip() for ln in build_log.splitlines() if re.search(rx, ln)), None)] if hit]
        found[k] = problems
    return found, list(dict.fromkeys(kernels)), missing


def mechanism(g: Grade, texts: dict[str, str], regions, nvcc: list[str]) -> None:
    """MECHANISM, or SKIP where the machine code cannot be read here: every hole's rules (tools/lab_rules.py)
    on the student's build. The PTX rules need only the compiler; the SASS rules need cuobjdump. A problem
    found in the PTX is final even where the SASS cannot be read."""
    rules = hole_rules(g.step)
    found, g.kernels, missing = mechanism_problems(g.step, texts, regions, nvcc, g.work, g.work / "program",
                                                   (g.work / "build.log").read_text())
    unjudged = []
    for k, problems in found.items():
        r, name = rules[k], f"mechanism {g.step[:2]}.{k}"
        if problems:
            g.test(name, False, "\n".join(problems) + f"\nthe hole teaches: {r['teaches']}")
            g.set("MECHANISM", f"hole {g.step[:2]}.{k}: {'; '.join(problems[:3])} (it teaches: {r['teaches']})")
        elif missing and any(r.get(key) for key in lab_rules.SASS_KEYS):
            unjudged.append(name)
        else:
            g.test(name, True, "")
    if unjudged and not g.verdict:
        why = f"{missing} not found: the SASS rules cannot be checked without it; {GRADER_TOOLS}"
        for name in unjudged:
            g.test(name, None, why)
        g.set("SKIP", f"{why}; not a grade")
