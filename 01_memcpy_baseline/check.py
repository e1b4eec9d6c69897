#!/usr/bin/env python3
"""Checker rules for step 01_memcpy_baseline (`make check-01`).

Floors are fractions of cudaMemcpy device-to-device measured in the same run,
set below what the H200 recorded (the table in this step's README.md) so that
a real regression fails and run-to-run noise does not. copy_float4's floor is
the step's promise: a plain float4 copy runs at >= 95 % of cudaMemcpy.
overlap_concurrent's floor fails if the transfer and the kernel stop
overlapping (serialized, the pair would read about 50 %). Host transfers cross
PCIe, so their fractions of an HBM-to-HBM copy are small by nature; their
floors only catch a transfer that fell off a cliff. perf_order holds the
lesson's claims: 16-byte loads beat 4-byte ones, batching beats one load at a
time when one block runs per SM, and the overlap beats the serial pair.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))
from checker import Step, run  # noqa: E402

STEP = Step(
    name="01_memcpy_baseline",
    perf_floors={
        "cudaMemcpy_D2D": 1.00,
        "copy_scalar": 0.55,
        "copy_float4": 0.95,
        "copy_gridstride": 0.85,
        "staged_one": 0.85,
        "staged_batched": 0.80,
        "staged_one_occ1": 0.28,
        "staged_batched_occ1": 0.58,
        "h2d_pageable": 0.001,
        "d2h_pageable": 0.001,
        "h2d_pinned": 0.002,
        "d2h_pinned": 0.002,
        "overlap_serial": 0.30,
        "overlap_concurrent": 0.75,
    },
    headline="copy_float4",
    perf_order=[
        ("copy_float4", "copy_scalar"),
        ("staged_batched_occ1", "staged_one_occ1"),
        ("overlap_concurrent", "overlap_serial"),
    ],
    sass={
        "copy_scalar": ["LDG.E[.CONSTANT]", "STG.E"],
        "copy_float4": ["LDG.E.128[.CONSTANT]", "STG.E.128"],
        "copy_gridstride": ["LDG.E.128[.CONSTANT]", "STG.E.128"],
        "staged_one": ["LDG.E.128[.CONSTANT]", "STS.128", "BAR.SYNC[.DEFER_BLOCKING]", "LDS.128", "STG.E.128"],
        "staged_batched": ["LDG.E.128[.CONSTANT]", "STS.128", "BAR.SYNC[.DEFER_BLOCKING]", "LDS.128", "STG.E.128"],
    },
)

if __name__ == "__main__":
    sys.exit(run(STEP))
