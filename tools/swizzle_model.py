"""The TMA swizzle and the shared-memory bank model, for the notebooks and tests.

The kernels use 05_swizzle/swizzle.h; this is the same formula in Python, the only
Python copy. tests/test_swizzle.py checks that both agree with every layout
recorded on the H200 (05_swizzle/layouts_h200.json).

Swizzle (step 05's lesson derives it): with A the logical absolute shared
address of a byte of a dense row-major box,

    phys(A) = A ^ (((A >> 7) & M) << 4),   M = 0, 1, 3, 7 for none, 32B, 64B, 128B

Banks: 32 banks of 4 bytes; the word at byte address a is in bank (a // 4) % 32.
A shared-memory access takes as many passes ("wavefronts") as the most
distinct words one bank must deliver; the same word read by several threads
is a broadcast. 16-byte accesses are served 8 threads at a time (each group
of 8 covers 128 B = all 32 banks), so their degree is taken per group of 8.
"""

from __future__ import annotations

import json
import pathlib

REPO = pathlib.Path(__file__).resolve().parent.parent
RECORDING = REPO / "05_swizzle" / "layouts_h200.json"
MODES = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


def mask(mode: int) -> int:
    return 0 if mode <= 0 else (1 << mode) - 1


def span(mode: int) -> int:
    return 0 if mode <= 0 else 16 << mode


def period(mode: int) -> int:
    return 16 if mode <= 0 else 128 << mode


def swizzle_address(a: int, mode: int) -> int:
    return a ^ (((a >> 7) & mask(mode)) << 4)


def row_pitch(mode: int, inner_bytes: int) -> int:
    """Bytes between rows of a box in shared memory: the span when swizzled, even for a narrower inner box."""
    return inner_bytes if mode <= 0 else span(mode)


def swizzle_element(base: int, mode: int, row: int, col: int, elem_bytes: int, inner_bytes: int) -> int:
    """Physical element index from `base` of element (row, col) of a box loaded at absolute address `base`."""
    logical = base + row * row_pitch(mode, inner_bytes) + col * elem_bytes
    return (swizzle_address(logical, mode) - base) // elem_bytes


def predicted_layout(base: int, mode: int, rows: int, cols: int, elem_bytes: int, region: int | None = None) -> list[int]:
    """For every physical element of the region the box covers, the logical index the formula puts there (-1: none)."""
    region = region or rows * row_pitch(mode, cols * elem_bytes)
    at = [-1] * (region // elem_bytes)
    for r in range(rows):
        for c in range(cols):
            p = swizzle_element(base, mode, r, c, elem_bytes, cols * elem_bytes)
            if 0 <= p < len(at):
                at[p] = r * cols + c
    return at


def bank(byte_addr: int) -> int:
    return (byte_addr // 4) % 32


def conflict_degree(byte_addrs: list[int], access_bytes: int = 4) -> int:
    """Wavefronts one warp access needs (1 = conflict-free)."""
    group = 8 if access_bytes == 16 else 32
    worst = 1
    for g in range(0, len(byte_addrs), group):
        words_per_bank: dict[int, set[int]] = {}
        for a in byte_addrs[g:g + group]:
            for w in range(a // 4, (a + access_bytes) // 4):
                words_per_bank.setdefault(w % 32, set()).add(w)
        worst = max([worst, *(len(v) for v in words_per_bank.values())])
    return worst


# The warp access patterns of 05_swizzle/swizzle.cu's bank_patterns on a 32 x 32
# float tile (column 0; thread t), plus the 16-byte column of the lesson.
def pattern_addresses(name: str) -> tuple[list[int], int]:
    """(byte addresses of the 32 threads, bytes per access) of a named pattern."""
    if name == "row":
        return [4 * t for t in range(32)], 4
    if name == "column":
        return [128 * t for t in range(32)], 4
    if name == "column_padded":
        return [132 * t for t in range(32)], 4
    if name == "column_swizzled":
        return [4 * swizzle_element(0, 3, t, 0, 4, 128) for t in range(32)], 4
    if name == "float4_column":  # thread t reads row t's first 16-byte chunk
        return [128 * t for t in range(32)], 16
    if name == "float4_column_swizzled":
        return [16 * swizzle_element(0, 3, t, 0, 16, 128) for t in range(32)], 16
    raise KeyError(name)


PATTERNS = ["row", "column", "column_padded", "column_swizzled", "float4_column", "float4_column_swizzled"]


def load_recording(path: pathlib.Path = RECORDING) -> dict:
    return json.loads(path.read_text())
