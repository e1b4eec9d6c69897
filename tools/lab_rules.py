"""What a lab hole teaches, judged in the machine code of a fill (the grader's MECHANISM verdict).

A step's check.py states, per hole (`lab`, hole k of lab NN.k), what its fill must show:

    teaches      what the hole teaches, said to the student with any problem
    perf         the PERF lines the hole answers for: only where the hole is about speed. Their floors and
                 the perf_order claims between them are graded; every other floor of the step is not
                 (the hole is not about a host transfer's speed)
    hole         {kernel: [PTX]}: instructions the hole's OWN code must hold, in that kernel ("*": in every
                 kernel the hole's code is compiled into). A PTX pattern is the start of an instruction
                 ("cp.async.bulk.tensor"); "a|b" accepts either. The hole's own code is what the compiler
                 made of the student's lines: the grader brackets them with two marker comments, compiles
                 that copy to PTX, and walks the control flow from the first marker to the second, so a
                 helper lambda, a loop left rolled, a wrapper's inlined body or a second return path all
                 count, and nothing outside the hole does
    hole_absent  {kernel: [PTX]}: instructions the hole's own code must not hold
    hole_order   {kernel: [(anchor, before, stop)]}: before each `anchor` of the hole's own code, scanning
                 back, a `before` comes before any `stop` (a barrier between the stores and the loads)
    exchange     [kernel]: the data crosses threads: the hole's shared loads do not all read back the very
                 addresses its shared stores wrote (the same register and offset in the PTX: the
                 thread's own slot)
    sass, sass_absent, sass_count
                 {kernel: ...}: the kernel's SASS, as check.py's own rules (tools/sass.py; needs cuobjdump)
    ptx_count    {kernel: {PTX: n}}: exactly n instructions of the kernel begin with the text
    build_log_absent
                 [regex]: no line of the build log matches (ptxas repairing a missing wgmma.fence)

Rules that count or order the hole's instructions more strictly reject correct fills written another way
(a rolled loop, a second fence, a wait per stage): what only a run can decide (a race, a window of waits, a
fence's order) is left to the sanitizers and the shadow build.
"""

from __future__ import annotations

import re
import subprocess

SASS_KEYS = ("sass", "sass_absent", "sass_count")


def validate(step, lab: dict) -> dict[int, dict]:
    """The step's hole rules (tools/checker.py already checked each entry's keys, its 'teaches' and that it
    holds a rule a fill could fail), and a perf line is one the step's floors declare."""
    for k, rules in lab.items():
        unknown = set(rules.get("perf", [])) - set(step.perf_floors)
        if unknown:
            raise ValueError(f"{step.name}/check.py: lab[{k!r}]['perf'] names {sorted(unknown)}, which are not "
                             f"PERF lines of the step")
    return lab


def rule_kernels(rules: dict) -> list[str]:
    """The kernels a hole's rules name ("*" aside), in order."""
    keys = ("hole", "hole_absent", "hole_order", "sass", "sass_absent", "sass_count", "ptx_count")
    named = [k for key in keys for k in rules.get(key, {})] + list(rules.get("exchange", []))
    return list(dict.fromkeys(k for k in named if k != "*"))


# ---- the marked copy ---------------------------------------------------------------------------------------------

def begin_marker(n: int) -> str:
    # The end marker also leaves with every early exit of the hole's scope (a return, a break): a local
    # object's destructor prints it there.
    return (f'asm volatile("// lab hole {n} begin" ::: "memory"); struct LabHoleEnd{n} {{ __device__ '
            f'~LabHoleEnd{n}() {{ asm volatile("// lab hole {n} end" ::: "memory"); }} }} lab_hole_end_{n};')


def end_marker(n: int) -> str:
    return f'asm volatile("// lab hole {n} end" ::: "memory");'


def marked(text: str, regions: dict[int, tuple[int, int]]) -> str:
    """A student file with hole k's lines (0-based, inclusive) between its two markers."""
    lines = text.splitlines()
    for k, (a, b) in sorted(regions.items(), key=lambda kv: -kv[1][0]):
        lines[b + 1:b + 1] = [end_marker(k)]
        lines[a:a] = [begin_marker(k)]
    return "\n".join(lines) + "\n"


# ---- the PTX of the marked copy -------------------------------------------------------------------------------------

ENTRY = re.compile(r"^\.(?:visible|weak)?\s*\.entry (\w+)\(")
INSN = re.compile(r"^\s*(@!?%p\w+\s+)?([a-z][\w.:]*)(?!.*:$)")  # inline asm starts at column 0; a label ends with :


def entries(ptx: str) -> dict[str, list[str]]:
    """{mangled kernel: its body's lines}."""
    out, current = {}, None
    for line in ptx.splitlines():
        m = ENTRY.match(line.strip())
        if m:
            current = out.setdefault(m[1], [])
        elif current is not None:
            current.append(line)
    return out


def hole_code(body: list[str], n: int) -> list[str] | None:
    """The instructions of hole n's own code in one kernel (None: the hole is not in it): every instruction
    reached from one of its begin markers without passing one of its end markers, in program order."""
    begin, end = f"// lab hole {n} begin", f"// lab hole {n} end"
    starts = [i for i, ln in enumerate(body) if ln.strip() == begin]
    if not starts:
        return None
    labels = {ln.strip()[:-1]: i for i, ln in enumerate(body) if re.match(r"^\$?\w+:$", ln.strip())}
    seen, todo = set(), [s + 1 for s in starts]
    while todo:
        i = todo.pop()
        while 0 <= i < len(body) and i not in seen:
            seen.add(i)
            text = body[i].strip()
            if text == end:
                break
            m = INSN.match(body[i])
            if not m:
                i += 1
                continue
            op = m[2]
            if op.startswith("bra"):
                target = text.rstrip(";").split()[-1]
                if target in labels:
                    todo.append(labels[target])
                if not m[1]:  # an unconditional branch does not fall through
                    break
            elif op in ("ret", "exit", "trap"):
                break
            i += 1
    return [re.sub(r"^@!?%p\w+\s+", "", body[i].strip()) for i in sorted(seen) if INSN.match(body[i])]


def matches(insn: str, pattern: str) -> bool:
    """A PTX pattern: the start of an instruction; "a|b" is either."""
    return any(insn.startswith(p.strip()) for p in pattern.split("|"))


def shared_addresses(code: list[str], op: str) -> list[str]:
    """The address operand ([%r5+4096]) of every ld.shared / st.shared of the code."""
    return [m[1] for ln in code if ln.startswith(op) for m in [re.search(r"(\[[^\]]+\])", ln)] if m]


def unordered(code: list[str], anchor: str, before: str, stop: str) -> str | None:
    """The first `anchor` of the code that no `before` separates from the nearest `stop` (or the hole's start)
    before it."""
    for i, ln in enumerate(code):
        if matches(ln, anchor):
            for c in reversed(code[:i]):
                if matches(c, before):
                    break
                if matches(c, stop):
                    return ln
            else:
                return ln
    return None


def hole_problems(rules: dict, ptx: dict[str, list[str]], n: int, demangle) -> list[str]:
    """The problems of hole n's PTX rules (hole, hole_absent, hole_order, exchange)."""
    codes = {f: c for f, body in ptx.items() for c in [hole_code(body, n)] if c is not None}
    if not codes:
        return ["the hole's code is in no kernel: nothing the program runs comes from it"]
    problems = []

    def each(spec: dict):
        """(kernel, the hole's code in it, the spec's value) for every entry: "*" is every kernel."""
        for kernel, value in spec.items():
            if kernel == "*":
                yield from ((demangle(f), c, value) for f, c in codes.items())
                continue
            f = next((f for f in codes if demangle(f) == kernel), None)
            if f is None:
                problems.append(f"{kernel}: the hole's code is not in it")
            else:
                yield kernel, codes[f], value
    for key, present in (("hole", True), ("hole_absent", False)):
        for kernel, code, patterns in each(rules.get(key, {})):
            for p in patterns:
                if any(matches(ln, p) for ln in code) != present:
                    problems.append(f"{kernel}: {'no' if present else 'has'} {p} in the hole's code")
    for kernel, code, orders in each(rules.get("hole_order", {})):
        for anchor, before, stop in orders:
            bad = unordered(code, anchor, before, stop)
            if bad:
                problems.append(f"{kernel}: {bad.split()[0]} with no {before} between it and the {stop} before it")
    for kernel, code, _ in each({k: None for k in rules.get("exchange", [])}):
        stored, loaded = shared_addresses(code, "st.shared"), shared_addresses(code, "ld.shared")
        if loaded and set(loaded) <= set(stored):
            problems.append(f"{kernel}: every ld.shared of the hole reads back an address its own st.shared "
                            f"wrote ({', '.join(sorted(set(loaded))[:3])}): no data crosses threads")
    return problems


def instructions(body: list[str]) -> list[str]:
    return [re.sub(r"^@!?%p\w+\s+", "", ln.strip()) for ln in body if INSN.match(ln)]


def ptx_count_problems(rules: dict, ptx: dict[str, list[str]], demangle) -> list[str]:
    out = []
    for kernel, want in rules.get("ptx_count", {}).items():
        f = next((f for f in ptx if demangle(f) == kernel), None)
        code = instructions(ptx[f]) if f else []
        for text, n in want.items():
            got = sum(ln.startswith(text) for ln in code)
            if got != n:
                out.append(f"{kernel}: {got} x {text} in the PTX, want {n}")
    return out


def sass_problems(rules: dict, functions: dict[str, list[str]]) -> list[str]:
    import sass  # noqa: PLC0415: needs cuobjdump, only a grade asks for it
    out = []
    for kernel, _, miss in sass.check_sass(functions, rules.get("sass", {}), rules.get("sass_absent"),
                                           rules.get("sass_count")):
        out += [f"{kernel}: not in the program"] if miss is None else [f"{kernel}: {m}" for m in miss]
    return out


def demangler():
    """mangled -> demangled kernel name (as check.py writes it), cached, through c++filt."""
    cache: dict[str, str] = {}

    def demangle(f: str) -> str:
        if f not in cache:
            import sass  # noqa: PLC0415
            cache[f] = sass.demangled_kernel(f)
        return cache[f]
    return demangle


def compile_ptx(nvcc: list[str], include_first, src, out, log) -> str:
    """The PTX of the marked copy; '' or the compiler's first error."""
    flags = [f for f in nvcc[1:] if f != "--resource-usage"]
    p = subprocess.run([nvcc[0], f"-I{include_first}", *flags, "-ptx", str(src), "-o", str(out)],
                       capture_output=True, text=True)
    log.write_text(p.stdout + p.stderr)
    return "" if p.returncode == 0 else next((ln for ln in (p.stdout + p.stderr).splitlines() if "error" in ln),
                                             "the marked copy does not compile")
