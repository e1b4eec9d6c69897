"""Rules for step 04_tma_store (`make check-04`): data only; tools/checker.py reads them.

Floors are fractions of cudaMemcpy device-to-device measured in the same run,
about 90 % of the lowest value the H200 and the H100 recorded (results/; a
test keeps each between 70 and 100 % of it). copy_tma's floor keeps the TMA
copy within a few percent of cudaMemcpy. perf_order holds the lesson's
claims about persistent copies: a dynamic schedule beats a fixed share.
The SASS shows the two bulk waits apart: the full wait (wait_group N) is
DEPBAR.LE followed by CCTL.IVALL; the .read form is DEPBAR.LE alone.
"""

perf_floors = {
    "cudaMemcpy_D2D": 1.00,
    "copy_ldg": 0.97,  # step 01's copy_float4 reached 100.6 % (H200) and 100.5 % (H100)
    "copy_tma": 0.97,
    "copy_tma_persistent": 0.801,
    "copy_tma_persistent_strided": 0.818,
    "copy_tma_persistent_dynamic": 0.878,
    "copy_tma_ring": 0.876,
    "copy_bulk_ring": 0.879,
}
headline = "copy_tma"
perf_order = [
    ("copy_tma", "copy_tma_persistent"),
    ("copy_tma_persistent_dynamic", "copy_tma_persistent"),
    ("copy_tma_persistent_dynamic", "copy_tma_persistent_strided"),
]
sass = {
    "copy_ldg": ["LDG.E.128[.CONSTANT]", "STG.E.128"],
    "add_one": ["UTMALDG.2D", "UTMASTG.2D", "UTMACMDFLUSH", "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S",
                "DEPBAR.LE SB0, 0x0 + CCTL.IVALL"],
    "fence_probe": ["UBLKCP.G.S", "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S", "DEPBAR.LE SB0, 0x0 + CCTL.IVALL"],
    "bulk_store_kernel": ["UBLKCP.G.S", "UTMACMDFLUSH", "DEPBAR.LE SB0, 0x0", "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S"],
    "tma_copy": ["UTMALDG.2D", "UTMASTG.2D", "UTMACMDFLUSH", "DEPBAR.LE SB0, 0x1", "DEPBAR.LE SB0, 0x0 + CCTL.IVALL"],
    "copy_ring<false>": ["UTMALDG.2D", "UTMASTG.2D", "ELECT", "DEPBAR.LE SB0, 0x1", "SYNCS.ARRIVE.TRANS64*"],
    "copy_ring<true>": ["UBLKCP.S.G", "UBLKCP.G.S", "ELECT", "DEPBAR.LE SB0, 0x1", "SYNCS.ARRIVE.TRANS64*"],
}
sass_absent = {
    "bulk_store_kernel": ["CCTL.IVALL"],  # its only wait is wait_group.read
    "tma_copy": ["DEPBAR.LE SB0, 0x1 + CCTL.IVALL"],  # the .read wait in the loop
    "copy_ring<false>": ["DEPBAR.LE SB0, 0x1 + CCTL.IVALL"],  # the storer's .read wait
    "copy_ring<true>": ["DEPBAR.LE SB0, 0x1 + CCTL.IVALL"],
}
sass_count = {
    # two proxy fences: after the threads' additions (before the store) and
    # after poison_smem (before the reload); the second alone must not pass
    "add_one": {"FENCE.VIEW.ASYNC.S": 2},
    # the .read wait in the loop, then one full wait at the end
    "fence_probe": {"DEPBAR.LE SB0, 0x0 + CCTL.IVALL": 1, "DEPBAR.LE SB0, 0x0": 2},
}

# Every fence, release, acquire and cluster barrier, counted per kernel: in the PTX
# (fences) and in the SASS (sass_fences; fence.mbarrier_init leaves none on sm_90a).
# Dropping one changes a count even where the hardware hides it. After a deliberate
# change: python3 tools/sass.py 04_tma_store --pins
fences = {
    "add_one": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 2, "membar.gl": 2},
    "bulk_store_kernel": {"fence.proxy.async.shared::cta": 1},
    "copy_ring<false>": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 2},
    "copy_ring<true>": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 2},
    "fence_probe": {"fence.proxy.async.shared::cta": 1},
    "tma_copy": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 1},
}
sass_fences = {
    "add_one": {"FENCE.VIEW.ASYNC.S": 2, "MEMBAR.SC.GPU": 2},
    "bulk_store_kernel": {"FENCE.VIEW.ASYNC.S": 1},
    "copy_ring<false>": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 2},
    "copy_ring<true>": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 2},
    "fence_probe": {"FENCE.VIEW.ASYNC.S": 1},
    "tma_copy": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 1},
}

# The order of every proxy fence, read wait and wgmma wait in the machine code
# (tools/sass.py, check_order), not only their counts: a proxy fence after the
# threads' last shared store and before the barrier that hands the buffer to
# the copy engine; a read wait with its exact count between a store that read
# a buffer and the writes that reuse it.
sass_order = {
    "add_one": [{"anchor": "UTMASTG.2D", "before": ["BAR.SYNC*", "FENCE.VIEW.ASYNC.S"], "stop": "STS*"}],
    "bulk_store_kernel": [{"anchor": "UBLKCP.G.S", "before": ["BAR.SYNC*", "FENCE.VIEW.ASYNC.S"], "stop": "STS*"}],
    "fence_probe": [
        {"anchor": "UBLKCP.G.S", "before": ["FENCE.VIEW.ASYNC.S"], "stop": "STS*"},
        # the next round rewrites buf: the store must have read it (wait_group.read 0)
        {"anchor": "UBLKCP.G.S", "after_it": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x0"])], "stop": "STS*"},
    ],
    # a stage is reloaded once the store before the newest has read it (wait_group.read 1)
    "tma_copy": [{"anchor": "UTMALDG.2D", "from": "UTMASTG.2D", "before": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x1"])],
                  "stop": "UTMASTG.2D"}],
    # ... and handed back to the producer only then (the producer's own arrive,
    # "no more", sits after the storer's final full wait in the listing: 0x0)
    "copy_ring<false>": [{"anchor": "SYNCS.ARRIVE.TRANS64.A1T0", "from": "UTMASTG.2D",
                          "before": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x1", "DEPBAR.LE SB0, 0x0"])],
                          "stop": "UTMASTG.2D"}],
    "copy_ring<true>": [{"anchor": "SYNCS.ARRIVE.TRANS64.A1T0", "from": "UBLKCP.G.S",
                         "before": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x1", "DEPBAR.LE SB0, 0x0"])],
                         "stop": "UBLKCP.G.S"}],
}

# The lab holes (tools/lab.py grade; tools/lab_rules.py says what each key means): for
# each hole NN.k, what its fill must show: "hole", what the hole's own code holds in
# PTX, in every kernel it is compiled into ("*"), so that a helper, a rolled loop or
# raw PTX passes as the wrappers do; "perf", the PERF lines graded, only where the
# hole is about speed (no other floor is the student's). A fill that passes the run
# without what the hole teaches is graded MECHANISM.
# 04.1 is one TMA store; the read wait before a stage is reloaded follows it.
lab = {
    1: {"teaches": "the stage goes back with a TMA store through the output's map",
        "hole": {"*": ["cp.async.bulk.tensor.2d.global.shared::cta"]}},
}
