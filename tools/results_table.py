"""Regenerate every result table from results/*.csv, so no number is typed.

    python3 tools/results_table.py          rewrite the tables in place
    python3 tools/results_table.py --check  exit 1 if any table is out of date

Two kinds of generated text, each between HTML comments that Markdown hides:

* README.md, in each step's row of the step table:
      <!-- result:01 -->...<!-- /result -->
  becomes the step's headline PERF (its check.py names it) on the reference
  GPU (the H200), followed by the same line on every other recorded GPU.
* NN_topic/README.md (the lesson):
      <!-- perf-table -->...<!-- /perf-table -->
  becomes a table of every PERF line of that step on the reference GPU, and
      <!-- v:copy_float4.pct -->...<!-- /v -->
  in the prose becomes one value of one PERF line of that step: .pct
  ("100.5 %" of the line's reference, memcpy or cuBLAS), .gbps ("4267.5 GB/s"),
  .tflops ("867.5 TFLOP/s", step 09) or .ms ("0.503 ms").

* NN_topic/README.md:
      <!-- expected:^TIME -->...<!-- /expected -->
  becomes a code block of the lines of NN_topic/expected_output.txt (the
  recorded H200 run) that match the regular expression, and
      <!-- run:bug1:^check -->...<!-- /run -->
  the matching lines of a run `make bench` recorded on the H200
  (results/runs/NVIDIA_H200/NN_topic.bug1.txt; "run::REGEX" is the plain run,
  "run:bug1.shadow:REGEX" the shadow build's run of the same mistake; "N:REGEX" keeps the
  first N matching lines),
  and <!-- file:results/experiments/X.txt:REGEX -->...<!-- /file --> those of
  any recorded file, and <!-- diff:N -->...<!-- /diff --> the planted
  mistake NN_topic/bugs/N.diff itself, as a diff block.
* NN_topic/README.md:
      <!-- spread:NAME,NAME,... -->...<!-- /spread -->
  becomes a table of those PERF lines over every recorded full run of the
  step on each GPU (results/runs/<GPU>/<step>.txt and the repeats of
  `tools/bench.py --repeat N`, <step>.runK.txt): lowest to highest rate and
  percent of the reference, and how many runs.
* README.md's example of a passing run:
      <!-- example-output -->...<!-- /example-output -->
  becomes lines of 01_memcpy_baseline/expected_output.txt (a real H200 run).

A step with no recorded result gets "not yet measured".
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from checker import load_step, parse_perf  # noqa: E402
from contract import REFERENCE_GPU, REPO, check_lines, gpu_slug, perf_csv, read_csv, step_dirs, with_stderr  # noqa: E402
from bench import run_dir  # noqa: E402
import bugs  # noqa: E402

REFERENCE_CSV = perf_csv(REFERENCE_GPU)


def tb_per_s(gbps: str) -> str:
    return f"{float(gbps) / 1000:.2f} TB/s" if float(gbps) >= 1000 else f"{float(gbps):.1f} GB/s"


def rate(r: dict[str, str]) -> str:
    """A row's rate as the tables show it: bandwidth in TB/s (or GB/s), the GEMM's arithmetic in TFLOP/s."""
    return tb_per_s(r["rate"]) if r["unit"] == "GB/s" else f"{float(r['rate']):.0f} {r['unit']}"


REF_NAME = {"memcpy": "memcpy", "cublas": "cuBLAS"}


def headline_cell(step_dir: str, rows: list[dict[str, str]]) -> str:
    step = load_step(step_dir)
    if step.headline.startswith("check:"):
        # A step whose result is correctness (05's layouts): the check lines of
        # its recorded H200 run whose names start with the given prefix.
        prefix = step.headline[len("check:"):]
        path = REPO / step_dir / "expected_output.txt"
        found = [m for m in check_lines(path.read_text() if path.exists() else "") if m["name"].startswith(prefix)]
        if not found:
            return "not yet measured"
        wrong, total = sum(int(m["wrong"]) for m in found), sum(int(m["total"]) for m in found)
        cell = f"`{prefix}*`: {wrong} of {total} elements misplaced ({len(found)} layouts)"
        for run in sorted((REPO / "results" / "runs").glob(f"*/{step_dir}.txt")):  # the other GPUs' recorded runs
            if run.parent.name != gpu_slug(REFERENCE_GPU):
                other = [m for m in check_lines(run.read_text()) if m["name"].startswith(prefix)]
                if other:
                    cell += (f"; {run.parent.name.replace('NVIDIA_', '').replace('_', ' ')}: "
                             f"{sum(int(m['wrong']) for m in other)} of {sum(int(m['total']) for m in other)}")
        return cell
    if step.bench_runs > 1:  # a headline stated as a range: lowest to highest over the recorded runs, per GPU
        cells = []
        for gpu in repeated_runs(step_dir):
            got = range_value(step_dir, step.headline, "pctrange", None if gpu == gpu_slug(REFERENCE_GPU) else gpu)
            if got:
                name = gpu.replace("NVIDIA_", "").replace("_", " ")
                ref = next((REF_NAME[r["reference"]] for r in rows if r["step"] == step_dir), "its reference")
                runs = len(repeated_runs(step_dir)[gpu])
                cells.append(f"`{step.headline}` {got} of {ref} ({runs} {name} runs)" if not cells
                             else f"{name}: {got} ({runs} runs)")
        return "; ".join(cells) if cells else "not yet measured"
    cell = next((f"`{r['name']}` {r['pct']} % of {REF_NAME[r['reference']]} ({rate(r)})" for r in rows
                 if r["step"] == step_dir and r["name"] == step.headline), "not yet measured")
    for path in sorted(REPO.glob("results/*.csv")):  # every other GPU that has a recording
        if path == REFERENCE_CSV or path.name.startswith("ncu_"):
            continue
        other = next((r for r in read_csv(path) if r["step"] == step_dir and r["name"] == step.headline), None)
        if other:
            cell += f"; {other['gpu'].replace('NVIDIA ', '')}: {other['pct']} %"
    return cell


def perf_table(step_dir: str, rows: list[dict[str, str]]) -> str:
    mine = [r for r in rows if r["step"] == step_dir]
    if not mine:
        return "\n_Not yet measured: run `make bench` on an H200._\n"
    r0 = mine[0]
    out = [
        "",
        f"Recorded by `make bench` on {r0['gpu']} (sm_{r0['sm']}), CUDA {r0['cuda']}, driver "
        f"{r0['driver']}, {r0['date']} ([results/{REFERENCE_CSV.name}](../results/{REFERENCE_CSV.name})).",
        "",
        "| part | time | bandwidth | of cudaMemcpy D2D |" if r0["reference"] == "memcpy" else
        "| part | time | arithmetic | of cuBLAS (same problem) |",
        "| --- | ---: | ---: | ---: |",
    ]
    out += [f"| `{r['name']}` | {r['ms']} ms | {r['rate']} {r['unit']} | {r['pct']} % |" for r in mine]
    return "\n".join(out) + "\n"


FIELDS = {"pct": ("pct", "{} %"), "gbps": ("rate", "{} GB/s"), "tflops": ("rate", "{} TFLOP/s"), "ms": ("ms", "{} ms")}


RANGES = {"pctrange": ("pct", "%"), "tflopsrange": ("rate", "TFLOP/s")}


def range_value(step_dir: str, name: str, field: str, gpu: str | None) -> str | None:
    """.pctrange / .tflopsrange: "93.8 to 97.1 %", lowest to highest over every recorded full run of the
    step on the reference GPU (or the GPU whose folder name contains `gpu`); None if none is recorded."""
    runs = {g: paths for g, paths in repeated_runs(step_dir).items()
            if (gpu in g if gpu else g == gpu_slug(REFERENCE_GPU))}
    values = sorted(r[name][RANGES[field][0]] for paths in runs.values() for p in paths
                    for r in [parse_perf(p.read_text())[0]] if name in r)
    if not values:
        return None
    return f"{values[0]:.1f} to {values[-1]:.1f} {RANGES[field][1]}"


def inline_values(step_dir: str, text: str, rows: list[dict[str, str]]) -> str:
    """<!-- v:NAME.FIELD --> -> the reference GPU's number; <!-- v:NAME.FIELD@H100 --> -> the
    number of the recorded GPU whose results file name contains H100 (results/NVIDIA_*H100*.csv).
    .pctrange and .tflopsrange: the range over every recorded run (tools/bench.py --repeat)."""
    mine = {r["name"]: r for r in rows if r["step"] == step_dir}

    def value(m: re.Match) -> str:
        name, field, gpu = m[1], m[2], m[3]
        if field in RANGES:
            tag = f"v:{name}.{field}{'@' + gpu if gpu else ''}"
            got = range_value(step_dir, name, field, gpu)
            return f"<!-- {tag} -->{got if got else '(not measured)'}<!-- /v -->"
        if field not in FIELDS:
            raise SystemExit(f"{step_dir}/README.md: unknown field .{field} in <!-- v:{name}.{field} -->")
        table = mine
        if gpu:
            files = sorted((REPO / "results").glob(f"NVIDIA_*{gpu}*.csv"))
            if len(files) != 1:
                raise SystemExit(f"{step_dir}/README.md: @{gpu} names {len(files)} results files, not one")
            table = {r["name"]: r for r in read_csv(files[0]) if r["step"] == step_dir}
        tag = f"v:{name}.{field}{'@' + gpu if gpu else ''}"
        if name not in table:
            return m[0] if not rows else f"<!-- {tag} -->(not measured)<!-- /v -->"
        column, fmt = FIELDS[field]
        return f"<!-- {tag} -->{fmt.format(table[name][column])}<!-- /v -->"

    return re.sub(r"<!-- v:(\S+?)\.(\w+)(?:@(\w+))? -->.*?<!-- /v -->", value, text, flags=re.S)


def repeated_runs(step_dir: str) -> dict[str, list[pathlib.Path]]:
    """Every recorded full run of a step, by GPU (the reference GPU first)."""
    runs = {}
    for d in sorted((REPO / "results" / "runs").iterdir(), key=lambda d: (d.name != gpu_slug(REFERENCE_GPU), d.name)):
        found = [p for p in [d / f"{step_dir}.txt", *sorted(d.glob(f"{step_dir}.run[0-9]*.txt"))] if p.is_file()]
        if found:
            runs[d.name] = found
    return runs


def spread_tables(step_dir: str, text: str) -> str:
    """<!-- spread:A,B --> -> lines A and B over all recorded runs, per GPU: the range, not one number."""
    def table(m: re.Match) -> str:
        names = m[1].split(",")
        out = ["", "| GPU | runs | part | rate, lowest to highest | of the reference, lowest to highest |",
               "| --- | ---: | --- | ---: | ---: |"]
        for gpu, paths in repeated_runs(step_dir).items():
            perf = [parse_perf(p.read_text())[0] for p in paths]
            for name in names:
                got = [r[name] for r in perf if name in r]
                if not got:
                    raise SystemExit(f"{step_dir}/README.md: <!-- spread:{m[1]} -->: no PERF {name} on {gpu}")
                rates, pcts = sorted(r["rate"] for r in got), sorted(r["pct"] for r in got)
                out.append(f"| {gpu.replace('_', ' ')} | {len(got)} | `{name}` | {rates[0]:.1f} to {rates[-1]:.1f} "
                           f"{got[0]['unit']} | {pcts[0]:.1f} to {pcts[-1]:.1f} % of {got[0]['ref']} |")
        return f"<!-- spread:{m[1]} -->" + "\n".join(out) + "\n<!-- /spread -->"

    return re.sub(r"<!-- spread:(\S+?) -->.*?<!-- /spread -->", table, text, flags=re.S)


def expected_lines(step_dir: str, text: str) -> str:
    path = REPO / step_dir / "expected_output.txt"
    recorded = path.read_text().splitlines() if path.exists() else []

    def block(m: re.Match) -> str:
        rx = re.compile(m[1])
        lines = [ln for ln in recorded if rx.search(ln)]
        return f"<!-- expected:{m[1]} -->\n```\n" + "\n".join(lines) + "\n```\n<!-- /expected -->"

    return re.sub(r"<!-- expected:(.+?) -->.*?<!-- /expected -->", block, text, flags=re.S)


def recorded_runs(step_dir: str, text: str) -> str:
    """<!-- run:bug1:REGEX --> -> the matching lines of results/runs/<reference GPU>/<step>.bug1.txt."""
    def block(m: re.Match) -> str:
        name = f"{step_dir}.{m[1]}.txt" if m[1] else f"{step_dir}.txt"
        path = run_dir(REFERENCE_GPU) / name
        if not path.exists():
            body = f"(not recorded yet: results/runs/.../{name})"
        else:
            limit, pattern = re.match(r"(?:(\d+):)?(.*)", m[2]).groups()  # "1:REGEX": the first match only
            rx = re.compile(pattern)
            lines = [ln for ln in path.read_text().splitlines() if rx.search(ln)]
            body = "\n".join(lines[:int(limit)] if limit else lines)
        return f"<!-- run:{m[1]}:{m[2]} -->\n```\n{body}\n```\n<!-- /run -->"

    return re.sub(r"<!-- run:([\w.]*):(.+?) -->.*?<!-- /run -->", block, text, flags=re.S)


def planted_diffs(step_dir: str, text: str) -> str:
    """<!-- diff:N --> -> NN_topic/bugs/N.diff as a diff block: the mistake next to its recorded run."""
    def block(m: re.Match) -> str:
        path = REPO / step_dir / "bugs" / f"{m[1]}.diff"
        body = path.read_text().partition("\n--- a/")
        diff = ("--- a/" + body[2]).rstrip("\n") if body[1] else f"(no {step_dir}/bugs/{m[1]}.diff)"
        return f"<!-- diff:{m[1]} -->\n```diff\n{diff}\n```\n<!-- /diff -->"

    return re.sub(r"<!-- diff:(\d+) -->.*?<!-- /diff -->", block, text, flags=re.S)


def recorded_files(text: str) -> str:
    """<!-- file:PATH:REGEX --> -> the lines of the repository file PATH that match REGEX."""
    def block(m: re.Match) -> str:
        path = REPO / m[1]
        rx = re.compile(m[2])
        body = "\n".join(ln for ln in path.read_text().splitlines() if rx.search(ln)) if path.exists() \
            else f"({m[1]} not recorded yet)"
        return f"<!-- file:{m[1]}:{m[2]} -->\n```\n{body}\n```\n<!-- /file -->"

    return re.sub(r"<!-- file:(\S+?):(.+?) -->.*?<!-- /file -->", block, text, flags=re.S)


def csv_tables(text: str) -> str:
    """<!-- csv:results/X.csv -->...<!-- /csv --> becomes that file as a table."""
    def table(m: re.Match) -> str:
        path = REPO / m[1]
        rows = [[*r] for r in csv.reader(path.open())] if path.exists() else []
        if not rows:
            return f"<!-- csv:{m[1]} -->\n_{m[1]} not recorded yet._\n<!-- /csv -->"
        out = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
        out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return f"<!-- csv:{m[1]} -->\n" + "\n".join(out) + "\n<!-- /csv -->"

    return re.sub(r"<!-- csv:(\S+) -->.*?<!-- /csv -->", table, text, flags=re.S)


def replace_between(text: str, start: str, end: str, new: str) -> str:
    rx = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    return rx.sub(lambda _: start + new + end, text)


EXAMPLE_STEP = "01_memcpy_baseline"
EXAMPLE_LINES = re.compile(r"^(==|problem:|check  copy_float4 |GPU|PERF   (cudaMemcpy_D2D|copy_float4) |RESULT)")


def example_output() -> str:
    recorded = (REPO / EXAMPLE_STEP / "expected_output.txt").read_text().splitlines()
    return "\n```\n" + "\n".join(ln for ln in recorded if EXAMPLE_LINES.match(ln)) + "\n```\n"


def shadow_cell(step_dir: str, n: int) -> str:
    """What the shadow build's run of bug n on the H200 (make mutation SHADOW=1) showed."""
    path = run_dir(REFERENCE_GPU) / f"{step_dir}.bug{n}.shadow.txt"
    if not path.is_file():
        return "not recorded"
    first, _, body = path.read_text().partition("\n")
    body = with_stderr(body)  # the checker's tool reports on stderr
    reports = bugs.shadow_rules(body)
    if reports:
        return f"{reports[0]['rule']} {reports[0]['name']}"
    code = first.rsplit("exit ", 1)[-1].strip()
    failed = [m["name"] for m in check_lines(body) if m["verdict"] == "FAIL"]
    cuda = re.search(r"-> (cuda\w+)", body)
    if code == "2" and cuda:
        return f"no rule reported; stopped by a CUDA error ({cuda[1]})"
    return {"0": "no rule reported (exit 0)",
            "1": f"no rule reported; its check `{failed[0]}` fails" if failed else "no rule reported (exit 1)",
            "2": "refused before any launch"}.get(code, f"exit {code}")


def bug_table() -> str:
    """Every planted mistake (NN_topic/bugs/N.diff): what it breaks (the diff's text), what the H200 run did,
    and the rule the shadow build named."""
    out = ["", "| step | `make bug-NN N=` | what it breaks, and how the program tells | H200 run | shadow build |",
           "| --- | --- | --- | --- | --- |"]
    for step_dir in step_dirs():
        texts = bugs.bug_text(step_dir)
        if not texts:
            out.append(f"| {step_dir} | none | (no bug to plant yet) | | |")
        for n, what in texts.items():
            path = run_dir(REFERENCE_GPU) / f"{step_dir}.bug{n}.txt"
            result = "not recorded"
            if path.is_file():
                first, _, body = path.read_text().partition("\n")
                code = first.rsplit("exit ", 1)[-1].strip()
                failed = any(m["verdict"] == "FAIL" for m in check_lines(body))
                result = {"0": "exit 0: hidden on this GPU (a pass that proves nothing)", "1": "exit 1: caught",
                          "2": "exit 2: caught, then a CUDA error ended the run" if failed else
                          "exit 2: refused before any launch"}.get(code, f"exit {code}")
            out.append(f"| {step_dir} | {n} | {what} | {result} | {shadow_cell(step_dir, n)} |")
    return "\n".join(out) + "\n"


LAB_ROWS = ["solution", "comments", "unfilled", "wrong", "edited_checker", "no_build",  # one sample each
            "correct", "bypass", "mistake", "race", "protocol", "paste"]  # a kind: every hole's fills of it
LAB_RESULTS = REPO / "results" / "labs" / gpu_slug(REFERENCE_GPU)


def lab_rule_text(r: dict) -> str:
    """What one hole's rules ask (check.py's lab; tools/lab_rules.py), in words."""
    where = lambda kernel: "every kernel it is in" if kernel == "*" else f"`{kernel}`"  # noqa: E731
    alts = lambda p: " or ".join(f"`{a}`" for a in p.split("|"))  # noqa: E731
    shown = [f"{where(k)}: {', '.join(alts(p) for p in pats)}" for k, pats in r.get("hole", {}).items()]
    shown += [f"{where(k)}: no {', no '.join(alts(p) for p in pats)}" for k, pats in r.get("hole_absent", {}).items()]
    shown += [f"{where(k)}: {alts(b)} between a `{s}` and each `{a}` after it" for k, rules in
              r.get("hole_order", {}).items() for a, b, s in rules]
    shown += [f"{where(k)}: loads that are not all its own stores read back (the data cross threads)"
              for k in r.get("exchange", [])]
    groups: dict[str, list[str]] = {}  # the kernels' SASS: what is shown -> the kernels that must show it
    for kernel, pats in r.get("sass", {}).items():
        groups.setdefault(", ".join(f"`{p}`" for p in pats), []).append(kernel)
    for kernel, pats in r.get("sass_absent", {}).items():
        groups.setdefault("no " + ", no ".join(f"`{p}`" for p in pats), []).append(kernel)
    for kernel, counts in {**r.get("sass_count", {}), **r.get("ptx_count", {})}.items():
        groups.setdefault(", ".join(f"{n} x `{p}`" for p, n in counts.items()), []).append(kernel)
    shown += [", ".join(f"`{kk}`" for kk in kernels) + " (machine code): " + what for what, kernels in groups.items()]
    if r.get("build_log_absent"):
        shown.append("no ptxas advisory: " + ", ".join(f"`{p}`" for p in r["build_log_absent"]))
    if r.get("perf"):
        shown.append("the floors of " + ", ".join(f"`{p}`" for p in r["perf"]))
    return "; ".join(shown)


def lab_mechanism_table() -> str:
    """Each lab hole's rules (check.py's lab) and what it teaches."""
    out = ["", "| hole | what the hole's own code must hold (PTX, in the kernels named) | it teaches |",
           "| --- | --- | --- |"]
    for step_dir in step_dirs():
        for k, r in sorted(load_step(step_dir).lab.items()):
            out.append(f"| {step_dir[:2]}.{k} | {lab_rule_text(r)} | {r['teaches']} |")
    return "\n".join(out) + "\n"


def lab_class_table() -> str:
    """The sample class of every lab (tools/lab_samples.py) as graded on the reference GPU: per step, the verdict
    of each sample, or of every sample of a kind (the holes' fills: tools/lab_fills.py)."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(LAB_RESULTS.glob("grades_[0-9][0-9].csv")):
        for r in csv.DictReader(path.open()):
            row = r["student"] if r["student"] in LAB_ROWS[:6] else r["student"].split("_")[0]
            found.setdefault((r["step"], row), []).append(r["verdict"])
    if not found:
        return "\n_not recorded yet_\n"
    steps = sorted({s for s, _ in found})

    def cell(verdicts: list[str]) -> str:
        return ", ".join(f"{v}{f' x {verdicts.count(v)}' if verdicts.count(v) > 1 else ''}" for v in dict.fromkeys(verdicts))
    out = ["", "| sample | " + " | ".join(s[:2] for s in steps) + " |", "| --- |" + " --- |" * len(steps)]
    for row in LAB_ROWS:
        out.append(f"| `{row}` | " + " | ".join(cell(found[(s, row)]) if (s, row) in found else "n/a" for s in steps) + " |")
    return "\n".join(out) + "\n"


READ_WPM = 150  # words a minute through a lesson, its code and tables included


def reading_time(text: str) -> str:
    """<!-- reading-time --> of a lesson: minutes for its core path (to the first "Going further") and for all
    of it, from its words (the block's own left out)."""
    text = replace_between(text, "<!-- reading-time -->", "<!-- /reading-time -->", "")
    lines, fenced, core = text.splitlines(), False, None
    for i, ln in enumerate(lines):
        fenced = fenced != ln.startswith("```")
        if not fenced and ln.startswith("## Going further") and core is None:
            core = "\n".join(lines[:i])
    core_min, all_min = (round(len(t.split()) / READ_WPM) for t in (core or text, text))
    return f"*Reading time: the core path about {core_min} minutes, the whole lesson about {all_min}.*"


def render() -> dict[pathlib.Path, str]:
    rows = read_csv(REFERENCE_CSV)
    steps = step_dirs()
    files: dict[pathlib.Path, str] = {}
    readme = REPO / "README.md"
    text = readme.read_text()
    for step_dir in steps:
        nn = step_dir[:2]
        text = replace_between(text, f"<!-- result:{nn} -->", "<!-- /result -->", headline_cell(step_dir, rows))
    text = replace_between(text, "<!-- bug-table -->", "<!-- /bug-table -->", bug_table())
    files[readme] = replace_between(text, "<!-- example-output -->", "<!-- /example-output -->", example_output())
    for step_dir in steps:
        lesson = REPO / step_dir / "README.md"
        if lesson.exists():
            text = replace_between(lesson.read_text(), "<!-- perf-table -->", "<!-- /perf-table -->",
                                   perf_table(step_dir, rows))
            text = inline_values(step_dir, text, rows)
            text = planted_diffs(step_dir, recorded_runs(step_dir, expected_lines(step_dir, text)))
            text = spread_tables(step_dir, text)
            text = replace_between(text, "<!-- reading-time -->", "<!-- /reading-time -->", reading_time(text))
            files[lesson] = csv_tables(recorded_files(text))
    student = REPO / "labs" / "STUDENT.md"
    files[student] = recorded_files(student.read_text())
    labs = REPO / "labs" / "README.md"
    text = replace_between(labs.read_text(), "<!-- lab-mechanism-table -->", "<!-- /lab-mechanism-table -->",
                           lab_mechanism_table())
    files[labs] = recorded_files(replace_between(text, "<!-- lab-class-table -->", "<!-- /lab-class-table -->",
                                                 lab_class_table()))
    notes = REPO / "results" / "experiments" / "NOTES.md"  # the lessons' experiment logs quote recorded files too
    if notes.exists():
        files[notes] = csv_tables(recorded_files(notes.read_text()))
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description="Regenerate the result tables from results/.")
    ap.add_argument("--check", action="store_true", help="only report tables that are out of date")
    a = ap.parse_args()
    stale = []
    for path, text in render().items():
        if path.read_text() != text:
            stale.append(path.relative_to(REPO))
            if not a.check:
                path.write_text(text)
    if a.check and stale:
        print("out of date (run `make results-table`): " + ", ".join(map(str, stale)))
        return 1
    print(("updated: " + ", ".join(map(str, stale))) if stale and not a.check else "result tables up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
