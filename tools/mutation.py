"""`make mutation`: plant every defect once and check that the check aimed at it catches it.

    python3 tools/mutation.py            the CPU defects (each runs the tests aimed at it)
    python3 tools/mutation.py --gpu      the GPU defects too (on a Hopper GPU: each rebuilds a step and runs it)
    python3 tools/mutation.py --gpu-only only the GPU defects (a GPU machine needs no pytest)
    python3 tools/mutation.py --list     every planted defect and its catcher, nothing run
    python3 tools/mutation.py --only 07  only those whose file or catcher names "07"

A planted defect is one kind of thing wherever it lives: a diff, a line saying
what it breaks, and the check that must catch it.

    what: the comparator skips the last word
    caught by: cpu:tests/test_tutorial_host.py::test_tutorial_host_functions

    --- a/common/tutorial.cuh
    +++ b/common/tutorial.cuh
    ...

tests/defects/*.diff are the test suite's; NN_topic/bugs/N.diff are the
learners' (they also say how the program tells). A catcher is

    cpu:<pytest node ids or -k expression>   those tests must FAIL (only those: a defect
                                             caught by an unrelated test does not count)
    gpu:<NN_topic[/twins]> [--full] [--exit N] [CHECK ...]
                                             the step built with the diff and run (with --quick
                                             unless --full) must exit 1 (or N: 2 is a refusal),
                                             and each named check line (a glob: layout_*) FAIL
    shadow:<NN_topic> RULE [RULE ...]        the step's build with the checker's hooks (make SHADOW=1)
                                             with the diff, run with --quick under the checker's tool
                                             (common/shadow/), must fail, its first report naming
                                             one of the rules (common/shadow/rules.h)

A diff that no longer applies, or a catcher that cannot run (a pytest node
that is gone, a planted step that does not build, a named check line the run
does not print) makes the defect STALE, never caught; without a GPU the GPU
defects are "not run". The diff is applied in place (tools/patches.py: each hunk
found by its text) and taken back; all steps are rebuilt at the end. Not part of
`make test` (it rebuilds and reruns a lot); tests/test_defects.py checks in
`make test` that every diff still applies and names a catcher that exists.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
from bugs import TOOL_SUMMARY, diff_header, judge_shadow, tool_env  # noqa: E402
import patches  # noqa: E402
from contract import binary_path  # noqa: E402

DEFECTS = REPO / "tests" / "defects"
PYTEST = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
CHECK_LINE = re.compile(r"^check\s+(\S+) \.+ (PASS|FAIL) ")


@dataclasses.dataclass
class Defect:
    path: pathlib.Path  # the diff file
    what: str
    catcher: str        # "cpu:..." or "gpu:..."

    @property
    def name(self) -> str:
        return str(self.path.relative_to(REPO))

    @property
    def on_gpu(self) -> bool:
        return self.catcher.startswith(("gpu:", "shadow:"))


def defects() -> list[Defect]:
    """Every planted defect: the test suite's, then each step's learner bugs."""
    paths = sorted(DEFECTS.glob("*.diff")) + sorted(REPO.glob("[0-9][0-9]_*/bugs/*.diff"))
    out = []
    for p in paths:
        h = diff_header(p)
        if not h.get("what") or not h.get("caught by"):
            raise ValueError(f"{p.relative_to(REPO)}: needs 'what:' and 'caught by:' lines before the diff")
        out.append(Defect(p, h["what"], h["caught by"]))
    return out


def applies(diff: pathlib.Path) -> bool:
    try:
        patches.plan(diff.read_text(), REPO)
        return True
    except ValueError:
        return False


def run(cmd: list[str], timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def parse_gpu_catcher(catcher: str) -> tuple[str, bool, int, list[str]]:
    """'gpu:07_reduce_multicast --full broadcast_c2_mc' -> (step, full, exit code, [check patterns])."""
    words = catcher[len("gpu:"):].split()
    step, rest, want = words[0], words[1:], 1
    if "--exit" in rest:
        i = rest.index("--exit")
        want = int(rest[i + 1])
        del rest[i:i + 2]
    return step, "--full" in rest, want, [w for w in rest if w != "--full"]


def judge_run(stdout: str, code: int, patterns: list[str], want: int = 1) -> tuple[str, str]:
    """A planted run is caught when it exits `want` and every named check line FAILs."""
    lines = {m[1]: m[2] for m in map(CHECK_LINE.match, stdout.splitlines()) if m}
    failed = sorted(n for n, v in lines.items() if v == "FAIL")
    for pat in patterns:
        named = [n for n in lines if fnmatch.fnmatchcase(n, pat)]
        if not named:
            return "STALE", f"no check line matches {pat!r}"
        passed = [n for n in named if lines[n] == "PASS"]
        if passed:
            return "MISSED", f"exit {code}; {', '.join(passed)} still PASS"
    if code != want:
        return "MISSED", f"exit {code}, want {want} ({'a check failed' if want == 1 else 'refused'})"
    return "caught", f"exit {code}; FAIL: {', '.join(failed[:6])}{' ...' if len(failed) > 6 else ''}"


def catch(d: Defect) -> tuple[str, str]:
    """("caught" | "MISSED" | "STALE" | "not run", detail), with the diff applied."""
    kind, _, what = d.catcher.partition(":")
    if kind == "cpu":
        p = run(PYTEST + what.split())
        last = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
        # pytest: 0 all passed, 1 some failed; 2-5 mean the tests did not run as named
        verdict = {0: "MISSED", 1: "caught"}.get(p.returncode, "STALE")
        return verdict, last if verdict != "STALE" else f"pytest exit {p.returncode}: {last}"
    if kind == "shadow":
        step, *rules = what.split()
        if run(["make", "SHADOW=1", f"build-{step[:2]}", "shadow-tool"]).returncode != 0:
            return "STALE", "the planted step's shadow build or the checker's tool does not build, so it tests nothing"
        # the build with the hooks, under the checker's tool (its reports and summary line on stderr)
        p = subprocess.run([str(REPO / "build" / "shadow" / step), "--quick"], cwd=REPO, capture_output=True,
                           text=True, timeout=900, env=tool_env())
        if p.returncode == 77:
            return "not run", "no Hopper GPU here"
        if not TOOL_SUMMARY.search(p.stderr):
            return "MISSED", f"exit {p.returncode}; the checker's tool did not run (no summary line)"
        caught, shown = judge_shadow(" ".join(rules), p.returncode, p.stdout + "\n" + p.stderr)
        return ("caught" if caught else "MISSED"), shown
    if kind != "gpu":
        return "STALE", f"unknown catcher kind {kind!r}"
    step, full, want, patterns = parse_gpu_catcher(d.catcher)
    binary = binary_path(step)  # build/NN_topic, or build/twins/NN_topic for a step's twins
    if run(["make", str(binary.relative_to(REPO))]).returncode != 0:
        return "STALE", "the planted step does not build, so it tests nothing"
    p = run([str(binary)] + ([] if full else ["--quick"]), timeout=900)
    if p.returncode == 77:
        return "not run", "no Hopper GPU here"
    return judge_run(p.stdout, p.returncode, patterns, want)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", action="store_true", help="also the GPU defects (needs a Hopper GPU)")
    ap.add_argument("--gpu-only", action="store_true", help="only the GPU defects")
    ap.add_argument("--list", action="store_true", help="print the planted defects and their catchers")
    ap.add_argument("--only", default="", help="only the defects whose file or catcher contains this text")
    a = ap.parse_args()
    try:
        planted = defects()
    except ValueError as e:
        print(f"mutation: {e}", file=sys.stderr)
        return 2
    rows, bad = [], 0
    for d in planted:
        chosen = a.only in d.name or a.only in d.catcher
        if a.list or not chosen or (d.on_gpu and not (a.gpu or a.gpu_only)) or (a.gpu_only and not d.on_gpu):
            if chosen or a.list:
                rows.append((d, "" if a.list else "not run"))
            continue
        if not applies(d.path):
            verdict, detail = "STALE", "the diff no longer applies"
        else:
            patches.apply(d.path, REPO)
            try:
                verdict, detail = catch(d)
            finally:
                try:
                    patches.apply(d.path, REPO, reverse=True)
                except ValueError:
                    print(f"mutation: could not take {d.name} back: restore with "
                          f"python3 tools/patches.py (reverse) or git checkout", file=sys.stderr)
                    return 2
        rows.append((d, f"{verdict}: {detail}"))
        bad += verdict in ("MISSED", "STALE")
    # The table first: a rebuild that fails below must not lose what the runs found.
    print("| planted defect | what it breaks | caught by | result |\n| --- | --- | --- | --- |")
    for d, result in rows:
        print(f"| `{d.name}` | {d.what} | `{d.catcher}` | {result} |")
    ran = sum(1 for _, r in rows if r.split(":")[0] in ("caught", "MISSED", "STALE"))
    if not a.list:
        print(f"mutation: {ran - bad} of {ran} planted defects caught by their aimed check"
              f"{f'; {len(rows) - ran} not run here' if ran < len(rows) else ''}", flush=True)
    if not a.list and run(["make", "all"]).returncode != 0:  # the restored sources, rebuilt
        print("mutation: the restored sources do not build (make all)", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
