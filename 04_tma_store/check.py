#!/usr/bin/env python3
"""Checker rules for step 04_tma_store (`make check-04`).

Floors are fractions of cudaMemcpy device-to-device measured in the same run,
below what the H200 recorded (this step's README.md). copy_tma's floor keeps
the TMA copy within a few percent of cudaMemcpy; perf_order holds the
lesson's claim that one-box blocks beat the persistent ring.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))
from checker import Step, run  # noqa: E402

STEP = Step(
    name="04_tma_store",
    perf_floors={
        "cudaMemcpy_D2D": 1.00,
        "copy_tma": 0.97,
        "copy_tma_persistent": 0.80,
    },
    headline="copy_tma",
    perf_order=[("copy_tma", "copy_tma_persistent")],
    sass={
        "add_one": ["UTMALDG.2D", "UTMASTG.2D", "UTMACMDFLUSH", "MEMBAR.ALL.CTA", "FENCE.VIEW.ASYNC.S", "DEPBAR.LE"],
        "bulk_store_kernel": ["UBLKCP.G.S", "UTMACMDFLUSH", "DEPBAR.LE"],
        "tma_copy": ["UTMALDG.2D", "UTMASTG.2D", "UTMACMDFLUSH", "DEPBAR.LE"],
    },
)

if __name__ == "__main__":
    sys.exit(run(STEP))
