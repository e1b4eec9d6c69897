"""The protocol checker (common/shadow/): its rules on the CPU, the normal
build's machine code unchanged by the wrappers' hooks, the build with the hooks
and the checker's tool (CUDA's Sanitizer API), the wrappers' protocol lists,
and the runs recorded on the H200.

- Every rule of common/shadow/rules.h holds on a correct event sequence and
  breaks on a wrong one, the first rule a sequence breaks is the one named,
  and every step's correct kernels, as event sequences, raise no alarm
  (tests/unit_shadow.cu feeds common/shadow/core.h on the CPU);
  tests/defects/shadow-rule-*.diff break each rule's own logic once (its
  parity, arrivals, bytes, group coverage, fence debts, map fields and
  versions, happens-before), shadow-hb-*.diff the machinery that orders
  threads, and each makes this file fail.
- A report names its rule by the rule's own number (rules.h's order), and
  the sweep's judge takes a run's FIRST report.
- The normal build's SASS and register counts equal those of the same
  sources with every shadow line deleted (line numbers kept): the hooks
  compile to nothing.
- The tool builds; its host logic (which modules it checks, where a pc is in
  the source, what a tensor map moves, the report line) holds on the CPU
  (tests/unit_shadow_tool.cu); every point it patches has its patch function,
  and a run it did not watch is never a pass.
- Every wrapper header opens with its protocol; each step names the rule that
  checks it and the planted mistake that breaks it, and they agree.
- Every planted mistake's shadow run recorded on the H200 names the rule its
  diff says, and every step's recorded shadow run passes: no false alarm.
"""

import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess

import pytest

import bugs
from checker import evaluate, load_step
from sass import dump_sass
from conftest import REPO, STEP_DIRS, binary, run, run_unit

RULES = REPO / "common" / "shadow" / "rules.h"
RULE_IDS = re.findall(r"^\s+X\((\w+), \"([\w-]+)\"", RULES.read_text(), re.M)
WRAPPERS = ["02_cp_async/cp_async.cuh", "03_tma_load/mbarrier.cuh", "03_tma_load/tma_load.cuh",
            "04_tma_store/tma_store.cuh", "07_reduce_multicast/tma_reduce.cuh", "07_reduce_multicast/cluster.cuh",
            "08_descriptor_update/tensormap_edit.cuh", "09_gemm/wgmma.cuh"]
H200_RUNS = REPO / "results" / "runs" / "NVIDIA_H200"


# ---- the rules, on the CPU --------------------------------------------------------
@pytest.fixture(scope="module")
def unit(tmp_path_factory) -> str:
    """tests/unit_shadow.cu's output (it fails by itself when a case gives another rule than it wants)."""
    return run_unit("tests/unit_shadow.cu", tmp_path_factory.mktemp("unit_shadow")).stdout


def test_every_rule_holds_and_breaks(unit):
    cases = re.findall(r"^case (\S+)\s+(\S+)", unit, re.M)
    broken = {rule for _, rule in cases}
    missing = {rid for rid, _ in RULE_IDS} - broken
    assert not missing, f"no unit case breaks {sorted(missing)}: such a rule could stop failing unseen"
    assert sum(r == "none" for _, r in cases) >= 10, "too few cases that keep every rule"
    # every step with an asynchronous protocol has its correct kernels among the cases, and they pass
    steps = {name[:2] for name, rule in cases if re.match(r"\d\d_", name) and rule == "none"}
    assert {"03", "04", "06", "07", "08", "09", "10"} <= steps, f"steps with no correct sequence: {steps}"


def test_the_rule_table_is_what_the_reports_name(unit):
    ids = [rid for rid, _ in RULE_IDS]
    assert len(ids) == len(set(ids)) >= 18, ids
    code = (REPO / "common" / "shadow" / "core.h").read_text()
    for rid, name in RULE_IDS:
        assert re.search(rf"\bSH_{rid}\b", code.split("// ---- encodings")[1]), f"rule {rid} is never reported"
        line = f"       shadow: {rid} {name}: text; block (1,0,0) thread 3, kernel (file.cu:12)"
        assert bugs.SHADOW_LINE.match(line), line
    # A report carries its rule's number; core.h names it: number n is rules.h's n-th rule, 0 and past the end
    # none (a table shifted by one names the rule before the broken one).
    table = [(int(n), rid, name) for n, rid, name in re.findall(r"^rule (\d+) (\S+) (\S+)$", unit, re.M)]
    want = [(0, "?", "?")] + [(i + 1, rid, name) for i, (rid, name) in enumerate(RULE_IDS)] + \
        [(len(RULE_IDS) + 1, "?", "?")]
    assert table == want, f"the rules by number:\n{table}\nwant\n{want}"
    report = re.search(r"^report (.*)$", unit, re.M)[1]
    m = bugs.SHADOW_LINE.match("       " + report)
    assert m and (m["rule"], m["name"], m["func"], m["where"]) == ("B2", "parity", "f", "file.cu:5"), report


def test_the_state_keeps_shared_offsets_through_core():
    # The state is kept by shared offset (core.h: sh_smem_offset, whose 24 bits the unit's cases hold past
    # 64 KiB): a hook that converts an address itself (a mask of its own) is how a shared address got masked
    # to 16 bits once. Every conversion in common/shadow goes through it.
    for path in (REPO / "common" / "shadow").rglob("*"):
        if path.suffix not in (".h", ".cuh", ".cu") or path.name == "core.h":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "__cvta_generic_to_shared" in line and not line.lstrip().startswith("//"):
                assert "sh_smem_offset(" in line, f"{path.relative_to(REPO)}:{n}: a shared offset not from sh_smem_offset"


# ---- the judge of a planted mistake's shadow run ---------------------------------------
def test_the_judge_takes_the_first_report():
    # A mistake is caught when its run fails and its FIRST report names its rule: a later report (another part
    # of the program, a consequence of the first) proves nothing about the rule the diff says it breaks.
    def out(*rules):
        return "".join(f"check  part{i} ............ FAIL  (0 of 9 wrong)\n"
                       f"       shadow: {r} name: text; block (0,0,0) thread 0, kernel (k.cu:1)\n"
                       for i, r in enumerate(rules))
    assert bugs.judge_shadow("S2", 1, out("S2"))[0]
    assert bugs.judge_shadow("P1 S2", 1, out("S2", "P1"))[0]  # any of the diff's rules, if it comes first
    assert not bugs.judge_shadow("S2", 1, out("P1", "S2"))[0]  # S2 only in a later report
    assert not bugs.judge_shadow("S2", 1, out("P1"))[0]
    assert not bugs.judge_shadow("S2", 0, out("S2"))[0]  # a run that passed caught nothing
    assert not bugs.judge_shadow("S2", 1, "check  part ... FAIL  (1 of 9 wrong)\n")[0]  # no report
    caught, shown = bugs.judge_shadow("M1 --full", 1, out("M1"))
    assert caught and "M1" in shown
    hung = ("check  ring .... FAIL  (0 of 9 wrong)\n       hung: block (0,0,0) thread 0 gave up after 2.0 s waiting on "
            "full (k.cu:3), parity 0\n       shadow: B4 arrivals: text; block (0,0,0) thread 0, kernel (k.cu:3)\n")
    assert bugs.judge_shadow("B4", 1, hung)[0] and not bugs.judge_shadow("B3", 1, hung)[0]
    assert bugs.shadow_verdict(1, out("P1", "S2")).startswith("caught by the shadow: P1 ")


# ---- the normal build: the hooks compile to nothing ------------------------------
def strip_shadow(text: str) -> str:
    """The source with every shadow line blanked (line numbers kept): #ifdef TUTORIAL_SHADOW
    blocks (their #else kept), SHADOW(...) statements, the
    SHADOW_SITE / SHADOW_PASS parameters and the includes of common/shadow/."""
    out, stack, skipping = [], [], 0  # stack: per open #if, "keep", "skip" or "shadow-skip"/"shadow-keep"
    in_statement = False
    for line in text.split("\n"):
        d = line.strip()
        m = re.match(r"#\s*(ifdef|ifndef|if|elif|else|endif)\b\s*(\S*)", d)
        if m:
            kind, arg = m[1], m[2]
            if kind in ("ifdef", "ifndef", "if"):
                if arg == "TUTORIAL_SHADOW" and kind in ("ifdef", "ifndef"):
                    stack.append("shadow-skip" if kind == "ifdef" else "shadow-keep")
                    out.append("")
                    continue
                stack.append("plain")
            elif kind == "else" and stack and stack[-1].startswith("shadow"):
                stack[-1] = "shadow-keep" if stack[-1] == "shadow-skip" else "shadow-skip"
                out.append("")
                continue
            elif kind == "endif" and stack:
                if stack.pop().startswith("shadow"):
                    out.append("")
                    continue
        if "shadow-skip" in stack:
            out.append("")
            continue
        if in_statement or re.match(r"\s*SHADOW\(", line):
            in_statement = not re.search(r";\s*(//.*)?$", line)
            out.append("")
            continue
        if re.match(r'\s*#include "common/shadow/', line):
            out.append("")
            continue
        line = re.sub(r"\s*\bSHADOW_(SITE|PASS)(_ONLY)?\b", "", line)
        # SHADOW_WAITED(bar, parity, done) is (done) in a normal build
        line = re.sub(r"\bSHADOW_WAITED\(\s*\(?\w+\)?,\s*\(?\w+\)?,", "(", line)
        out.append(line)
    return "\n".join(out)


def test_the_stripper_removes_every_shadow_line():
    src = ("#include \"common/shadow/hooks.h\"\nvoid f(int x SHADOW_SITE) {\n    SHADOW(arrive(x,\n"
           "                  1 SHADOW_PASS));\n    g(x);\n#ifdef TUTORIAL_SHADOW\n    h();\n#else\n    k();\n#endif\n"
           "    return SHADOW_WAITED((b), p,\n        wait(b) SHADOW_PASS);\n}\n")
    got = strip_shadow(src)
    assert got.count("\n") == src.count("\n") and "SHADOW" not in got and "h();" not in got
    assert "void f(int x) {" in got and "    g(x);" in got and "    k();" in got
    assert "    return (\n        wait(b));" in got


def stripped_tree(root: pathlib.Path) -> pathlib.Path:
    for d in ["common", *STEP_DIRS]:
        for src in (REPO / d).rglob("*"):
            # common/shadow is the checker itself: the normal build includes none of it
            if src.suffix in (".cu", ".cuh", ".h") and not {"twins", "bugs"} & set(src.parts) \
                    and not src.is_relative_to(REPO / "common" / "shadow"):
                dst = root / src.relative_to(REPO)
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text(strip_shadow(src.read_text()))
    return root


def sass_and_registers(path: pathlib.Path) -> tuple[dict, str]:
    from sass import find_tool
    res = subprocess.run([str(find_tool("cuobjdump")), "-res-usage", str(path)], capture_output=True, text=True,
                         check=True).stdout
    regs = sorted(re.findall(r"Function (\S+):\n\s*(REG:\d+ STACK:\d+ SHARED:\d+ LOCAL:\d+)", res))
    return {k: [re.sub(r"^/\*[0-9a-f]+\*/\s*", "", ln) for ln in v] for k, v in dump_sass(path).items()}, regs


@pytest.fixture(scope="module")
def stripped_builds(built, tmp_path_factory):
    """Every step compiled (device code only) from its sources with the shadow's lines deleted."""
    root = stripped_tree(tmp_path_factory.mktemp("stripped"))
    code = "".join(re.sub(r"//.*", "", p.read_text()) for p in root.rglob("*.c*"))
    assert not re.search(r"\bSHADOW", code), "a shadow line survived the stripping"
    flags = (REPO / "build" / "flags.txt").read_text().split()

    def compile_one(step):
        src = next((root / step).glob("*.cu"))
        out = root / f"{step}.cubin"
        # the same flags from the same relative paths as make: the same machine code
        p = subprocess.run(["nvcc", *flags, "-cubin", str(src.relative_to(root)), "-o", str(out)], cwd=root,
                           capture_output=True, text=True)
        return step, out if p.returncode == 0 else p.stdout + p.stderr

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(compile_one, STEP_DIRS))


@pytest.mark.parametrize("step_dir", STEP_DIRS)
def test_the_normal_build_is_the_build_without_the_shadow(stripped_builds, step_dir):
    cubin = stripped_builds[step_dir]
    assert isinstance(cubin, pathlib.Path), f"the stripped {step_dir} does not build:\n{cubin}"
    (want_sass, want_regs), (got_sass, got_regs) = sass_and_registers(cubin), sass_and_registers(binary(step_dir))
    assert got_regs == want_regs, f"{step_dir}: registers or stack differ with the shadow's hooks in the source"
    for f in want_sass:
        assert got_sass.get(f) == want_sass[f], f"{step_dir}: {f}'s SASS differs with the shadow's hooks in the source"
    assert set(got_sass) == set(want_sass)


# ---- the build with the hooks builds ----------------------------------------------
def sass_calls(path: pathlib.Path) -> dict[str, int]:
    """Each function's CALL instructions."""
    return {f: sum(" CALL" in ln for ln in code) for f, code in dump_sass(path).items()}


def test_every_step_builds_with_the_hooks(built):
    p = run(["make", f"-j{os.cpu_count() or 2}", "SHADOW=1", "all"], timeout=1800)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    from sass import find_tool
    for step in STEP_DIRS:
        b = REPO / "build" / "shadow" / step
        assert b.is_file(), f"{b} missing"
        elf = subprocess.run([str(find_tool("cuobjdump")), "-elf", str(b)], capture_output=True, text=True).stdout
        assert "g_shadow_state" in elf, f"{step}'s build with the hooks has no g_shadow_state: the tool cannot reach it"
        if step[:2] not in ("01", "02"):  # 01 and 02 use no wrapper the API cannot see
            # the hooks are static __noinline__ functions, inside each kernel's SASS: a kernel calls them,
            # so some kernel makes more calls than in the normal build (a hook that compiled to nothing adds none)
            hooked, plain = sass_calls(b), sass_calls(binary(step))
            assert any(n > plain.get(f, 0) for f, n in hooked.items()), f"{step}'s build with the hooks calls no hook"


# ---- the checker's tool ------------------------------------------------------------
def test_the_tool_builds():
    p = run(["make", "shadow-tool"], timeout=600)
    if p.returncode == 2 and "needs CUDA's Sanitizer API" in p.stdout + p.stderr:
        pytest.skip("no Sanitizer API headers here: the nvidia-cuda-sanitizer-api wheel (requirements.txt) is not "
                    "installed and the toolkit has no compute-sanitizer folder")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    for f in ("libshadow_tool.so", "shadow_patches.fatbin"):
        assert (REPO / "build" / "shadow_tool" / f).is_file(), f


def test_the_tool_s_host_logic(tmp_path, monkeypatch):
    src = tmp_path / "k.cu"
    src.write_text("#ifdef HOOKED\n__device__ void* g_shadow_state;\n#endif\n"
                   "__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n")
    for name, flags in (("with", ["-lineinfo", "-DHOOKED"]), ("without", [])):
        p = run(["nvcc", "-cubin", "-arch=sm_90a", *flags, str(src), "-o", str(tmp_path / f"{name}.cubin")])
        assert p.returncode == 0, p.stderr
    monkeypatch.setenv("SHADOW_UNIT_CUBINS", f"{tmp_path / 'with.cubin'}:{tmp_path / 'without.cubin'}")
    p = run_unit("tests/unit_shadow_tool.cu", tmp_path)
    m = bugs.SHADOW_LINE.match(re.search(r"^report (.*)$", p.stdout, re.M)[1])
    assert m and m["rule"] == "S1" and m["func"] == "add_one" and m["where"].startswith("tma_store.cu:53"), \
        "the tool's report line is not what tools/bugs.py reads"


def test_every_point_the_tool_patches_has_its_patch_function():
    tool = (REPO / "common" / "shadow" / "tool" / "shadow_tool.c").read_text()
    patches = (REPO / "common" / "shadow" / "tool" / "shadow_patches.cu").read_text()
    named = re.findall(r"\{SANITIZER_INSTRUCTION_(\w+), \"(\w+)\"\}", tool)
    defined = set(re.findall(r"^(?:PATCH |\w+_PATCH\()(\w+)[(,)]", patches, re.M))
    assert len(named) >= 20, named
    missing = [f for _, f in named if f not in defined]
    assert not missing, f"points whose patch function does not exist (the API would refuse them): {missing}"
    points = [pt for pt, _ in named]
    assert len(points) == len(set(points)), "a point patched twice"
    # CUDA_BARRIER_ATTEMPT fires at every mbarrier operation (the probe): with CUDA_BARRIER too, each arrive counts twice
    assert "CUDA_BARRIER_ATTEMPT" in points and "CUDA_BARRIER" not in points


def test_a_run_the_tool_did_not_watch_is_no_pass():
    import shadow_sweep
    summary = "shadow: checked 3 launches of 2 kernels, 40 CTAs (0 unchecked: their slot was in use); no rule broken\n"
    assert shadow_sweep.checked_verdict(0, "RESULT: PASS\n", summary)[0] == "PASS"
    assert shadow_sweep.checked_verdict(0, "RESULT: PASS\n", "")[0] == "FAIL", "the tool did not run"
    assert shadow_sweep.checked_verdict(0, "", summary.replace("40 CTAs", "0 CTAs"))[0] == "FAIL", "no CTA checked"
    report = "       shadow: A3 shared-race: read of shared 0x10; block (0,0,0) thread 1, k (x.cu:3)\n"
    status, why = shadow_sweep.checked_verdict(1, "", report + summary)
    assert status == "FAIL" and why.startswith("A3 shared-race")
    assert shadow_sweep.checked_verdict(1, "check  x .... FAIL  (1 of 2 wrong)\n", summary)[0] == "FAIL"
    assert shadow_sweep.checked_verdict(77, "", "no CUDA device found\n")[0] == "SKIP"
    # make bug-NN N=n's shadow verdict alike
    assert bugs.shadow_verdict(0, "RESULT: PASS\n", summary).startswith("PASSED")
    assert "nothing checked" in bugs.shadow_verdict(0, "RESULT: PASS\n", ""), "the tool did not run"
    assert bugs.shadow_verdict(1, "", report + summary).startswith("caught by the shadow: A3 ")


# ---- the protocol lists of the wrappers -----------------------------------------
def protocol_items(path: str) -> list[str]:
    """The numbered steps (and parenthesized notes) of a header's protocol list, one string each."""
    head = (REPO / path).read_text().split("#pragma once")[0]
    block = head.split("// Protocol", 1)
    assert len(block) == 2, f"{path} opens with no protocol list"
    items: list[str] = []
    for line in block[1].splitlines()[3:]:
        text = line[2:].strip() if line.startswith("//") else ""
        if re.match(r" {3}(\d+\.|\()", line[2:]):  # a step or a note starts 3 columns in; its lines go on at 6
            items.append(text)
        elif text and items:
            items[-1] += " " + text
    return items


@pytest.mark.parametrize("header", WRAPPERS)
def test_every_wrapper_opens_with_its_protocol(header):
    items = protocol_items(header)
    assert len(items) >= 3, f"{header}: a protocol of {len(items)} steps"
    numbers = [int(m[1]) for it in items if (m := re.match(r"(\d+)\.", it))]
    assert numbers == list(range(1, len(numbers) + 1)), f"{header}: steps numbered {numbers}"
    # Every step says what checks it: a shadow rule, a static check (make test) or the host, or that it is
    # an action (what later steps wait for) or why it is not checked at run time.
    for it in items:
        assert re.search(r"\[[A-Z]\d|make test|the host|an action|not checked", it), \
            f"{header}: step '{it[:60]}...' names no rule, no static check and no reason"


def test_the_protocols_rules_and_mistakes_agree():
    ids = {rid for rid, _ in RULE_IDS}
    named: set[str] = set()
    cited: set[str] = set()
    for header in WRAPPERS:
        for item in protocol_items(header):
            rule = None
            for tok in re.finditer(r"\[([A-Z]\d(?: [A-Z]\d)*)\]|(\d\d_\w+/bugs/\d+\.diff)", item):
                if tok[1]:
                    rule = set(tok[1].split())
                    assert rule <= ids, f"{header}: {rule - ids} are no rules of {RULES.name}"
                    named |= rule
                    continue
                diff = REPO / tok[2]
                assert diff.is_file(), f"{header} names {tok[2]}, which does not exist"
                cited.add(tok[2])
                expect = bugs.describe(diff)["shadow"].split()
                if rule is None:  # a mistake of the data or the host: no rule of the shadow
                    assert expect[0] in ("check", "refused"), f"{header}: {tok[2]} breaks {expect}, but no rule is named"
                else:
                    assert rule & set(expect), f"{header}: {tok[2]} says the shadow names {expect}, not {rule}"
    assert ids <= named, f"rules no wrapper's protocol names: {sorted(ids - named)}"
    for step in STEP_DIRS:
        for n, path in bugs.diff_paths(step).items():
            rules = set(bugs.describe(path)["shadow"].split()) & ids
            assert not rules or f"{step}/bugs/{n}.diff" in cited, f"no protocol cites {step}/bugs/{n}.diff ({rules})"


# ---- the H200's recorded shadow runs -------------------------------------------------
from contract import recorded_run  # noqa: E402

# Known gaps, each one named (strict: a sweep that catches one fails here until it leaves the list). The
# H200 sweep of 2026-11-29 (results/shadow_NVIDIA_H200.md, "under the protocol checker") caught every other
# planted mistake; 10's shadow build stops under the checker's tool with a misaligned address (in its third
# grouped_gemm kernel, after 35 launches that ran clean), so its data mistake's check never runs.
SWEEP_MISSED = {("10_grouped_gemm", 3)}
KNOWN_GAP = pytest.mark.xfail(strict=True, reason="10's shadow build stops with a misaligned address under the "
                                                  "checker's tool (see SWEEP_MISSED)")
PLANTED = [(s, n) for s in STEP_DIRS for n in sorted(bugs.diff_paths(s))]


@pytest.mark.parametrize("step_dir,n", [pytest.param(s, n, marks=KNOWN_GAP) if (s, n) in SWEEP_MISSED else (s, n)
                                        for s, n in PLANTED], ids=lambda x: str(x))
def test_every_planted_mistake_is_caught_by_the_shadow(step_dir, n):
    expect = bugs.describe(bugs.diff_paths(step_dir)[n])["shadow"]
    ids = {rid for rid, _ in RULE_IDS}
    words = expect.split()
    assert words and (words[0] in ("check", "refused") or set(w for w in words if not w.startswith("--")) <= ids), \
        f"{step_dir}/bugs/{n}.diff: shadow: {expect}"
    path = H200_RUNS / f"{step_dir}.bug{n}.shadow.txt"
    assert path.is_file(), f"no H200 shadow run of {step_dir}/bugs/{n}.diff: make mutation SHADOW=1 on the H200"
    code, out, err = recorded_run(path.read_text())
    caught, shown = bugs.judge_shadow(expect, code, out + "\n" + err)
    assert caught, f"{path.name}: {shown}, want {expect}"


# 09's full-size shadow run was recorded before its stream-K parts (the tool's run of them has not ended on
# the H200 yet): its expected output now has lines that run lacks.
STALE_FULL_RUN = pytest.mark.xfail(strict=True, reason="09's full-size shadow record predates its stream-K parts")


@pytest.mark.parametrize("step_dir", [pytest.param(d, marks=STALE_FULL_RUN) if d == "09_gemm" else d
                                      for d in STEP_DIRS])
def test_no_false_alarm_in_the_recorded_shadow_runs(step_dir):
    path = H200_RUNS / f"{step_dir}.shadow.txt"
    assert path.is_file(), f"no H200 run of {step_dir}'s shadow build: make shadow FULL=1 on the H200"
    code, stdout, err = recorded_run(path.read_text())
    v = evaluate(load_step(step_dir), stdout, code, (REPO / step_dir / "expected_output.txt").read_text(), shadow=True)
    assert v.status == "PASS" and not bugs.shadow_rules(stdout + "\n" + err), f"{path.name}: {v.problems[:3]}"


def test_a_partial_sweep_keeps_the_other_rows_of_its_table():
    # tools/shadow_sweep.py writes results/shadow_<GPU>.md: a sweep with --only replaces its own rows and
    # keeps the others (it once wrote its rows alone, and the table lost every other step); a whole sweep
    # keeps none of the old rows.
    import shadow_sweep
    head = ["| step | a |", "| --- | --- |"]
    section = "## title\n\n" + "\n".join(head + ["| 01_x | old |", "| 09_y | old |", "| 10_z | old |"]) + "\n"
    got = shadow_sweep.merge_rows(section, head + ["| 09_y | new |"], partial=True)
    assert got == head + ["| 01_x | old |", "| 09_y | new |", "| 10_z | old |"]
    got = shadow_sweep.merge_rows(section, head + ["| 09_y | new |", "| 11_w | new |"], partial=False)
    assert got == head + ["| 09_y | new |", "| 11_w | new |"]
    assert shadow_sweep.merge_rows("", head + ["| 01_x | new |"], partial=True) == head + ["| 01_x | new |"]
