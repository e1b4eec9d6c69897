#!/usr/bin/env python3
"""Checker rules for step 05_swizzle (`make check-05`).

This step measures no bandwidth: its results are layouts (every element of
every mode, element size and offset where the formula says) and bank-conflict
costs (TIME lines, machine-dependent). The README's result column quotes the
layout checks.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))
from checker import Step, run  # noqa: E402

STEP = Step(
    name="05_swizzle",
    perf_floors={},
    headline="check:layout_",
    sass={
        "raw_load": ["UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT"],
        "bank_patterns": ["UTMALDG.2D", "LDS", "CS2R"],
    },
)

if __name__ == "__main__":
    sys.exit(run(STEP))
