"""Show (and verify) the SASS that a step is about (`make sass-NN`).

    python3 tools/sass.py 01_memcpy_baseline [--binary build/01_memcpy_baseline] [--all]

For every kernel the step's check.py names in `sass`, prints the SASS lines
that match its patterns, then exits 1 if a kernel or a pattern is missing, or
if a pattern of `sass_absent` is present. tests/test_sass.py uses the same
functions, so what the lesson shows is what the tests check.

Pattern syntax:
- the opcode as cuobjdump prints it, dots literal, optional parts in
  brackets: "LDG.E.128[.CONSTANT]" matches LDG.E.128 and LDG.E.128.CONSTANT
  but not LDG.E.64; a trailing "*" matches any further modifiers:
  "SYNCS.ARRIVE*";
- optionally followed by operand text that must begin the operands:
  "DEPBAR.LE SB0, 0x0" matches that wait and not DEPBAR.LE SB0, 0x1; a "*"
  in it matches any text: "CS2R *SR_CLOCKLO" is clock64, not the globaltimer;
- " + " joins patterns that must match consecutive instructions:
  "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S" is fence.proxy.async, and no other
  instruction pair that merely contains one of the two.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from checker import step_or_exit  # noqa: E402
from contract import REPO, binary_path  # noqa: E402


class ToolMissing(Exception):
    pass


def find_tool(name: str) -> pathlib.Path:
    """cuobjdump / nvdisasm: PATH, the CUDA toolkit, then the wheels that
    requirements.txt installs into .venv (nvidia-cuda-cuobjdump/-nvdisasm)."""
    found = shutil.which(name)
    if found:
        return pathlib.Path(found)
    roots = [pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin"]
    for prefix in {pathlib.Path(sys.prefix), REPO / ".venv"}:
        roots += sorted(prefix.glob("lib/python3*/site-packages/nvidia/cu*/bin"))
    for root in roots:
        if (root / name).is_file():
            return root / name
    raise ToolMissing(f"{name} not found on PATH, in the CUDA toolkit or in .venv: run `make venv`, which installs "
                      f"it (requirements.txt: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm)")


def dump_sass(binary: pathlib.Path) -> dict[str, list[str]]:
    """Mangled function name -> its SASS instruction lines."""
    cuobjdump, nvdisasm = find_tool("cuobjdump"), find_tool("nvdisasm")
    env = dict(os.environ, PATH=f"{nvdisasm.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    text = subprocess.run([str(cuobjdump), "-sass", str(binary)], capture_output=True, text=True,
                          env=env, check=True).stdout
    functions: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = m.group(1)
            functions[current] = []
        elif current and re.match(r"\s*/\*[0-9a-f]{4,}\*/", line):
            functions[current].append(line.strip())
    return functions


def instruction(sass_line: str) -> str:
    """'/*0180*/  @!P0 LDG.E.128.CONSTANT R4, desc[...] ; /* 0x... */' -> 'LDG.E.128.CONSTANT R4, desc[...]'."""
    body = re.sub(r"^/\*[0-9a-f]+\*/\s*", "", sass_line)
    body = re.sub(r"\s*;.*$", "", body)
    return re.sub(r"^@!?U?P\w+\s+", "", body).strip()  # predicate guard


def opcode(sass_line: str) -> str:
    """'/*0180*/  @!P0 LDG.E.128.CONSTANT R4, desc[UR10][R24.64] ;' -> 'LDG.E.128.CONSTANT'."""
    parts = instruction(sass_line).split()
    return parts[0] if parts else ""


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """One instruction pattern: opcode (with [optional] parts and a trailing *), then optional operand text."""
    op, _, operands = pattern.strip().partition(" ")
    rx = re.escape(op.rstrip("*")).replace(r"\[", "(?:").replace(r"\]", ")?")
    rx += r"(?:\.\S+)?" if op.endswith("*") else ""
    if operands.strip():
        rx += r"\s+" + ".*".join(re.escape(part) for part in operands.strip().split("*"))
    else:
        rx += r"(?:\s|$)"
    return re.compile("^" + rx)


def find_pattern(lines: list[str], pattern: str) -> list[int]:
    """Indices of the first instruction of every match of a (possibly " + "-joined) pattern."""
    parts = [pattern_regex(p) for p in pattern.split(" + ")]
    insns = [instruction(ln) for ln in lines]
    return [i for i in range(len(insns) - len(parts) + 1)
            if all(rx.match(insns[i + k]) for k, rx in enumerate(parts))]


def kernel_function(functions: dict[str, list[str]], kernel: str) -> str | None:
    """The mangled name of `kernel`: "copy_float4" or a template instance with
    integer, bool or enum arguments, "pipeline<4>", "broadcast<true>",
    "reduce_ops_tensor<(ReduceOp)3>" (Itanium mangling writes <length><name>,
    then I ... E around the arguments: Li<value>E for an int, Lb0E/Lb1E for
    false/true, L<length><Enum><value>E for an enum)."""
    m = re.fullmatch(r"(\w+)(?:<([-\w, ()]+)>)?", kernel)
    if m is None:  # nested template arguments ("gemm_ws<Config<0, 4, true> >"): compare the demangled names
        return next((f for f in functions if demangled_kernel(f) == kernel), None)
    name, args = m[1], m[2]
    rx = rf"(^|[^0-9]){len(name)}{re.escape(name)}"

    def mangle(arg: str) -> str:
        enum = re.fullmatch(r"\((\w+)\)(-?\d+)", arg)
        if enum:
            return f"L{len(enum[1])}{enum[1]}{enum[2]}E"
        return {"true": "Lb1E", "false": "Lb0E"}.get(arg, rf"Li{arg}E")

    if args is not None:
        rx += "I" + "".join(mangle(a.strip()) for a in args.split(",")) + "E"
    else:
        rx += "(?!I)"
    for f in functions:
        if re.search(rx, f) or f == kernel:
            return f
    return None


# The instructions that order memory: a fence, a release or an acquire, a
# cluster barrier. Each step's check.py pins how many of each every kernel
# holds (`fences`, from the PTX, and `sass_fences`, what survives into SASS),
# so an omission the hardware may hide (the data still come out right) fails
# a CPU test. Not every PTX fence leaves SASS: fence.mbarrier_init compiles to
# nothing on sm_90a, which is why the PTX is pinned as well.
PTX_FENCE = re.compile(r"^(fence\.|membar|barrier\.cluster|tensormap\.cp_fenceproxy)|\.(release|acquire)(\.|$)")
SASS_FENCES = ("FENCE.VIEW.ASYNC.S", "MEMBAR.ALL.GPU", "MEMBAR.SC.GPU", "UTMACCTL.IV", "UCGABAR_ARV", "UCGABAR_WAIT",
               "STG.E.STRONG.GPU", "LDG.E.STRONG.GPU")


def dump_ptx(source: pathlib.Path, nvcc: str = "nvcc") -> dict[str, list[str]]:
    """Mangled kernel name -> its PTX instruction lines, compiled from a step's source."""
    text = subprocess.run([nvcc, "-std=c++17", f"-I{REPO}", "-gencode", "arch=compute_90a,code=sm_90a", "-ptx",
                           str(source), "-o", "-"], capture_output=True, text=True, check=True).stdout
    functions: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"\.(?:visible )?\.entry (\w+)\(", line.strip())
        if m:
            current = functions.setdefault(m[1], [])
        elif current is not None and re.match(r"\s+(@!?%p\d+\s+)?[a-z]", line) and line.strip().endswith(";"):
            current.append(re.sub(r"^@!?%p\d+\s+", "", line.strip()))
    return functions


def fence_counts(functions: dict[str, list[str]], ptx: bool) -> dict[str, dict[str, int]]:
    """{mangled kernel: {fence opcode: count}} for every kernel that holds one."""
    out = {}
    for f, lines in functions.items():
        ops = [ln.split()[0].rstrip(";") for ln in lines] if ptx else [opcode(ln) for ln in lines]
        fences = [op for op in ops if (PTX_FENCE.search(op) if ptx else op in SASS_FENCES)]
        if fences:
            out[f] = {op: fences.count(op) for op in sorted(set(fences))}
    return out


def check_fences(functions: dict[str, list[str]], pins: dict[str, dict[str, int]], ptx: bool) -> list[str]:
    """Problems: a pinned kernel missing, a count that differs, a kernel with fences that nothing pins."""
    counts, problems, pinned = fence_counts(functions, ptx), [], set()
    for kernel, want in pins.items():
        f = kernel_function(functions, kernel)
        if f is None:
            problems.append(f"{kernel}: no such kernel")
            continue
        pinned.add(f)
        got = counts.get(f, {})
        for op in sorted(set(want) | set(got)):
            if got.get(op, 0) != want.get(op, 0):
                problems.append(f"{kernel}: {got.get(op, 0)} x {op}, pinned {want.get(op, 0)}")
    problems += [f"{f}: fences {counts[f]} but no pin" for f in counts if f not in pinned]
    return problems


# ---- order: what must come before (or after) an instruction ---------------------
# A rule is a dict:
#   anchor    the instruction the rule is about (a pattern);
#   before    steps that must be found scanning BACKWARD from each anchor,
#             nearest first; or `after_it`: scanning forward;
#   stop      a pattern (alternatives joined by "|") that must not be met
#             before a step is found: a shared store between a proxy fence and
#             the barrier after it, a TMA store between a read wait and the
#             writes it guards, an MMA between a wgmma wait and a hand-back;
#   from      (optional) only the anchors after the first match of this;
#   until     (optional) only the anchors before the first match of this.
# A step is a pattern, or (family, [exact, ...]): the nearest instruction of
# the family must be one of the exact forms: a read wait must say 0x1, not
# merely be a wait. Linear order is program order inside a loop body, where
# each of these pairs lives (a loop-carried pair, a wait at the end of the
# body for the writes at its top, is checked forward from the store). The
# tests plant each mistake to show that the rule sees it.
def check_order(lines: list[str], rule: dict) -> list[str]:
    insns = [instruction(ln) for ln in lines]
    anchors = find_pattern(lines, rule["anchor"])
    if "from" in rule:
        first = find_pattern(lines, rule["from"])
        anchors = [i for i in anchors if first and i > first[0]]
    if "until" in rule:
        last = find_pattern(lines, rule["until"])
        anchors = [i for i in anchors if not last or i < last[0]]
    if not anchors:
        return [f"no {rule['anchor']}" + (f" after {rule['from']}" if "from" in rule else "")]
    forward = "after_it" in rule
    steps = rule["after_it"] if forward else rule["before"]
    stop_rx = [pattern_regex(p) for p in rule.get("stop", "").split("|") if p]
    problems = []
    for a in anchors:
        pos = a
        for step in steps:
            family, exact = (step, [step]) if isinstance(step, str) else (step[0], step[1])
            fam_rx, exact_rx = pattern_regex(family), [pattern_regex(e) for e in exact]
            j = pos + 1 if forward else pos - 1
            while 0 <= j < len(insns) and not fam_rx.match(insns[j]) and not any(rx.match(insns[j]) for rx in stop_rx):
                j += 1 if forward else -1
            where = f"{'after' if forward else 'before'} {insns[a]} (instruction {a})"
            if not 0 <= j < len(insns):
                problems.append(f"no {family} {where}")
                break
            if not fam_rx.match(insns[j]):
                problems.append(f"{insns[j]} comes with no {family} between it and {insns[pos]} ({where})")
                break
            if not any(rx.match(insns[j]) for rx in exact_rx):
                problems.append(f"{insns[j]} {where}: want {' or '.join(exact)}")
                break
            pos = j
    return problems


def check_orders(functions: dict[str, list[str]], spec: dict[str, list[tuple]]) -> list[str]:
    """Every order rule of a step's check.py (sass_order), kernel by kernel: the problems found."""
    problems = []
    for kernel, rules in spec.items():
        f = kernel_function(functions, kernel)
        if f is None:
            problems.append(f"{kernel}: no such kernel")
            continue
        for rule in rules:
            problems += [f"{kernel}: {p}" for p in check_order(functions[f], rule)]
    return problems


def demangled_kernel(mangled: str) -> str:
    """'_Z9broadcastILb1EEv14CUtensorMap_stPjjj' -> 'broadcast<true>' (the form check.py uses)."""
    d = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip()
    d, depth = re.sub(r"^void ", "", d), 0
    for i, ch in enumerate(d):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "(" and depth == 0:
            return d[:i]
    return d


def check_sass(functions: dict[str, list[str]], spec: dict[str, list[str]], absent: dict[str, list[str]] | None = None,
               count: dict[str, dict[str, int]] | None = None):
    """Yields (kernel, matching lines, problems), problems None if the kernel is absent,
    else the patterns that are missing ("no X"), forbidden and present ("has X"),
    or present the wrong number of times ("N x X, want M")."""
    absent, count = absent or {}, count or {}
    for kernel in dict.fromkeys([*spec, *absent, *count]):
        f = kernel_function(functions, kernel)
        if f is None:
            yield kernel, [], None
            continue
        lines = functions[f]
        shown, problems = set(), []
        for p in spec.get(kernel, []):
            hits = find_pattern(lines, p)
            if not hits:
                problems.append(f"no {p}")
            for i in hits:
                shown.update(range(i, i + len(p.split(" + "))))
        for p in absent.get(kernel, []):
            if find_pattern(lines, p):
                problems.append(f"has {p}")
        for p, want in count.get(kernel, {}).items():
            got = len(find_pattern(lines, p))
            if got != want:
                problems.append(f"{got} x {p}, want {want}")
        yield kernel, [lines[i] for i in sorted(shown)], problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", help="step folder, e.g. 01_memcpy_baseline, or its twins: 02_cp_async/twins")
    ap.add_argument("--binary", type=pathlib.Path)
    ap.add_argument("--all", action="store_true", help="print every SASS line of those kernels")
    ap.add_argument("--pins", action="store_true",
                    help="print the fence pins (fences, sass_fences) of this build for check.py")
    a = ap.parse_args()
    step = step_or_exit(a.step, "sass")
    binary = a.binary or binary_path(step.name)
    if a.pins:
        source = next((REPO / step.name).glob("*.cu"))
        for key, funcs, ptx in (("fences", dump_ptx(source), True), ("sass_fences", dump_sass(binary), False)):
            print(f"{key} = {{")
            for f, c in sorted(fence_counts(funcs, ptx).items(), key=lambda kv: demangled_kernel(kv[0])):
                print(f"    {demangled_kernel(f)!r}: {c!r},".replace("'", '"'))
            print("}")
        return 0
    if not binary.is_file():
        print(f"{binary} not found: build it with `make build-{step.name[:2]}`")
        return 2
    try:
        functions = dump_sass(binary)
    except ToolMissing as e:
        print(e)
        return 2
    except subprocess.CalledProcessError as e:
        print(f"{binary}: cuobjdump cannot read it (exit {e.returncode}): is it a CUDA program?")
        return 2
    ok = True
    for p in check_orders(functions, step.sass_order):
        print(f"   WRONG ORDER: {p}")
        ok = False
    for kernel, lines, problems in check_sass(functions, step.sass, step.sass_absent, step.sass_count):
        print(f"== {kernel}")
        if problems is None:
            print("   MISSING: no such kernel in the binary")
            ok = False
            continue
        shown = functions[kernel_function(functions, kernel)] if a.all else lines
        for ln in shown:
            print("   " + re.sub(r"\s*/\* 0x[0-9a-f]+ \*/$", "", ln))
        for p in problems:
            print(f"   WRONG: {p}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
