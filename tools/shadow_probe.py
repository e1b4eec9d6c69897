"""The probe: which instructions CUDA's Sanitizer API patches on sm_90a, with which arguments.

    python3 tools/shadow_probe.py run --out DIR [--only 09] [--timeout 120] [--budget 540]   on a GPU

`run` runs, each under the probe library (build/shadow_tool/libshadow_probe.so,
injected with CUDA_INJECTION64_PATH; common/shadow/tool/probe_inject.c), which
asks the API to patch EVERY instrumentation point of every module with a
counting function (probe_patches.cu):
  - the probe's own program (build/shadow_tool/probe_kernels, from
    tests/shadow_proof/probe_kernels.cu): each instruction whose patching
    matters, once, in raw PTX;
  - every step and every twin with --quick (build/NN_topic, build/twins/NN_topic),
    each also run once without the probe (the time the probe adds).
Then every patched pc is placed in the kernel's machine code (cuobjdump -sass of
the binary) and the record is written: per kernel and point, the calls, the
instructions patched and the first arguments; for every instruction of
interest (UTMALDG, UBLKCP, SYNCS.*, HGMMA, FENCE.VIEW.ASYNC, ...) the points
that fired at it, or none. DIR gets shadow_probe_<GPU>.md and raw/ (one text
file per run). Nothing is built here: make shadow-probe builds everything on
the CPU machine, and the files travel with the command.
Runs stop being started once --budget seconds have gone (the record names
the ones left out), so that one command fits a 10-minute slot.
Exit code: 0 when every run finished, 1 when one failed or hung (the record
says which), 77 without a GPU.
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from contract import REPO, binary_path, step_dirs, twin_dirs  # noqa: E402

TOOL = REPO / "build" / "shadow_tool"
PROBE_LIB = TOOL / "libshadow_probe.so"
PROBE_PATCHES = TOOL / "probe_patches.fatbin"
PROBE_PROGRAM = TOOL / "probe_kernels"

POINTS = {
    1: "BLOCK_ENTER", 2: "BLOCK_EXIT", 3: "GLOBAL_MEMORY_ACCESS", 4: "SHARED_MEMORY_ACCESS",
    5: "LOCAL_MEMORY_ACCESS", 6: "BARRIER", 7: "SYNCWARP", 8: "SHFL", 9: "CALL", 10: "RET",
    11: "DEVICE_SIDE_MALLOC", 12: "DEVICE_SIDE_FREE", 13: "CUDA_BARRIER", 14: "MEMCPY_ASYNC",
    15: "PIPELINE_COMMIT", 16: "PIPELINE_WAIT", 17: "REMOTE_SHARED_MEMORY_ACCESS", 18: "DEVICE_ALIGNED_MALLOC",
    19: "MATRIX_MEMORY_ACCESS", 20: "CACHE_CONTROL", 21: "CLUSTER_BARRIER_ARRIVE", 22: "CLUSTER_BARRIER_WAIT",
    23: "WARPGROUP_MMA_ASYNC", 24: "WARPGROUP_WAIT_GROUP", 25: "WARPGROUP_FENCE", 26: "ASYNC_STORE",
    27: "ASYNC_REDUCTION", 28: "SET_SHARED_MEMORY_SIZE", 29: "BARRIER_RELEASE", 30: "BULK_COPY_GLOBAL_TO_SHARED",
    31: "TENSOR_CORE_BARRIER", 32: "MEMSET_SHARED", 33: "SYNCWARP_RELEASE", 34: "MEMCPY_ASYNC_BARRIER",
    35: "BULK_COPY_SHARED_TO_GLOBAL", 36: "BULK_COPY_SHARED_TO_SHARED", 37: "BULK_REDUCTION_SHARED_TO_GLOBAL",
    38: "BULK_REDUCTION_SHARED_TO_SHARED", 39: "CUDA_BARRIER_ATTEMPT", 40: "CLUSTER_BARRIER_WAIT_ENTRY",
}
# The machine code whose patching the probe asks about: the async copies, their
# barriers, groups and fences, the tensor-map instructions, wgmma, clusters,
# and the ordinary shared accesses and barriers.
INTEREST = re.compile(
    r"^(UTMALDG|UTMASTG|UTMAREDG|UTMAPF|UTMACCTL|UTMACMDFLUSH|UBLKCP|UBLKRED|UBLKPF|FENCE\.VIEW\.ASYNC|SYNCS|HGMMA|"
    r"WARPGROUP|UCGABAR|LDGSTS|LDGDEPBAR|ARRIVES|DEPBAR|ATOMG\.E\.EXCH|MEMBAR|STAS|REDAS|LDSM|STSM|BAR\.|"
    r"ST\.E|LD\.E|STS|LDS|ATOMS|SHFL|WARPSYNC|CCTL|ERRBAR|CGAERRBAR)"
)
SASS_LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def sanitizer_dir() -> pathlib.Path | None:
    """Where libsanitizer-public.so is: the toolkit's compute-sanitizer folder, else the pinned wheel in .venv."""
    cands = [pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "compute-sanitizer",
             pathlib.Path("/usr/local/cuda/compute-sanitizer")]
    cands += sorted((REPO / ".venv").glob("lib/python3*/site-packages/nvidia/cu13/lib"))
    for c in cands:
        if (c / "libsanitizer-public.so").exists():
            return c
    return None


def tool_env(sandir: pathlib.Path, out: pathlib.Path, classes: str | None, preload: bool) -> dict:
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = f"{sandir}:{env.get('LD_LIBRARY_PATH', '')}".rstrip(":")
    env["SHADOW_PROBE_PATCHES"] = str(PROBE_PATCHES)
    env["SHADOW_PROBE_OUT"] = str(out)
    if classes:
        env["SHADOW_PROBE_CLASSES"] = classes
    if preload:
        env["LD_PRELOAD"] = str(PROBE_LIB)
        env["SHADOW_TOOL_PRELOAD"] = "1"
    else:
        env["CUDA_INJECTION64_PATH"] = str(PROBE_LIB)
    return env


def run_one(argv: list[str], env: dict | None, timeout: int) -> tuple[int, float, str]:
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, cwd=REPO)
        code, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        code = 124
        text = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        text += f"\n(killed after {timeout} s)"
    return code, time.monotonic() - t0, text


# ---- the raw text the probe library writes ------------------------------------------
def parse_raw(text: str) -> dict:
    """probe_inject.c's output: modules (their patch results), functions, per point calls, pcs, samples."""
    mods, funcs, cur, cls = [], [], None, None
    for line in text.splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "module":
            res = {int(k): int(v) for k, v in (x.split(":") for x in w[w.index("results") + 1:])}
            kv = dict(zip(w[2:w.index("results"):2], w[3:w.index("results"):2]))
            mods.append({"bytes": int(kv["cubin_bytes"]), "patch_module": int(kv["patch_module"]), "results": res,
                         "debug_line": kv.get("debug_line") == "1", "object": kv.get("object", "?")})
        elif w[0] == "function":
            kv = dict(zip(w[2::2], w[3::2]))
            cur = {"name": w[1], "launches": int(kv["launches"]), "graph_launches": int(kv["graph_launches"]),
                   "fn_pc": int(kv["fn_pc"], 16), "grid": kv["grid"], "block": kv["block"], "cluster": kv["cluster"],
                   "read_back": kv["read_back"] == "1", "classes": {}}
            funcs.append(cur)
        elif w[0] == "class" and cur is not None:
            cls = {"calls": int(w[4]), "pcs": [], "samples": []}
            cur["classes"][int(w[1])] = cls
        elif w[0] == "pc" and cls is not None:
            cls["pcs"].append((int(w[1], 16), int(w[5])))
        elif w[0] == "sample" and cls is not None:
            cls["samples"].append({"offset": int(w[2], 16), "block": int(w[4]), "thread": int(w[6]),
                                   "args": [int(x, 16) for x in w[8:14]]})
    return {"modules": mods, "functions": funcs, "complete": "end" in text.split()}


def parse_sass(text: str) -> dict[str, dict[int, str]]:
    """cuobjdump -sass: function (mangled) -> offset -> instruction (guard and operands kept)."""
    out: dict[str, dict[int, str]] = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^\s+Function : (\S+)", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        m = SASS_LINE.match(line)
        if m and cur is not None:
            cur[int(m.group(1), 16)] = m.group(2)
    return out


def opcode(instr: str) -> str:
    w = instr.split()
    if w and w[0].startswith("@"):
        w = w[1:]
    return w[0] if w else ""


def sass_of(binary: pathlib.Path) -> dict[str, dict[int, str]]:
    tool = shutil.which("cuobjdump") or str(pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "cuobjdump")
    try:
        p = subprocess.run([tool, "-sass", str(binary)], capture_output=True, text=True, timeout=300)
        return parse_sass(p.stdout)
    except (OSError, subprocess.TimeoutExpired):
        return {}


def coverage(fn: dict, sass: dict[int, str]) -> list[tuple[int, str, list[str]]]:
    """Every instruction of interest in the kernel, with the points whose patched pc is it."""
    at = collections.defaultdict(list)
    for c, rec in fn["classes"].items():
        for pc, calls in rec["pcs"]:
            at[pc - fn["fn_pc"]].append(f"{POINTS.get(c, c)}({calls})")
    rows = []
    for off in sorted(sass):
        if INTEREST.match(opcode(sass[off])):
            rows.append((off, sass[off], at.get(off, [])))
    return rows


def describe(label: str, raw: dict, sass: dict[str, dict[int, str]], lines: list[str], full: bool) -> dict:
    """Markdown for one run; returns, per SASS opcode, how many sites were patched / seen."""
    tally: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    mods = raw["modules"]
    if mods:
        bad = {POINTS.get(k, k): v for k, v in mods[0]["results"].items() if v not in (0, -1)}
        lines.append(f"- modules loaded: {len(mods)}; sanitizerPatchModule of the first: {mods[0]['patch_module']}; "
                     f"points the first refused (result code): {bad or 'none'}")
        for i, m in enumerate(mods):
            lines.append(f"- module {i}: {m['bytes']} bytes, .debug_line {'yes' if m['debug_line'] else 'no'}, "
                         f"its cubin in {m['object']}, sanitizerPatchModule {m['patch_module']}")
    for fn in raw["functions"]:
        code = sass.get(fn["name"], {})
        lines.append(f"\n#### `{fn['name']}`\n")
        lines.append(f"launches {fn['launches']} (from graphs {fn['graph_launches']}), grid {fn['grid']}, block "
                     f"{fn['block']}, cluster {fn['cluster']}{'' if fn['read_back'] else '; record NOT read back'}"
                     f"{'' if code else '; no SASS found for it in the binary (a library kernel)'}\n")
        if fn["classes"]:
            lines.append("| point | calls | patched instructions (offset: SASS, calls) | first arguments |")
            lines.append("| --- | --- | --- | --- |")
            for c in sorted(fn["classes"]):
                rec = fn["classes"][c]
                pcs = sorted(rec["pcs"])
                shown = pcs if full else pcs[:6]
                where = "; ".join(f"{pc - fn['fn_pc']:#x}: {code.get(pc - fn['fn_pc'], '?')} ({n})" for pc, n in shown)
                if len(pcs) > len(shown):
                    where += f"; ... {len(pcs) - len(shown)} more"
                samp = "; ".join(f"@{s['offset']:#x} b{s['block']} t{s['thread']} " + " ".join(f"{a:#x}" for a in s["args"])
                                 for s in rec["samples"][: (4 if full else 2)])
                lines.append(f"| {POINTS.get(c, c)} | {rec['calls']} | {where} | {samp} |")
        else:
            lines.append("(no patch fired)")
        if code:
            rows = coverage(fn, code)
            missed = [(o, i) for o, i, pts in rows if not pts]
            for o, i, pts in rows:
                t = tally[opcode(i)]
                t[1] += 1
                t[0] += bool(pts)
            if full:
                lines.append("\nEvery instruction of interest and the points that fired at it:\n")
                lines.append("| offset | SASS | points |")
                lines.append("| --- | --- | --- |")
                for o, i, pts in rows:
                    lines.append(f"| {o:#06x} | `{i}` | {', '.join(pts) or '**none**'} |")
            elif missed:
                lines.append("\nInstructions of interest no point fired at: " +
                             ", ".join(f"`{i}` @{o:#x}" for o, i in missed[:20]) + (" ..." if len(missed) > 20 else ""))
    return tally


def program_list(only: str | None) -> list[tuple[str, pathlib.Path, list[str]]]:
    progs = [("probe_kernels", PROBE_PROGRAM, [])]
    for d in step_dirs() + twin_dirs():
        if only and not d.startswith(only):
            continue
        progs.append((d, binary_path(d), ["--quick"]))
    return progs


def run(a) -> int:
    out = pathlib.Path(a.out)
    raw_dir = out / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    sandir = sanitizer_dir()
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True) if shutil.which("nvidia-smi") else None
    if not smi or smi.returncode != 0 or not smi.stdout.strip():
        print("shadow probe: no GPU here (nvidia-smi finds none)", file=sys.stderr)
        return 77
    gpu, driver = [x.strip() for x in smi.stdout.splitlines()[0].split(",")[:2]]
    if sandir is None:
        print("shadow probe: no libsanitizer-public.so (CUDA_HOME/compute-sanitizer, or the "
              "nvidia-cuda-sanitizer-api wheel in .venv)", file=sys.stderr)
        return 2
    missing = [str(p) for p in (PROBE_LIB, PROBE_PATCHES, PROBE_PROGRAM) if not p.exists()]
    if missing:
        print(f"shadow probe: not built: {', '.join(missing)} (make shadow-probe, on the CPU machine)", file=sys.stderr)
        return 2
    lines = [f"# The Sanitizer API probe on the {gpu}", "",
             f"Driver {driver}; libsanitizer-public.so from `{sandir}`; patches "
             f"`{PROBE_PATCHES.relative_to(REPO)}`; every instrumentation point (1..40) patched in every module "
             "with a counting function (common/shadow/tool/probe_patches.cu). Written by "
             "`python3 tools/shadow_probe.py run` (the raw text of each run is in raw/).", ""]
    failed = False
    totals: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    summary = ["| program | exit alone | exit under the probe | s alone | s under the probe | how injected |",
               "| --- | --- | --- | --- | --- | --- |"]
    details: list[str] = []
    start = time.monotonic()
    for label, binary, args in program_list(a.only):
        if time.monotonic() - start > a.budget:
            summary.append(f"| {label} | left out: the budget of {a.budget} s was spent | | | | |")
            failed = True
            continue
        if not binary.exists():
            summary.append(f"| {label} | not built | | | | |")
            failed = True
            continue
        code0, t0, _ = run_one([str(binary)] + args, None, a.timeout)
        rawf = raw_dir / (label.replace("/", "_") + ".txt")
        how = "CUDA_INJECTION64_PATH"
        code, t, text = run_one([str(binary)] + args, tool_env(sandir, rawf, None, False), a.timeout)
        if "shadow probe: injected" not in text:
            how = "LD_PRELOAD (the injection path did not load it)"
            code, t, text = run_one([str(binary)] + args, tool_env(sandir, rawf, None, True), a.timeout)
        (raw_dir / (label.replace("/", "_") + ".log")).write_text(text)
        failed |= code != code0 or code != 0
        summary.append(f"| {label} | {code0} | {code} | {t0:.1f} | {t:.1f} | {how} |")
        raw = parse_raw(rawf.read_text()) if rawf.exists() else {"modules": [], "functions": [], "complete": False}
        details.append(f"\n### {label} {' '.join(args)}: exit {code} under the probe ({t:.1f} s; alone {code0}, "
                       f"{t0:.1f} s){'' if raw['complete'] else ' -- the record is incomplete'}\n")
        if code != 0:
            details.append("```\n" + "\n".join(text.splitlines()[-15:]) + "\n```")
        tally = describe(label, raw, sass_of(binary), details, full=label == "probe_kernels")
        for k, (p, s) in tally.items():
            totals[k][0] += p
            totals[k][1] += s
    lines += ["## Runs", ""] + summary + ["", "## Instructions of interest: sites patched by some point / sites in the launched kernels", "",
                                          "| SASS | patched | seen in launched kernels |", "| --- | --- | --- |"]
    for k in sorted(totals):
        lines.append(f"| {k} | {totals[k][0]} | {totals[k][1]} |")
    lines += ["", "## Per program and kernel", ""] + details
    name = "shadow_probe_" + re.sub(r"[^A-Za-z0-9]+", "_", gpu).strip("_") + ".md"
    (out / name).write_text("\n".join(lines) + "\n")
    print(f"shadow probe: {out / name}; {'a run failed (see the record)' if failed else 'every run finished'}")
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--only", default=None, help="only the steps whose folder starts with this (the probe program always)")
    r.add_argument("--timeout", type=int, default=120, help="seconds one run may take")
    r.add_argument("--budget", type=int, default=540, help="seconds after which no run is started")
    a = ap.parse_args()
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
