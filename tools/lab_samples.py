"""A class of known submissions per step, to prove the grader before trusting it with students.

    python3 tools/lab_samples.py 03 04 06 --out build/sample_class     (or: all)

writes build/sample_class/03_tma_load/<sample>/03_tma_load/..., each a student folder; then
`make grade-class NN=03 DIR=build/sample_class/03_tma_load` must give each sample its verdict:

    solution        PASS        every hole filled with the solution's lines
    unfilled        UNFILLED    the copy as handed out
    wrong           FAIL        one hole filled with a plausible mistake (the run shows it)
    edited_checker  EDITED      the wrong fill, with check.py and expected_output.txt edited to accept it
    no_build        NO-BUILD    the solution with a line that does not compile in a hole
    bypass          MECHANISM   a fill that gets the right output without what the hole teaches
    protocol        RACE or     a fill whose output comes out right on the hardware, but which breaks a
                    PROTOCOL    rule a sanitizer or the shadow build names
    paste           (recorded)  the neighbouring code a student would paste into the hole, as it stands

A step lists `bypass` and `protocol` only where its hole allows one (NOT_POSSIBLE says why not: a hole
whose only way to global memory is a tensor map has no bypass, and one TMA instruction has no protocol to
get wrong inside the hole). Without a GPU the verdicts that need no run are final (unfilled, edited_checker,
no_build and bypass, and a paste that does not build or lacks the mechanism); the others are SKIP, never
PASS (results/labs/CPU/). This file quotes solutions, so the student bundle does not ship it (the leak
test checks).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lab  # noqa: E402
from contract import REPO, step_dirs  # noqa: E402

# A plausible wrong fill of one hole per step: (the solution's line, the student's line).
WRONG = {
    "01_memcpy_baseline": ("out[base + k * THREADS + partner] = tile[k * THREADS + partner];",
                           "out[base + k * THREADS + partner] = tile[k * THREADS + threadIdx.x];"),
    "02_cp_async": ("float4* dst = stage + (ahead % STAGES) * TILE4;", "float4* dst = stage + (i % STAGES) * TILE4;"),
    "03_tma_load": ("tma_load_2d(dst, map, col0, row0, bar);", "tma_load_2d(dst, map, row0, col0, bar);"),
    "04_tma_store": ("(int32_t)(box * COPY_BOX_ROWS)", "(int32_t)box"),
    "05_swizzle": ("SWIZZLE_MODE_128B, t, k, 4, 128)", "SWIZZLE_MODE_64B, t, k, 4, 128)"),
    "06_transpose": ("tma_store_2d(out_map, r0, c0, t);", "tma_store_2d(out_map, c0, r0, t);"),
    "07_reduce_multicast": ("tma_reduce_2d<OP>(&map, (int32_t)c0, (int32_t)r0, box);",
                            "tma_reduce_2d<OP>(&map, (int32_t)r0, (int32_t)c0, box);"),
    "08_descriptor_update": ("tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld * 4);",
                             "tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld);"),
    "09_gemm": ("accumulate || s > 0);", "accumulate);"),
    "10_grouped_gemm": ("tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);",
                        "tmap_replace_address(&edit->b, p.b + (size_t)g * p.n);"),
}

# Whole fills of one hole, {step: {sample: (hole k, its lines)}}: the hole's solution replaced by these.
FILLS = {
    "01_memcpy_baseline": {
        # straight from global memory: the right output, and nothing staged (no STS, LDS or barrier)
        "bypass": (1, """const unsigned partner = threadIdx.x ^ 32;
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS)
    for (int k = 0; k < B; ++k) out[base + k * THREADS + partner] = in[base + k * THREADS + partner];"""),
        # both barriers, but side by side: nothing orders a tile's reads before the next tile's stores. The race
        # shows in the data on the H200 (FAIL, 128 of 268435456 wrong); a run it spares is racecheck's (RACE).
        # No 01 fill is known whose race the data never show: the issue's, the first barrier alone, is MECHANISM
        # (one BAR.SYNC, the rule wants two; tests/test_labs.py), and with the second barrier moved after the loop
        # (two BAR.SYNC) it failed on the H200 too (staged_batched: 512 of 268435456 wrong)
        "protocol": (1, """__shared__ float4 tile[B * THREADS];
const unsigned partner = threadIdx.x ^ 32;
for (size_t base = (size_t)blockIdx.x * B * THREADS; base < n4; base += (size_t)gridDim.x * B * THREADS) {
    for (int k = 0; k < B; ++k) tile[k * THREADS + threadIdx.x] = in[base + k * THREADS + threadIdx.x];
    __syncthreads();
    __syncthreads();
    for (int k = 0; k < B; ++k) out[base + k * THREADS + partner] = tile[k * THREADS + partner];
}"""),
        # copy_gridstride's body, the nearest neighbour: a copy, not a staged one
        "paste": (1, """size_t stride = (size_t)gridDim.x * blockDim.x;
for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) out[i] = in[i];"""),
    },
    "02_cp_async": {
        # the tile through registers: LDG + STS, no cp.async
        "bypass": (1, """const size_t ahead = i + STAGES - 1;
if (ahead < mine) {
    const float4* src = in + (first + ahead) * TILE4;
    float4* dst = stage + (ahead % STAGES) * TILE4;
#pragma unroll
    for (int j = 0; j < VEC; ++j) dst[j * THREADS + t] = src[j * THREADS + t];
}"""),
        # the prologue's lines, s renamed: every tile into its own slot, past the STAGES the buffer holds
        "paste": (1, """const size_t ahead = i + STAGES - 1;
if ((size_t)ahead < mine) {
    const float4* src = in + (first + ahead) * TILE4;
#pragma unroll
    for (int j = 0; j < VEC; ++j)
        cp_async_cg16(&stage[ahead * TILE4 + j * THREADS + t], &src[j * THREADS + t]);
}"""),
    },
    "03_tma_load": {
        # a plain arrive: the barrier no longer counts the box's bytes
        "bypass": (1, """mbar_arrive(bar);
tma_load_2d(dst, map, col0, row0, bar);
(void)bytes;"""),
        # reuse_one_barrier's two lines, as they stand there
        "paste": (1, """mbar_arrive_expect_tx(&bar, bytes);
tma_load_2d(box, &map, reuse_col0(t, tiles_x), reuse_row0(t, tiles_x), &bar);"""),
    },
    "04_tma_store": {
        # copy_ring<false>'s store before it went through store_box
        "paste": (1, """tma_store_2d(&out_map, 0, (int32_t)(box * COPY_BOX_ROWS), stage + s * COPY_BOX_WORDS);"""),
    },
    "05_swizzle": {
        # the tile is position-coded: its value computed, nothing read where the TMA put it
        "bypass": (1, """(void)swz;
(void)swz_base;
return (float)(t * 32 + k);"""),
        # the unswizzled index of part 5's plain tile: the row-major place, not where the TMA put it
        "paste": (1, """return swz[t * 32 + k];
(void)swz_base;"""),
    },
    "06_transpose": {
        # tma_swizzle_batched's store before it went through store_transposed, b = 0
        "paste": (1, """tma_store_2d(&out_map, r0, c0 + 0 * TILE, t + 0 * TILE * TILE);"""),
    },
    "07_reduce_multicast": {
        # every CTA loads the whole tile itself: the right sums, and no multicast
        "bypass": (2, """(void)slice;
tma_load_2d(dst - rank * slice_rows * BT_COLS, &map, 0, (int32_t)row0, &full[s]);"""),
        # the split-K reduce's line, as it stands there
        "paste": (1, """tma_reduce_2d<SPLITK_OP>(&map, (int32_t)(tile % tiles_c * RT_COLS), (int32_t)(tile / tiles_c * RT_ROWS), box);"""),
    },
    "08_descriptor_update": {
        # the global path with its acquires before its release: the counts are right, the order is not
        "protocol": (2, """tmap_replace_address_global(&slots[0], p->src + g->offset);
tmap_replace_address_global(&slots[1], p->dst + g->offset);
for (int k = 0; k < 2; ++k) {
    tmap_replace_dim_global<0>(&slots[k], g->cols);
    tmap_replace_dim_global<1>(&slots[k], g->rows);
    tmap_replace_stride_global<0>(&slots[k], (uint64_t)g->ld * 4);
}
tmap_acquire_gpu(&slots[0]);
tmap_acquire_gpu(&slots[1]);
tmap_release_gpu();"""),
        # field_probe's edits, names as they stand there
        "paste": (1, """tmap_replace_address(m, p->new_base);
tmap_replace_dim<0>(m, p->new_value);"""),
    },
    "09_gemm": {
        # no wgmma.fence: the output is right (ptxas inserts one), and ptxas says so
        "bypass": (1, """const uint64_t da = smem_desc_sw128(a_rows), db = smem_desc_sw128(b_rows);
#pragma unroll
for (uint32_t s = 0; s < BK / K_STEP; ++s) wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, accumulate || s > 0);
wgmma_commit_group();"""),
        # the commit left out: the consumer's wait_group has no group to wait for
        "protocol": (1, """const uint64_t da = smem_desc_sw128(a_rows), db = smem_desc_sw128(b_rows);
wgmma_fence();
#pragma unroll
for (uint32_t s = 0; s < BK / K_STEP; ++s) wgmma_m64n256k16_bf16(d, da + 2 * s, db + 2 * s, accumulate || s > 0);"""),
    },
}
FILLS["10_grouped_gemm"] = {
    # the pair edited in place in global memory (08's global path): the right output, and no edit in shared
    # memory, no cp_fenceproxy
    "bypass": (1, """if (lane == 0 && last != 0xFFFFFFFFu)
    for (uint32_t q = pos > STAGES ? pos - STAGES : 0; q <= last && landed; ++q)
        landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
if (lane == 0) {
    for (int w = 0; w < 8; ++w) {
        ((uint4*)&pair[0])[w] = ((const uint4*)&edit->a)[w];
        ((uint4*)&pair[1])[w] = ((const uint4*)&edit->b)[w];
    }
    tmap_replace_address_global(&pair[0], p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim_global<1>(&pair[0], first_row[g + 1] - first_row[g]);
    tmap_replace_address_global(&pair[1], p.b + (size_t)g * p.n * p.ld_ab);
    tmap_release_gpu();
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}"""),
    # every instruction of the solution, the acquires before the copies that release the new maps: the TMA
    # may use the old ones
    "protocol": (1, """if (lane == 0 && last != 0xFFFFFFFFu)
    for (uint32_t q = pos > STAGES ? pos - STAGES : 0; q <= last && landed; ++q)
        landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
if (lane == 0) {
    tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
    tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
    tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);
    tmap_acquire_gpu(&pair[0]);
    tmap_acquire_gpu(&pair[1]);
}
__syncwarp();
tmap_cp_fenceproxy(&pair[0], &edit->a);
tmap_cp_fenceproxy(&pair[1], &edit->b);"""),
    # the consumers' retarget of their C map (consumer_map), as it stands
    "paste": (1, """if (tid == 0) {
    bulk_wait_group_read<0>();  // every store through the map has read it
    tmap_replace_address(&edit->c[wg], p.batch->c + (size_t)first_row[g] * p.ldc);
    tmap_replace_dim<1>(&edit->c[wg], first_row[g + 1] - first_row[g]);
}
__syncwarp();
tmap_cp_fenceproxy(slot, &edit->c[wg]);
if (tid == 0) tmap_acquire_gpu(slot);"""),
}
# Why a step has no sample of a kind.
NOT_POSSIBLE = {
    ("04_tma_store", "bypass"): "store_box reaches global memory only through the tensor map",
    ("06_transpose", "bypass"): "store_transposed reaches global memory only through the tensor map",
    ("08_descriptor_update", "bypass"): "no other instruction edits a tensor map (its layout is opaque), and the maps "
                                        "the host encodes per group (p->host_ws) are copied to the GPU only before the "
                                        "host-maps part: a fill that copies them into edit[] runs on garbage (illegal "
                                        "instruction on the H200)",
    ("02_cp_async", "protocol"): "the hole only issues copies: its commit, wait and barriers are outside it (make bug-02)",
    ("03_tma_load", "protocol"): "a wrong byte count or a second copy in the hole hangs the wait (FAIL); the parity is outside it",
    ("04_tma_store", "protocol"): "the hole is one TMA store; its waits are outside it",
    ("05_swizzle", "protocol"): "the hole is index arithmetic: nothing asynchronous",
    ("06_transpose", "protocol"): "the hole is one TMA store; its fence and waits are outside it",
    ("07_reduce_multicast", "protocol"): "the holes are one TMA instruction each; the barriers are outside them",
    ("09_gemm", "paste"): "every kernel's MMAs go through mma_stage: no neighbouring code does what the hole does",
}
EXPECTED = {"solution": {"PASS"}, "unfilled": {"UNFILLED"}, "wrong": {"FAIL"}, "edited_checker": {"EDITED"},
            "no_build": {"NO-BUILD"}, "bypass": {"MECHANISM"}, "protocol": {"RACE", "PROTOCOL"}}
NOT_CODE = "this line is not C++;"


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


def filled(solution: str, step: str, fills: dict[int, str] | None = None) -> str:
    """The student copy with every hole filled: with the solution's lines, or for hole k with fills[k]."""
    lines, out, last = solution.splitlines(), [], 0
    for k, (first, end, hint, _, indent) in enumerate(lab.holes(solution), 1):
        out += lines[last:first]
        out.append(f"{indent}// TODO(lab {step[:2]}.{k}): {hint}")
        if fills and k in fills:
            out += [f"{indent}{ln}" if ln.strip() and not ln.startswith("#") else ln for ln in fills[k].splitlines()]
        else:
            out += [ln for ln in lines[first + 1:end] if not lab.STUB.match(ln)]
        last = end + 1
    return "\n".join(out + lines[last:]) + "\n"


def samples(step: str) -> dict[str, str]:
    """{sample name: the student's program}."""
    solution = lab.step_program(step).read_text()
    right = filled(solution, step)
    old, new = WRONG[step]
    hole_text = "".join(right.splitlines(keepends=True)[f] for f, _ in lab.student_copy(solution, step)[1])
    assert hole_text and old in right, f"{step}: WRONG's line is not in the program"
    at = right.index(old, right.index("// TODO(lab "))
    out = {"solution": right, "unfilled": lab.student_text(solution, step), "wrong": right[:at] + new + right[at + len(old):]}
    first_hole_end = right.index("\n", right.index("// TODO(lab ")) + 1
    out["no_build"] = right[:first_hole_end] + NOT_CODE + "\n" + right[first_hole_end:]
    for name, (k, body) in FILLS.get(step, {}).items():
        out[name] = filled(solution, step, {k: body})
    return out


def sample_class(step: str, out: pathlib.Path) -> pathlib.Path:
    folder = out / step
    for name, program in samples(step).items():
        write(folder / name, step, program)
        if name == "wrong":
            write(folder / "edited_checker", step, program, edit_checker=True)
    return folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("steps", nargs="+", help="step numbers or folders, or `all`")
    ap.add_argument("--out", type=pathlib.Path, default=REPO / "build" / "sample_class")
    a = ap.parse_args()
    steps = step_dirs() if a.steps == ["all"] else [lab.step_arg(s) for s in a.steps]
    for s in steps:
        print(f"wrote {sample_class(s, a.out)}: make grade-class NN={s[:2]} DIR={a.out / s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
