"""Planted mistakes, one diff each: `make bug-NN` lists a step's, `make bug-NN N=k` runs one.

    python3 tools/bugs.py list 03_tma_load
    python3 tools/bugs.py run 03_tma_load 2 --nvcc="nvcc <flags>" [--link=...] [--timeout 600] [-- ARGS]

NN_topic/bugs/N.diff is a short text, then a unified diff against the
repository's own files (paths from the root, `a/` and `b/` prefixes):

    what: <one line: what the mistake breaks>
    tells: <one line: how the program tells, or why it may not>

    --- a/03_tma_load/tma_load.cu
    +++ b/03_tma_load/tma_load.cu
    @@ ...

`run` copies every step folder and common/ into build/bugs/<step>.bugN/,
applies the diff there (git apply: a diff that no longer applies is an
error), builds the step's program from that copy with the flags the Makefile
passes, runs it, and says what happened: caught (exit 1, the program's own
failing check lines shown), refused (exit 2), hung past the timeout, or
passed, in which case this tool, not the program, says that the hardware hid
the mistake and that a pass proves nothing. The program itself knows nothing
of bugs: it has no option, parameter or branch for them.
Exit codes: the program's, 124 for a run past the timeout, 2 for this
tool's own errors (a diff that does not apply or build).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from contract import REPO, step_dirs  # noqa: E402

FIELDS = ("what", "tells")


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
    """git apply outside any repository behaves as patch(1), strictly: a hunk
    that does not match exactly is an error, never a fuzzy guess."""
    p = subprocess.run(["git", "apply", "--whitespace=nowarn", str(diff)], cwd=tree, capture_output=True,
                       text=True, env={"GIT_CEILING_DIRECTORIES": str(tree.parent), "PATH": "/usr/bin:/bin"})
    if p.returncode != 0:
        name = diff.relative_to(REPO) if diff.is_relative_to(REPO) else diff
        raise ValueError(f"{name} does not apply: {p.stderr.strip()}")


def planted_tree(step: str, n: int, root: pathlib.Path, plant: bool = True) -> pathlib.Path:
    """A copy of common/ and every step folder with bug n's diff applied (or, plant False, not yet)."""
    diff = diff_paths(step).get(n)
    if diff is None:
        raise ValueError(f"{step} has no bugs/{n}.diff (it has: {sorted(diff_paths(step)) or 'none'})")
    tree = root / f"{step}.bug{n}"
    shutil.rmtree(tree, ignore_errors=True)
    for d in ["common", *step_dirs()]:
        shutil.copytree(REPO / d, tree / d, ignore=shutil.ignore_patterns("bugs", "*.md", "*.txt", "*.py"))
    if plant:
        apply_diff(diff, tree)
    return tree


def build(step: str, tree: pathlib.Path, nvcc: str, link: str) -> pathlib.Path:
    program = next((tree / step).glob("*.cu"))
    binary = tree / step / "program"
    # The copy first on the include path, before the flags' -I.: a diff may plant its mistake in a header.
    compiler, *flags = shlex.split(nvcc)
    cmd = [compiler, f"-I{tree}", *flags, str(program), "-o", str(binary), *shlex.split(link)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise ValueError(f"the planted copy does not build:\n{p.stdout}{p.stderr}")
    return binary


def verdict(code: int, out: str = "") -> str:
    if code == 2 and re.search(r"^check\s.* FAIL ", out, re.M):
        return "caught: checks failed, then a CUDA error ended the run (exit 2; its stderr says which)"
    return {0: "PASSED: every check passed. The hardware hid this mistake here; that proves nothing, the "
               "program is still wrong (the lesson says what the PTX ISA promises without the fix)",
            1: "caught: the program's checks failed (exit 1)",
            2: "refused: the program stopped before any launch (exit 2)",
            77: "skipped: no Hopper GPU here (exit 77)",
            124: "hung: the run passed the timeout (exit 124)"}.get(code, f"exit {code}")


def run(step: str, n: int, nvcc: str, link: str, timeout: float, args: list[str]) -> tuple[int, str, str]:
    tree = planted_tree(step, n, REPO / "build" / "bugs")
    binary = build(step, tree, nvcc, link)
    try:
        p = subprocess.run([str(binary), *args], capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:.0f} s"


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
        describe(diff_paths(step)[a.n]) if a.n in diff_paths(step) else None
        code, out, err = run(step, a.n, a.nvcc, a.link, a.timeout, program_args)
    except ValueError as e:
        print(f"bugs: {e}")
        return 2
    sys.stdout.write(out)
    sys.stderr.write(err)
    print(f"bug {step[:2]}.{a.n} ({step}/bugs/{a.n}.diff): {verdict(code, out)}")
    return code


if __name__ == "__main__":
    sys.exit(main())
