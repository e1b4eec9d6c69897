"""Step 05 on the CPU: the swizzle formula (05_swizzle/swizzle.h in C, and the
Python model) against every element the H200 recorded, and the bank model
against known answers and against ncu's counters."""

import re
import subprocess

import pytest

import swizzle_model as m
from contract import REFERENCE_GPU, read_csv
from ncu_profile import profile_csv

from conftest import REPO, cute_include

REC = m.load_recording()
ALL = REC["layouts"] + REC["narrow_layouts"]


def test_recording_covers_every_mode_size_and_offset():
    cases = {(L["mode"], L["elem_bytes"], L["offset"]) for L in REC["layouts"]}
    for mode in m.MODES:
        for esize in (1, 2, 4, 8):
            assert (mode, esize, 0) in cases
    for offset in (128, 256, 512):
        assert ("128B", 4, offset) in cases
    assert REC["gpu"].startswith(REFERENCE_GPU)


@pytest.mark.parametrize("L", ALL, ids=lambda L: f'{L["mode"]}-{L["elem_bytes"]}B-{L["cols"]}cols-off{L["offset"]}')
def test_python_model_matches_h200(L):
    pred = m.predicted_layout(L["abs_base"], m.MODES[L["mode"]], L["rows"], L["cols"], L["elem_bytes"], L["region"])
    assert pred == L["logical_at"]


def test_narrow_boxes_take_the_full_span():
    # A 32- or 64-byte inner box under a wider swizzle: each row is `span`
    # bytes from the next in shared memory, not packed at its own width.
    assert len(REC["narrow_layouts"]) == 3
    for L in REC["narrow_layouts"]:
        mode, inner = m.MODES[L["mode"]], L["cols"] * L["elem_bytes"]
        assert inner < m.span(mode) and L["region"] == L["rows"] * m.span(mode)
        packed = [-1] * len(L["logical_at"])
        for r in range(L["rows"]):
            for c in range(L["cols"]):
                p = (m.swizzle_address(L["abs_base"] + r * inner + c * 4, mode) - L["abs_base"]) // 4
                if 0 <= p < len(packed):
                    packed[p] = r * L["cols"] + c
        assert packed != L["logical_at"], "read as packed rows the recording would also fit: the test proves nothing"
        unwritten = sum(v == -1 for v in L["logical_at"])
        assert unwritten == len(L["logical_at"]) - L["rows"] * L["cols"]


def test_swizzle_h_matches_h200(tmp_path):
    exe = tmp_path / "unit_swizzle"
    p = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I.", "tests/unit_swizzle.c", "-o",
                        str(exe)], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    cases = "".join(f'{m.MODES[L["mode"]]} {L["elem_bytes"]} {L["abs_base"]} {L["rows"]} {L["cols"]} {L["region"]}\n'
                    for L in ALL)
    run = subprocess.run([str(exe)], input=cases, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    assert len(out) == len(ALL)
    for L, line in zip(ALL, out):
        assert [int(x) for x in line.split()] == L["logical_at"], (L["mode"], L["elem_bytes"], L["offset"])


def test_buffer_relative_indexing_is_wrong_when_unaligned():
    # The recorded notes: aligned to the 1024 B period, relative indexing
    # works; 128/256/512 B off, every element is misplaced.
    for L in REC["layouts"]:
        if L["mode"] != "128B" or L["elem_bytes"] != 4:
            continue
        rel = m.predicted_layout(0, 3, L["rows"], L["cols"], 4)
        wrong = sum(a != b for a, b in zip(rel, L["logical_at"]))
        assert (wrong == 0) == (L["abs_base"] % m.period(3) == 0)
    notes = re.findall(r"offset\s+(\d+): buffer-relative indexing misplaces (\d+) of (\d+)",
                       (REPO / "05_swizzle" / "expected_output.txt").read_text())
    assert [(int(o), int(w)) for o, w, _ in notes] == [(0, 0), (128, 512), (256, 512), (512, 512)]


def test_formula_forms_agree():
    # The bit form and the chunk form (x16 ^ y16 on 16-byte chunks) are the same.
    for a in range(0, 4096, 4):
        x16, y16 = (a >> 4) & 7, (a >> 7) & 7
        chunk_form = (a & ~0x70) | ((x16 ^ y16) << 4)
        assert m.swizzle_address(a, 3) == chunk_form


@pytest.mark.parametrize("pattern,degree", [
    ("row", 1), ("column", 32), ("column_padded", 1), ("column_swizzled", 4),
    ("float4_column", 8), ("float4_column_swizzled", 1),
])
def test_bank_model_known_answers(pattern, degree):
    assert m.conflict_degree(*m.pattern_addresses(pattern)) == degree


def test_bank_model_agrees_with_ncu_and_the_program():
    rows = read_csv(profile_csv("05_swizzle", REFERENCE_GPU))
    assert [r["launch"] for r in rows] == ["row", "column", "column_padded", "column_swizzled"]
    for r in rows:
        assert float(r["wavefronts_per_lds"]) == m.conflict_degree(*m.pattern_addresses(r["launch"]))
    for p in REC["bank"]["patterns"]:
        assert p["model_degree"] == m.conflict_degree(*m.pattern_addresses(p["name"]))


def test_cute_swizzle_is_the_same_function(tmp_path):
    # swizzle.h, the chunk form the PTX ISA draws, and CuTe's Swizzle<B,M,S> agree on every offset of a
    # 64 KiB span, for every mode, in bytes and in bf16/fp32 element units; a wrong B is seen (the control).
    exe = tmp_path / "unit_cute_swizzle"
    p = subprocess.run(["nvcc", "-std=c++17", f"-I{cute_include()}", "-I.", "-Xcompiler", "-Wall,-Wextra",
                        "tests/unit_cute_swizzle.cu", "-o", str(exe)], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    out = dict(ln.split() for ln in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines())
    control = out.pop("control_Swizzle<2,4,3>_as_128B")
    assert len(out) == 7 and all(v == "0" for v in out.values()), out
    assert int(control) > 0, "the comparison cannot tell two swizzles apart"
