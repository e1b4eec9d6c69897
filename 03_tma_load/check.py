#!/usr/bin/env python3
"""Checker rules for step 03_tma_load (`make check-03`).

Floors are fractions of cudaMemcpy device-to-device measured in the same run.
The sums only read, so their bandwidth (bytes read / time) is compared with a
copy's (bytes read + written / time); a pure read can exceed 100 %. On the
H200 the TMA sum did not beat the uint4 loads (the lesson says why we think
so), so no ordering claim is made here.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))
from checker import Step, run  # noqa: E402

STEP = Step(
    name="03_tma_load",
    perf_floors={
        "cudaMemcpy_D2D": 1.00,
        "sum_ldg_uint4": 0.90,
        "sum_tma_4stage": 0.88,
    },
    headline="sum_tma_4stage",
    sass={
        "tile_load": ["UTMALDG.2D", "SYNCS.EXCH.64", "SYNCS.ARRIVE.TRANS64*", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
                      "MEMBAR.ALL.CTA", "FENCE.VIEW.ASYNC.S"],
        "reuse_one_barrier": ["UTMALDG.2D", "SYNCS.CCTL.IV"],
        "reuse_two_barriers": ["UTMALDG.2D"],
        "bulk_copy": ["UBLKCP.S.G"],
        "sum_tma": ["UTMALDG.2D"],
        "sum_ldg": ["LDG.E.128[.CONSTANT]"],
    },
)

if __name__ == "__main__":
    sys.exit(run(STEP))
