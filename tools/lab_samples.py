"""A class of five known submissions per step, to prove the grader before trusting it with students.

    python3 tools/lab_samples.py 03 04 06 --out build/sample_class

writes build/sample_class/03_tma_load/{unfilled,wrong,edited_checker,no_build,solution}/03_tma_load/...,
each a student folder, then `make grade-class NN=03 DIR=build/sample_class/03_tma_load` must give:

    unfilled        UNFILLED  the copy as handed out
    wrong           FAIL      one hole filled with a plausible mistake (WRONG below)
    edited_checker  EDITED    the wrong fill, with check.py and expected_output.txt edited to accept it
    no_build        NO-BUILD  the solution with a line that does not compile in a hole
    solution        PASS      every hole filled with the solution's lines

This file quotes solutions, so the student bundle does not ship it (the leak test checks).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lab  # noqa: E402
from contract import REPO  # noqa: E402

# A plausible wrong fill of one hole per step: (the solution's line, the student's line).
WRONG = {
    "01_memcpy_baseline": ("        out[base + partner] = tile[partner];", "        out[base + partner] = tile[threadIdx.x];"),
    "02_cp_async": ("            float4* dst = stage + (ahead % STAGES) * TILE4;", "            float4* dst = stage + (i % STAGES) * TILE4;"),
    "03_tma_load": ("        mbar_arrive_expect_tx(&bar, bytes);", "        mbar_arrive_expect_tx(&bar, bytes + 16);"),
    "04_tma_store": ("(int32_t)(box_of[s] * COPY_BOX_ROWS)", "(int32_t)box_of[s]"),
    "05_swizzle": ("SWIZZLE_MODE_128B, t, k, 4, 128)", "SWIZZLE_MODE_64B, t, k, 4, 128)"),
    "06_transpose": ("tma_store_2d(out_map, r0, c0, t);", "tma_store_2d(out_map, c0, r0, t);"),
    "07_reduce_multicast": ("tma_reduce_2d<OP>(&map, (int32_t)c0, (int32_t)r0, box);", "tma_reduce_2d<OP>(&map, (int32_t)r0, (int32_t)c0, box);"),
    "08_descriptor_update": ("tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld * 4);", "tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld);"),
}
NOT_CODE = "        this line is not C++;"


def write(folder: pathlib.Path, step: str, program: str, edit_checker: bool = False) -> None:
    """A student folder as a student would hand it in: the whole step folder, one file changed or more."""
    dst = folder / step
    dst.mkdir(parents=True, exist_ok=True)
    for f in lab.step_files(step):
        (dst / f.name).write_text(lab.student_file(f, step))
    (dst / lab.step_program(step).name).write_text(program)
    if edit_checker:  # what a student might try: no floors, and an expected output that is their own run's
        (dst / "check.py").write_text((dst / "check.py").read_text() + "\nperf_floors = {}\n")
        (dst / "expected_output.txt").write_text((dst / "expected_output.txt").read_text().replace("PASS", "FAIL"))


def sample_class(step: str, out: pathlib.Path) -> pathlib.Path:
    solution = lab.step_program(step).read_text()
    right, (old, new) = lab.filled_text(solution, step), WRONG[step]
    first_hole_end = right.index("\n", right.index("// TODO(lab ")) + 1
    # the wrong line goes into the hole that holds it: its first occurrence after a TODO line
    at = min((i for i in (right.find(old, t) for t in range(len(right)) if right.startswith("// TODO(lab ", t))
              if i >= 0), default=-1)
    assert at >= 0, f"{step}: WRONG's line is in no hole"
    wrong = right[:at] + new + right[at + len(old):]
    folder = out / step
    write(folder / "unfilled", step, lab.student_text(solution, step))
    write(folder / "wrong", step, wrong)
    write(folder / "edited_checker", step, wrong, edit_checker=True)
    write(folder / "no_build", step, right[:first_hole_end] + NOT_CODE + "\n" + right[first_hole_end:])
    write(folder / "solution", step, right)
    return folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="+", type=lab.step_arg)
    ap.add_argument("--out", type=pathlib.Path, default=REPO / "build" / "sample_class")
    a = ap.parse_args()
    for s in a.steps:
        print(f"wrote {sample_class(s, a.out)}: make grade-class NN={s[:2]} DIR={a.out / s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
