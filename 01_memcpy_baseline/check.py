"""Rules for step 01_memcpy_baseline (`make check-01`): data only; tools/checker.py reads them.

Floors are fractions of cudaMemcpy device-to-device measured in the same run,
about 90 % of the lowest value the H200 and the H100 recorded (results/; a
test keeps each between 70 and 100 % of it), so that a real regression fails
and run-to-run noise does not. copy_float4's floor is the step's promise: a
plain float4 copy runs at >= 95 % of cudaMemcpy. Host transfers cross PCIe,
so their fractions of an HBM-to-HBM copy are small by nature; the pageable
ones also go through the host's own copy, whose speed is the host's (the
H200 machines measured 5.9 to 8.9 GB/s host to device). perf_order
holds the lesson's claims: 16-byte loads beat 4-byte ones, batching beats one
load at a time when one block runs per SM, and the overlap beats the serial
pair.
"""

perf_floors = {
    "cudaMemcpy_D2D": 1.00,
    "copy_scalar": 0.578,
    "copy_scalar_x4": 0.85,
    "copy_float4": 0.95,
    "copy_gridstride": 0.829,
    "staged_one": 0.847,
    "staged_batched": 0.804,
    "staged_one_occ1": 0.315,
    "staged_batched_occ1": 0.621,
    "h2d_pageable": 0.0009,
    "d2h_pageable": 0.0015,
    "h2d_pinned": 0.011,
    "d2h_pinned": 0.011,
    "overlap_serial": 0.456,
    "overlap_concurrent": 0.904,
}
headline = "copy_float4"
perf_order = [
    ("copy_float4", "copy_scalar"),
    ("staged_batched_occ1", "staged_one_occ1"),
    ("overlap_concurrent", "overlap_serial"),
]
sass = {
    "copy_scalar": ["LDG.E[.CONSTANT]", "STG.E"],
    # four 4-byte loads back to back, before the first store: copy_float4's bytes in flight
    "copy_scalar_x4": ["LDG.E[.CONSTANT] + LDG.E[.CONSTANT] + LDG.E[.CONSTANT] + LDG.E[.CONSTANT]", "STG.E"],
    "copy_float4": ["LDG.E.128[.CONSTANT]", "STG.E.128"],
    "copy_gridstride": ["LDG.E.128[.CONSTANT]", "STG.E.128"],
    "staged_one": ["LDG.E.128[.CONSTANT]", "STS.128", "BAR.SYNC[.DEFER_BLOCKING]", "LDS.128", "STG.E.128"],
    "staged_batched": ["LDG.E.128[.CONSTANT]", "STS.128", "BAR.SYNC[.DEFER_BLOCKING]", "LDS.128", "STG.E.128"],
}
sass_absent = {
    "copy_scalar": ["LDG.E.128*", "LDG.E.64*"],  # 4 bytes per thread, nothing wider
    "copy_scalar_x4": ["LDG.E.128*", "LDG.E.64*"],  # 4 bytes per load, nothing wider
}

# The lab holes (tools/lab.py grade; tools/lab_rules.py says what each key means):
# for each hole NN.k, what its fill must show. 01.1 is about speed too (loads
# in flight), so the staged parts' floors and their claim are graded; no other
# line's. The hole's own code stores to and loads from shared memory with a
# barrier between the stores and the loads, and its loads do not all read back
# the slots its own stores wrote (the data cross threads; the output, each
# element from its partner, says so too). The second barrier is a race when
# missing: racecheck's and the shadow build's to judge, not a count's.
lab = {
    1: {"teaches": "the tile crosses threads through shared memory: stores, a __syncthreads() before the partner's "
                   "loads (and one before the next tile's stores), with all B loads of a thread in flight first",
        "perf": ["staged_one", "staged_batched", "staged_one_occ1", "staged_batched_occ1"],
        "hole": {"*": ["st.shared", "ld.shared", "bar.sync|barrier.sync|bar.red|barrier.red"]},
        "hole_order": {"*": [("ld.shared", "bar.sync|barrier.sync|bar.red|barrier.red", "st.shared")]},
        "exchange": ["*"]},
}
