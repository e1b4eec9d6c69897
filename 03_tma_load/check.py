"""Rules for step 03_tma_load (`make check-03`): data only; tools/checker.py reads them.

Floors are fractions of cudaMemcpy device-to-device measured in the same run.
The sums only read, so their bandwidth (bytes read / time) is compared with a
copy's (bytes read + written / time); a pure read can exceed 100 %.
The proxy fence is the pair MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S: in this
step's kernels ptxas puts a FENCE.VIEW.ASYNC.S of its own before the mbarrier
inits, and the bounded wait's report has a MEMBAR.ALL.CTA, so neither alone
proves the fence.
"""

perf_floors = {
    "cudaMemcpy_D2D": 1.00,
    "sum_ldg_uint4": 0.929,
    "sum_tma_4stage": 0.89,
    "sum_tma_ring": 0.865,
    "sum_tma_ring_setmaxnreg": 0.861,
    "sum_bulk_ring": 0.936,
    "sum_tma_4stage_l2_64B": 0.89,
    "sum_tma_ring_l2_64B": 0.865,
    "sum_tma_4stage_l2_128B": 0.89,
    "sum_tma_ring_l2_128B": 0.865,
    "sum_tma_4stage_l2_256B": 0.89,
    "sum_tma_ring_l2_256B": 0.865,
}
headline = "sum_tma_4stage"
sass = {
    "tile_load": ["UTMALDG.2D", "SYNCS.EXCH.64", "SYNCS.ARRIVE.TRANS64*", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
                  "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S"],
    "reuse_one_barrier": ["UTMALDG.2D", "SYNCS.CCTL.IV"],
    "reuse_two_barriers": ["UTMALDG.2D"],
    "one_box": ["UTMALDG.2D", "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S"],
    "bulk_copy": ["UBLKCP.S.G", "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S"],
    "sum_tma": ["UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT"],
    "sum_ldg": ["LDG.E.128[.CONSTANT]"],
    "sum_ring<false, false>": ["UTMALDG.2D", "ELECT", "SYNCS.ARRIVE.TRANS64*", "SYNCS.PHASECHK.TRANS64.TRYWAIT"],
    "sum_ring<true, false>": ["UTMALDG.2D", "ELECT", "USETMAXREG.DEALLOC.CTAPOOL", "USETMAXREG.TRY_ALLOC.CTAPOOL"],
    "sum_ring<false, true>": ["UBLKCP.S.G", "ELECT", "SYNCS.ARRIVE.TRANS64*", "SYNCS.PHASECHK.TRANS64.TRYWAIT"],
}
sass_absent = {
    "sum_ring<false, false>": ["USETMAXREG*"],
    "sum_ring<false, true>": ["USETMAXREG*"],
}
sass_count = {
    # one __syncthreads, before the roles split: none in the producer's or the consumers' loop
    "sum_ring<false, false>": {"BAR.SYNC[.DEFER_BLOCKING]": 1},
    "sum_ring<true, false>": {"BAR.SYNC[.DEFER_BLOCKING]": 1},
    "sum_ring<false, true>": {"BAR.SYNC[.DEFER_BLOCKING]": 1},
}

# Every fence, release, acquire and cluster barrier, counted per kernel: in the PTX
# (fences) and in the SASS (sass_fences; fence.mbarrier_init leaves none on sm_90a).
# Dropping one changes a count even where the hardware hides it. After a deliberate
# change: python3 tools/sass.py 03_tma_load --pins
fences = {
    "bulk_copy": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 1, "membar.gl": 1},
    "one_box": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 1, "membar.gl": 1},
    "reuse_one_barrier": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 1, "membar.gl": 1},
    "reuse_two_barriers": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 1, "membar.gl": 1},
    "sum_ring<false, false>": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 2},
    "sum_ring<false, true>": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 2},
    "sum_ring<true, false>": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 2},
    "sum_tma": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 1},
    "tile_load": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 1, "membar.gl": 1},
}
sass_fences = {
    "bulk_copy": {"FENCE.VIEW.ASYNC.S": 2, "MEMBAR.SC.GPU": 1},
    "one_box": {"FENCE.VIEW.ASYNC.S": 2, "MEMBAR.SC.GPU": 1},
    "reuse_one_barrier": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 1},
    "reuse_two_barriers": {"FENCE.VIEW.ASYNC.S": 2, "MEMBAR.SC.GPU": 1},
    "sum_ring<false, false>": {"FENCE.VIEW.ASYNC.S": 8, "MEMBAR.SC.GPU": 2},
    "sum_ring<false, true>": {"FENCE.VIEW.ASYNC.S": 8, "MEMBAR.SC.GPU": 2},
    "sum_ring<true, false>": {"FENCE.VIEW.ASYNC.S": 8, "MEMBAR.SC.GPU": 2},
    "sum_tma": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 1},
    "tile_load": {"FENCE.VIEW.ASYNC.S": 2, "MEMBAR.SC.GPU": 1},
}

# The order of the proxy fences in the machine code (tools/sass.py, check_order), not
# only their count: a box poisoned by the threads (poison_smem) reaches the TMA's
# writes only through fence.proxy.async (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S) after the
# last poison store and before the barrier that hands the box to the thread that loads
# it. Nearest first, backward from each load: the barrier, then the fence, with no
# shared store between them (a fence before the stores, or after the barrier in the
# loading thread only, leaves the poison racing the load). The FENCE.VIEW.ASYNC.S of
# fence.mbarrier_init does not count: the fence's own MEMBAR.ALL.CTA is the step.
_POISON_FENCE = {"before": ["BAR.SYNC*", "MEMBAR.ALL.CTA"], "stop": "STS*"}
sass_order = {
    **{k: [{"anchor": "UTMALDG.2D", **_POISON_FENCE}]
       for k in ("tile_load", "reuse_one_barrier", "reuse_two_barriers", "one_box")},
    "bulk_copy": [{"anchor": "UBLKCP.S.G", **_POISON_FENCE}],
}

# The lab holes (tools/lab.py grade; tools/lab_rules.py says what each key means): for
# each hole NN.k, what its fill must show: "hole", what the hole's own code holds in
# PTX, in every kernel it is compiled into ("*"), so that a helper, a rolled loop or
# raw PTX passes as the wrappers do; "perf", the PERF lines graded, only where the
# hole is about speed (no other floor is the student's). A fill that passes the run
# without what the hole teaches is graded MECHANISM.
# 03.1 arms the barrier with a byte count (arrive.expect_tx, or expect_tx and an arrive)
# and loads with the TMA; a plain arrive counts no bytes.
lab = {
    1: {"teaches": "one TMA load of the box, on a barrier armed with its byte count (mbarrier expect_tx)",
        "hole": {"*": ["mbarrier.arrive.expect_tx|mbarrier.expect_tx", "cp.async.bulk.tensor"]}},
}
