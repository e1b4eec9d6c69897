"""Show (and verify) the SASS that a step is about.

    python3 tools/sass.py 01_memcpy_baseline [--binary build/01_memcpy_baseline] [--all]

For every kernel the step's check.py names in STEP.sass, prints the SASS lines
whose opcode matches one of its patterns, then exits 1 if a kernel or a
pattern is missing. `make sass-NN` runs this; tests/test_sass.py uses the same
functions, so what the lesson shows is what the tests check.

Pattern syntax: the opcode as cuobjdump prints it, dots literal, with optional
parts in brackets: "LDG.E.128[.CONSTANT]" matches LDG.E.128 and
LDG.E.128.CONSTANT but not LDG.E.64. A trailing "*" matches any further
modifiers: "SYNCS.ARRIVE*".
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
from checker import load_step  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent


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
    raise FileNotFoundError(
        f"{name} not found on PATH, in the CUDA toolkit or in .venv; `make venv` installs it "
        f"(requirements.txt: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm)")


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


def opcode(sass_line: str) -> str:
    """'/*0180*/  @!P0 LDG.E.128.CONSTANT R4, desc[...] ;' -> 'LDG.E.128.CONSTANT'."""
    body = re.sub(r"^/\*[0-9a-f]+\*/\s*", "", sass_line)
    body = re.sub(r"^@!?U?P\w+\s+", "", body)  # predicate guard
    return body.split()[0].rstrip(";") if body.split() else ""


def pattern_regex(pattern: str) -> re.Pattern[str]:
    rx = re.escape(pattern.rstrip("*")).replace(r"\[", "(?:").replace(r"\]", ")?")
    return re.compile(rx + (r"(\..+)?" if pattern.endswith("*") else "") + "$")


def kernel_function(functions: dict[str, list[str]], kernel: str) -> str | None:
    """The mangled name of `kernel`: "copy_float4" or a template instance with
    integer arguments, "pipeline<4>" (Itanium mangling writes <length><name>,
    then I Li<value>E ... E for template arguments)."""
    m = re.fullmatch(r"(\w+)(?:<([-\d, ]+)>)?", kernel)
    name, args = m[1], m[2]
    rx = rf"(^|[^0-9]){len(name)}{re.escape(name)}"
    if args is not None:
        rx += "I" + "".join(rf"Li{a.strip()}E" for a in args.split(",")) + "E"
    else:
        rx += "(?!I)"
    for f in functions:
        if re.search(rx, f) or f == kernel:
            return f
    return None


def check_sass(functions: dict[str, list[str]], spec: dict[str, list[str]]):
    """Yields (kernel, matching lines, missing patterns or None if the kernel is absent)."""
    for kernel, patterns in spec.items():
        f = kernel_function(functions, kernel)
        if f is None:
            yield kernel, [], None
            continue
        rxs = [pattern_regex(p) for p in patterns]
        lines = [ln for ln in functions[f] if any(rx.match(opcode(ln)) for rx in rxs)]
        missing = [p for p, rx in zip(patterns, rxs) if not any(rx.match(opcode(ln)) for ln in functions[f])]
        yield kernel, lines, missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", help="step folder, e.g. 01_memcpy_baseline")
    ap.add_argument("--binary", type=pathlib.Path)
    ap.add_argument("--all", action="store_true", help="print every SASS line of those kernels")
    a = ap.parse_args()
    step = load_step(a.step.rstrip("/"))
    binary = a.binary or REPO / "build" / step.name
    functions = dump_sass(binary)
    ok = True
    for kernel, lines, missing in check_sass(functions, step.sass):
        print(f"== {kernel}")
        if missing is None:
            print("   MISSING: no such kernel in the binary")
            ok = False
            continue
        shown = functions[kernel_function(functions, kernel)] if a.all else lines
        for ln in shown:
            print("   " + re.sub(r"\s*/\* 0x[0-9a-f]+ \*/$", "", ln))
        for p in missing:
            print(f"   MISSING: no {p}")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
