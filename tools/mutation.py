"""`make mutation`: plant every defect once and check that the check aimed at it catches it.

    python3 tools/mutation.py            the CPU defects (each runs the tests aimed at it)
    python3 tools/mutation.py --gpu      the GPU defects too (on a Hopper GPU: each rebuilds a step and runs it)
    python3 tools/mutation.py --gpu-only only the GPU defects (a GPU machine needs no pytest)
    python3 tools/mutation.py --list     every planted defect and its catcher, nothing run
    python3 tools/mutation.py --only 07  only those whose file or catcher names "07"
    python3 tools/mutation.py --gpu-only --jobs 16
                                         the GPU defects' planted programs built 16 at a time first
                                         (each in its own copy of the sources), then run one at a time
    python3 tools/mutation.py --gpu-only --build-only --jobs 2
                                         only build them, on a machine without a GPU (build/mutation/);
    python3 tools/mutation.py --gpu-only --prebuilt
                                         then, on the GPU machine with build/mutation/ carried there,
                                         run them without building

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
found by its text) and taken back; all steps are rebuilt at the end. With
--jobs, --build-only or --prebuilt a `gpu:` defect is planted into its own copy
of the sources instead (build/mutation/<defect>/, tools/bugs.py's copy, built
with the Makefile's flags and waits that give up after 2 s), so that the builds, which dominate a sweep, run in
parallel or on another machine; the runs stay one at a time (they time nothing,
but a GPU shared by two runs could hide a hang behind the other's). Not part of
`make test` (it rebuilds and reruns a lot); tests/test_defects.py checks in
`make test` that every diff still applies and names a catcher that exists.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import fnmatch
import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import bugs  # noqa: E402
from bugs import TOOL_SUMMARY, diff_header, judge_shadow, tool_env  # noqa: E402
import patches  # noqa: E402
from bench import step_link  # noqa: E402
from contract import binary_path  # noqa: E402

DEFECTS = REPO / "tests" / "defects"
BUILT = REPO / "build" / "mutation"  # a copy of the sources per planted gpu: defect (--jobs, --build-only)
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

    @property
    def planted(self) -> pathlib.Path:
        """Its planted program in its own copy of the sources (build/mutation/<defect>/<step>/program)."""
        label = self.name.removesuffix(".diff").replace("/", "_")
        return BUILT / label / parse_gpu_catcher(self.catcher)[0] / "program"


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


def build_planted(d: Defect, nvcc: str, twin_flags: str) -> str:
    """d's diff planted into its own copy of common/ and the steps, and its step built there with the
    Makefile's flags (a twin: with CuTe's too): "" when built, else why not (it is then STALE)."""
    step = parse_gpu_catcher(d.catcher)[0]
    tree = d.planted.parents[len(pathlib.PurePosixPath(step).parts)]
    try:
        bugs.planted_copy(d.path, tree)
        twin = step.endswith("/twins")
        flags = f"{nvcc} {bugs.PLANTED_TIMEOUT_FLAG}"  # a planted hang gives up after 2 s, not 10
        bugs.build(step, tree, f"{flags} {twin_flags}" if twin else flags, "" if twin else step_link(step))
    except (ValueError, OSError) as e:
        return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return ""


def build_all(chosen: list[Defect], nvcc: str, twin_flags: str, jobs: int) -> dict[str, str]:
    """Every chosen gpu: defect's planted program, `jobs` builds at a time: {defect name: why it did not build}."""
    todo = [d for d in chosen if d.catcher.startswith("gpu:")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        why = dict(zip((d.name for d in todo), pool.map(lambda d: build_planted(d, nvcc, twin_flags), todo)))
    for name, err in why.items():
        print(f"mutation: built {name}" if not err else f"mutation: {name} does not build: {err}", flush=True)
    return {n: e for n, e in why.items() if e}


def judge_binary(d: Defect, binary: pathlib.Path) -> tuple[str, str]:
    """A gpu: defect's planted program run as its catcher says, and judged."""
    step, full, want, patterns = parse_gpu_catcher(d.catcher)
    p = subprocess.run([str(binary)] + ([] if full else ["--quick"]), cwd=REPO, capture_output=True, text=True,
                       timeout=900)
    if binary.is_relative_to(BUILT):  # its own copy: the run kept beside it, to read when it surprises
        binary.with_name("run.txt").write_text(f"exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    if p.returncode == 77:
        return "not run", "no Hopper GPU here"
    return judge_run(p.stdout, p.returncode, patterns, want)


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
    binary = binary_path(parse_gpu_catcher(d.catcher)[0])  # build/NN_topic, or build/twins/NN_topic
    if run(["make", str(binary.relative_to(REPO))]).returncode != 0:
        return "STALE", "the planted step does not build, so it tests nothing"
    return judge_binary(d, binary)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", action="store_true", help="also the GPU defects (needs a Hopper GPU)")
    ap.add_argument("--gpu-only", action="store_true", help="only the GPU defects")
    ap.add_argument("--list", action="store_true", help="print the planted defects and their catchers")
    ap.add_argument("--only", default="", help="only the defects whose file or catcher contains this text")
    ap.add_argument("--jobs", type=int, default=0,
                    help="build the gpu: defects' planted programs this many at a time, each in its own copy")
    ap.add_argument("--build-only", action="store_true", help="only build them (a machine without a GPU)")
    ap.add_argument("--prebuilt", action="store_true", help="run the planted programs in build/mutation/, build none")
    ap.add_argument("--nvcc", default=bugs.make_nvcc(),
                    help="the compiler and the normal build's flags (the Makefile passes them)")
    ap.add_argument("--twin-flags", default=bugs.twin_flags(), help="the twins' extra flags (the Makefile's TWIN_FLAGS)")
    a = ap.parse_args()
    try:
        planted = defects()
    except ValueError as e:
        print(f"mutation: {e}", file=sys.stderr)
        return 2
    # --prebuilt runs what was built elsewhere: the shadow: defects are the shadow sweep's (make mutation SHADOW=1)
    wanted = lambda d: (a.only in d.name or a.only in d.catcher) and (  # noqa: E731
        (a.gpu or a.gpu_only) if d.on_gpu else not a.gpu_only) and not (a.prebuilt and d.catcher.startswith("shadow:"))
    separate = a.jobs or a.build_only or a.prebuilt  # each gpu: defect in its own copy of the sources
    unbuilt: dict[str, str] = {}
    if separate and not a.list and not a.prebuilt:
        unbuilt = build_all([d for d in planted if wanted(d)], a.nvcc, a.twin_flags, a.jobs or os.cpu_count() or 1)
        if a.build_only:
            return 1 if unbuilt else 0
    rows, bad = [], 0
    for d in planted:
        chosen = a.only in d.name or a.only in d.catcher
        if a.list or not wanted(d):
            if chosen or a.list:
                rows.append((d, "" if a.list else "not run"))
            continue
        if separate and d.catcher.startswith("gpu:"):
            if d.name in unbuilt or not d.planted.is_file():
                verdict, detail = "STALE", unbuilt.get(d.name, f"no planted program {d.planted.relative_to(REPO)}")
            else:
                verdict, detail = judge_binary(d, d.planted)
            print(f"mutation: {d.name}: {verdict}: {detail}", file=sys.stderr, flush=True)
            rows.append((d, f"{verdict}: {detail}"))
            bad += verdict in ("MISSED", "STALE")
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
    if not a.list and not separate and run(["make", "all"]).returncode != 0:  # the restored sources, rebuilt
        print("mutation: the restored sources do not build (make all)", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
