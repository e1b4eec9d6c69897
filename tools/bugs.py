"""Planted mistakes, one diff each: `make bug-NN` lists a step's, `make bug-NN N=k` runs one.

    python3 tools/bugs.py list 03_tma_load
    python3 tools/bugs.py run 03_tma_load 2 --nvcc="nvcc <flags>" [--link=...] [--timeout 600] [-- ARGS]

NN_topic/bugs/N.diff is a short text, then a unified diff against the
repository's own files (paths from the root, `a/` and `b/` prefixes):

    what: <one line: what the mistake breaks>
    tells: <one line: how the program tells, or why it may not>
    shadow: <the rule the shadow build names (B2, S1, ...; several: any of
            them), or "check <line>" for a mistake in the data, which only the
            program's own check sees, or "refused">

    --- a/03_tma_load/tma_load.cu
    +++ b/03_tma_load/tma_load.cu
    @@ ...

`run` copies every step folder and common/ into build/bugs/<step>.bugN/,
applies the diff there (tools/patches.py: a diff that no longer applies is an
error), builds the step's program from that copy twice, with the flags the
Makefile passes and as the shadow build (-DTUTORIAL_SHADOW, common/shadow/),
runs both, and says what happened in each: caught (exit 1, the program's own
failing check lines shown, and the shadow's report naming the broken rule),
refused (exit 2), hung past the timeout, or passed, in which case this tool,
not the program, says that the hardware hid the mistake and that a pass
proves nothing. The shadow build runs with --quick (its rules do not depend
on sizes) unless ARGS are given. The program itself knows nothing of bugs: it
has no option, parameter or branch for them. Without a GPU (exit 77) the tool
shows the diff and the runs recorded on the H200 instead.
Exit codes: the normal run's, 124 for a run past the timeout, 2 for this
tool's own errors (a diff that does not apply or build).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import patches  # noqa: E402
from contract import SHADOW_LINE, TOOL_SUMMARY, shadow_rules  # noqa: E402,F401 (the shadow's output, shared)
from contract import REPO, step_dirs, tool_env as contract_tool_env  # noqa: E402

FIELDS = ("what", "tells", "shadow")
SHADOW_DEFINE = "-DTUTORIAL_SHADOW"
# Waits in a planted copy give up after 2 s (10 s by default): a mistake that
# hangs is reported sooner, and --quick's waits take far less even when slow.
PLANTED_TIMEOUT_FLAG = "-DMBAR_TIMEOUT_NS=2000000000ull"


def make_nvcc() -> str:
    """The compiler and the normal build's flags, as make last wrote them (build/flags.txt)."""
    flags = REPO / "build" / "flags.txt"
    return "nvcc " + (flags.read_text().strip() if flags.is_file() else "")


def twin_flags() -> str:
    """The twins' extra flags (the Makefile's TWIN_FLAGS), with CuTe's headers from .venv."""
    cute = sorted((REPO / ".venv").glob("lib/python3*/site-packages/cutlass_library/source/include"))[:1]
    return "--expt-relaxed-constexpr" + "".join(f" -isystem {p}" for p in cute)


# The protocol checker's tool (make shadow-tool), which a shadow run loads: without it the hooks do nothing.
TOOL_LIB = REPO / "build" / "shadow_tool" / "libshadow_tool.so"


def tool_env(lib: pathlib.Path = TOOL_LIB, sanitizer_lib: str = "") -> dict | None:
    """The environment that loads the checker's tool into a program, or None if it is not built."""
    if not lib.is_file():
        return None
    env = contract_tool_env(lib)
    if sanitizer_lib:
        env["LD_LIBRARY_PATH"] = sanitizer_lib
    return env


def diff_paths(step: str) -> dict[int, pathlib.Path]:
    """{N: NN_topic/bugs/N.diff} for every planted mistake of a step."""
    folder = REPO / step / "bugs"
    return {int(p.stem): p for p in folder.glob("*.diff") if p.stem.isdigit()} if folder.is_dir() else {}


def diff_header(path: pathlib.Path) -> dict[str, str]:
    """The 'key: value' lines before a planted diff (what, tells, caught by); tools/mutation.py reads them too."""
    head = path.read_text().split("\n--- a/", 1)[0]
    return {m[1]: m[2].strip() for m in re.finditer(r"^([a-z][a-z ]*): (.+)$", head, re.M)}


def describe(path: pathlib.Path) -> dict[str, str]:
    """The text before the diff: {what, tells}; each field must be there."""
    found = diff_header(path)
    missing = [f for f in FIELDS if not found.get(f)]
    if missing:
        raise ValueError(f"{path.relative_to(REPO)}: no {', '.join(missing)} line before the diff")
    return {f: found[f] for f in FIELDS}


def bug_text(step: str) -> dict[int, str]:
    """{N: 'what; tells'}: the bug table's text."""
    return {n: "{what}; {tells}".format(**describe(p)) for n, p in sorted(diff_paths(step).items())}


def apply_diff(diff: pathlib.Path, tree: pathlib.Path) -> None:
    """Each hunk found by its text (tools/patches.py), in the file the diff names or, where
    the code has moved, in the one other file that holds it: a hunk found nowhere, or in two
    places, is an error, never a fuzzy guess."""
    patches.apply(diff, tree)


def planted_copy(diff: pathlib.Path, tree: pathlib.Path, plant: bool = True) -> pathlib.Path:
    """A copy of common/ and every step folder at `tree`, with `diff` applied (or, plant False, not yet)."""
    shutil.rmtree(tree, ignore_errors=True)
    for d in ["common", *step_dirs()]:
        shutil.copytree(REPO / d, tree / d, ignore=shutil.ignore_patterns("bugs", "*.md", "*.txt", "*.py"))
    if plant:
        apply_diff(diff, tree)
    return tree


def planted_tree(step: str, n: int, root: pathlib.Path, plant: bool = True) -> pathlib.Path:
    """A copy of common/ and every step folder with bug n's diff applied (or, plant False, not yet)."""
    diff = diff_paths(step).get(n)
    if diff is None:
        raise ValueError(f"{step} has no bugs/{n}.diff (it has: {sorted(diff_paths(step)) or 'none'})")
    return planted_copy(diff, root / f"{step}.bug{n}", plant)


def build(step: str, tree: pathlib.Path, nvcc: str, link: str, name: str = "program") -> pathlib.Path:
    program = next((tree / step).glob("*.cu"))
    binary = tree / step / name
    # The copy first on the include path, before the flags' -I.: a diff may plant its mistake in a header.
    compiler, *flags = shlex.split(nvcc)
    cmd = [compiler, f"-I{tree}", *flags, str(program), "-o", str(binary), *shlex.split(link)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise ValueError(f"the planted copy does not build:\n{p.stdout}{p.stderr}")
    return binary




def shadow_verdict(code: int, out: str, err: str | None = None) -> str:
    """What the shadow build's run of a planted mistake showed (`err`, its stderr: where the tool reports)."""
    rules = shadow_rules(out + "\n" + (err or ""))
    if rules:
        m = rules[0]
        return f"caught by the shadow: {m['rule']} {m['name']} ({m['func']}, {m['where']})"
    if err is not None and code != 77 and not TOOL_SUMMARY.search(err):
        return f"exit {code}; nothing checked: the checker's tool did not run (make shadow-tool builds it)"
    return {0: "PASSED: the shadow found no broken rule, and every check passed",
            1: "caught by the program's own checks (exit 1); no protocol rule broken",
            2: "refused: the program stopped before any launch (exit 2)",
            77: "skipped: no Hopper GPU here (exit 77)",
            124: "hung: the run passed the timeout (exit 124)"}.get(code, f"exit {code}")


def judge_shadow(expect: str, code: int, out: str) -> tuple[bool, str]:
    """(caught?, what the run showed) for a shadow run of a mistake whose `shadow:` line is `expect`:
    rule ids (any of them must come first), "check <line>" (that check line fails), or "refused" (exit 2)."""
    if expect == "refused":
        return code == 2, f"exit {code}"
    if expect.startswith("check "):
        line = expect.split()[1]
        failed = re.search(rf"^check\s+{re.escape(line)} \.+ FAIL ", out, re.M)
        return code == 1 and failed is not None, f"exit {code}; check {line} {'FAIL' if failed else 'did not fail'}"
    reports = shadow_rules(out)
    if not reports:
        return False, f"exit {code}; no shadow report"
    first = reports[0]
    rules = [w for w in expect.split() if not w.startswith("--")]  # "--full": run at full size
    return code != 0 and first["rule"] in rules, f"exit {code}; {first['rule']} {first['name']}"


def verdict(code: int, out: str = "") -> str:
    if code == 2 and re.search(r"^check\s.* FAIL ", out, re.M):
        return "caught: checks failed, then a CUDA error ended the run (exit 2; its stderr says which)"
    return {0: "PASSED: every check passed. The hardware hid this mistake here; that proves nothing, the "
               "program is still wrong (the lesson says what the PTX ISA promises without the fix)",
            1: "caught: the program's checks failed (exit 1)",
            2: "refused: the program stopped before any launch (exit 2)",
            77: "skipped: no Hopper GPU here (exit 77)",
            124: "hung: the run passed the timeout (exit 124)"}.get(code, f"exit {code}")


def run_binary(binary: pathlib.Path, args: list[str], timeout: float, env: dict | None = None) -> tuple[int, str, str]:
    try:
        p = subprocess.run([str(binary), *args], capture_output=True, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:.0f} s"


def run(step: str, n: int, nvcc: str, link: str, timeout: float, args: list[str]) -> tuple[int, str, str]:
    tree = planted_tree(step, n, REPO / "build" / "bugs")
    return run_binary(build(step, tree, nvcc, link), args, timeout)


def shadow_args(shadow: str, args: list[str]) -> list[str]:
    """The program's arguments for a planted copy's shadow run: `args` if given, else --quick, or full size
    when the diff's `shadow:` line says --full (a mistake only full sizes reach)."""
    return args or ([] if "--full" in shadow.split() else ["--quick"])


def run_shadow(step: str, n: int, nvcc: str, link: str, timeout: float, args: list[str]) -> tuple[int, str, str]:
    """The same planted copy as the shadow build, run under the checker's tool with --quick (at full size if
    the diff's `shadow:` line says --full) unless `args` say otherwise."""
    tree = REPO / "build" / "bugs" / f"{step}.bug{n}"
    if not tree.is_dir():
        tree = planted_tree(step, n, REPO / "build" / "bugs")
    binary = build(step, tree, f"{nvcc} {SHADOW_DEFINE}", link, "program_shadow")
    # the tool, built or brought up to date (where it cannot be, the verdict says nothing was checked)
    subprocess.run(["make", "--no-print-directory", "shadow-tool"], cwd=REPO, capture_output=True)
    return run_binary(binary, shadow_args(describe(diff_paths(step)[n])["shadow"], args), timeout, tool_env())


def recorded(step: str, n: int, suffix: str = "") -> str:
    """The run of bug n that `make bench` recorded on the H200, or a line saying there is none."""
    path = REPO / "results" / "runs" / "NVIDIA_H200" / f"{step}.bug{n}{suffix}.txt"
    return path.read_text() if path.is_file() else f"(no recorded run: {path.relative_to(REPO)})\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    ls = sub.add_parser("list")
    ls.add_argument("step")
    r = sub.add_parser("run")
    r.add_argument("step")
    r.add_argument("n", type=int)
    r.add_argument("--nvcc", required=True, help="the compiler and the Makefile's flags")
    r.add_argument("--link", default="")
    r.add_argument("--timeout", type=float, default=600.0)
    argv = sys.argv[1:]
    program_args = argv[argv.index("--") + 1:] if "--" in argv else []  # the program's, after a --
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    step = a.step.rstrip("/")
    if step not in step_dirs():
        print(f"bugs: no step '{step}' (steps: {', '.join(step_dirs())})")
        return 2
    try:
        if a.verb == "list":
            texts = bug_text(step)
            if not texts:
                print(f"{step} has no planted mistakes")
            for n, text in texts.items():
                print(f"  make bug-{step[:2]} N={n}   {text}")
            return 0
        info = describe(diff_paths(step)[a.n]) if a.n in diff_paths(step) else {}
        code, out, err = run(step, a.n, a.nvcc, a.link, a.timeout, program_args)
        if code != 77:
            scode, sout, serr = run_shadow(step, a.n, a.nvcc, a.link, a.timeout, program_args)
    except ValueError as e:
        print(f"bugs: {e}")
        return 2
    name = f"bug {step[:2]}.{a.n} ({step}/bugs/{a.n}.diff)"
    if code == 77:  # no GPU here: what the mistake is, and what it did on the H200
        sys.stderr.write(err)
        print(f"{name}: cannot run here (no Hopper GPU, exit 77). What it plants:\n")
        print(f"  what: {info.get('what', '')}\n  tells: {info.get('tells', '')}\n  shadow: {info.get('shadow', '')}\n")
        print("--- a/" + diff_paths(step)[a.n].read_text().partition("\n--- a/")[2])
        print(f"Recorded on the H200 (make bench), the normal build:\n{recorded(step, a.n)}")
        print(f"and the shadow build (make mutation SHADOW=1):\n{recorded(step, a.n, '.shadow')}")
        return 77
    sys.stdout.write(out)
    sys.stderr.write(err)
    print(f"{name}: {verdict(code, out)}")
    print(f"--- the shadow build ({' '.join(shadow_args(info.get('shadow', ''), program_args)) or 'full size'}):")
    for ln in (sout + serr).splitlines():
        if re.match(r"^check\s.* FAIL |^\s+(shadow|hung):", ln):
            print(ln)
    print(f"{name}, shadow build: {shadow_verdict(scode, sout, serr)}")
    return code


if __name__ == "__main__":
    sys.exit(main())
