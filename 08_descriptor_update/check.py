"""Rules for step 08_descriptor_update (`make check-08`): data only; tools/checker.py reads them.

Floors are fractions of cudaMemcpy device-to-device measured in the same run,
90 % of the lowest value the H200 and the H100 recorded (results/; a test
keeps each between 70 and 100 % of it). No ordering claim: the four copies
(maps retargeted in shared memory, in global memory, written by the host,
address only) run within a few percent of each other, which is the lesson's
point: where the map is edited does not show in the copy's speed.
"""

perf_floors = {
    "cudaMemcpy_D2D": 1.00,
    "grouped_copy_ldg": 0.7845,
    "grouped_copy": 0.788,
    "grouped_copy_global": 0.783,
    "host_maps": 0.774,
    "array_copy_ldg": 0.7599,
    "array_copy": 0.784,
}
headline = "grouped_copy"
sass = {
    # replace in shared memory is a shared store; cp_fenceproxy is 32 lanes' atomic exchanges (128 bytes);
    # the acquire invalidates the TMA's cached descriptor
    "grouped_copy<0>": ["STS.64", "ATOMG.E.EXCH.STRONG.GPU", "UTMACCTL.IV", "UTMALDG.2D", "UTMASTG.2D"],
    "grouped_copy<1>": ["MEMBAR.ALL.GPU + ERRBAR + CGAERRBAR", "UTMACCTL.IV", "UTMALDG.2D", "UTMASTG.2D"],
    "grouped_copy<2>": ["UTMACCTL.IV", "UTMALDG.2D", "UTMASTG.2D"],
    "update_cost": ["STS.64", "ATOMG.E.EXCH.STRONG.GPU", "UTMACCTL.IV", "UTMACCTL.PF", "UTMALDG.2D"],
    "field_probe": ["ATOMG.E.EXCH.STRONG.GPU", "UTMACCTL.IV", "UTMALDG.3D", "UTMALDG.2D"],
    "cross_cta": ["ATOMG.E.EXCH.STRONG.GPU", "STG.E.STRONG.GPU", "LDG.E.STRONG.GPU", "UTMACCTL.IV"],
}
sass_absent = {
    # the global path publishes with a fence, not with cp_fenceproxy's exchanges (two in a row: one per map;
    # the single exchange elsewhere is the bounded wait's report)
    "grouped_copy<1>": ["ATOMG.E.EXCH.STRONG.GPU + ATOMG.E.EXCH.STRONG.GPU"],
}
profile = {
    "kernel": "grouped_copy and grouped_copy_ldg",
    "ncu_filter": ["--kernel-name", "regex:^grouped_copy"],
    "args": ["--reps", "1"],
    "every": 5,
    "launches": ["grouped_copy_ldg", "grouped_copy", "grouped_copy_global", "host_maps", "array_copy_ldg", "array_copy"],
    "metrics": {
        "dram_read_bytes": "dram__bytes_read.sum",
        "dram_write_bytes": "dram__bytes_write.sum",
        "dram_pct_of_peak": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "l2_read_sectors": "lts__t_sectors_op_read.sum",
        "l2_write_sectors": "lts__t_sectors_op_write.sum",
        "ns": "gpu__time_duration.sum",
    },
    "ratios": {
        "dram_read_per_written": ["dram_read_bytes", "dram_write_bytes"],
    },
}

sass_count = {
    # the bulk-group waits, counted: wait_stores_read_but's three immediates in each retargeting copy, the
    # wait before a pair of maps is rewritten (its omission can pass on the hardware: bugs/3.diff)
    "grouped_copy<0>": {"DEPBAR.LE SB0, 0x0": 2, "DEPBAR.LE SB0, 0x1": 2, "DEPBAR.LE SB0, 0x2": 1},
    "grouped_copy<1>": {"DEPBAR.LE SB0, 0x0": 2, "DEPBAR.LE SB0, 0x1": 2, "DEPBAR.LE SB0, 0x2": 1},
    "cross_cta": {"DEPBAR.LE SB0, 0x0": 2, "DEPBAR.LE SB0, 0x1": 1},
}

# Every fence, release, acquire and cluster barrier, counted per kernel: in the PTX
# (fences) and in the SASS (sass_fences; fence.mbarrier_init leaves none on sm_90a).
# Dropping one changes a count even where the hardware hides it. After a deliberate
# change: python3 tools/sass.py 08_descriptor_update --pins
fences = {
    "cross_cta": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.tensormap::generic.acquire.gpu": 4, "ld.acquire.gpu.global.u32": 3, "membar.gl": 2, "st.release.gpu.global.u32": 1, "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned": 2},
    "field_probe": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 1, "fence.proxy.tensormap::generic.acquire.gpu": 1, "membar.gl": 2, "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned": 1},
    "grouped_copy<0>": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.tensormap::generic.acquire.gpu": 2, "membar.gl": 1, "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned": 2},
    "grouped_copy<1>": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.tensormap::generic.acquire.gpu": 2, "fence.proxy.tensormap::generic.release.gpu": 1, "membar.gl": 1},
    "grouped_copy<2>": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.tensormap::generic.acquire.sys": 2, "membar.gl": 1},
    "update_cost": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.tensormap::generic.acquire.gpu": 1, "membar.gl": 1, "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned": 1},
}
sass_fences = {
    "cross_cta": {"FENCE.VIEW.ASYNC.S": 1, "LDG.E.STRONG.GPU": 3, "MEMBAR.ALL.GPU": 1, "MEMBAR.SC.GPU": 2, "STG.E.STRONG.GPU": 1, "UTMACCTL.IV": 4},
    "field_probe": {"FENCE.VIEW.ASYNC.S": 2, "MEMBAR.SC.GPU": 2, "UTMACCTL.IV": 1},
    "grouped_copy<0>": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 1, "UTMACCTL.IV": 2},
    "grouped_copy<1>": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.ALL.GPU": 1, "MEMBAR.SC.GPU": 1, "UTMACCTL.IV": 2},
    "grouped_copy<2>": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 1, "UTMACCTL.IV": 2},
    "update_cost": {"MEMBAR.SC.GPU": 1, "UTMACCTL.IV": 1},
}

# The order of every proxy fence, read wait and wgmma wait in the machine code
# (tools/sass.py, check_order), not only their counts: a proxy fence after the
# threads' last shared store and before the barrier that hands the buffer to
# the copy engine; a read wait with its exact count between a store that read
# a buffer and the writes that reuse it. Here also: a pair of maps is rewritten only after the
# read wait that covers the stores through it (the exact count is chosen at
# run time: 0, 1 or 2), and the global path's release follows its edits; a
# stage is reloaded only after wait_group.read 1 (the store before the newest
# has read it), and field_probe's poison is fenced before the loads.
# A stage's reload: the nearest read wait before each load says 0x1, with no store between.
_RELOAD = {"anchor": "UTMALDG.2D", "before": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x1"])], "stop": "UTMASTG.2D"}
sass_order = {
    # (until: the warp's converged path; the compiler lays out a fallback for a
    # divergent warp after the loop, where linear order says nothing)
    "grouped_copy<0>": [{"anchor": "ATOMG.E.EXCH.STRONG.GPU", "until": "UTMASTG.2D", "before": [
        ("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x0", "DEPBAR.LE SB0, 0x1", "DEPBAR.LE SB0, 0x2"])], "stop": "UTMASTG.2D"},
        _RELOAD],
    "grouped_copy<1>": [
        {"anchor": "STG.E", "before": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x0", "DEPBAR.LE SB0, 0x1",
                                                          "DEPBAR.LE SB0, 0x2"])], "stop": "UTMASTG.2D"},
        {"anchor": "UTMACCTL.IV", "before": ["MEMBAR.ALL.GPU"], "stop": "STG.E*"},
        _RELOAD,
    ],
    "grouped_copy<2>": [_RELOAD],
    # copy_item: the first NSTAGES loads fill the ring; each later one reloads the stage the store
    # before the newest read (the anchors after the first store)
    "cross_cta": [{**_RELOAD, "from": "UTMASTG.2D"}],
    # the poison of both boxes, fenced (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S) after its last store
    # (STS [R...]: the map's copy and edits in shared memory are STS.128 and STS [UR...], no poison)
    "field_probe": [{"anchor": "UTMALDG*", "before": ["MEMBAR.ALL.CTA"], "stop": "STS [R"}],
}

# The lab holes (tools/lab.py grade; tools/lab_rules.py says what each key means): for
# each hole NN.k, what its fill must show: "hole", what the hole's own code holds in
# PTX, in every kernel it is compiled into ("*"), so that a helper, a rolled loop or
# raw PTX passes as the wrappers do; "perf", the PERF lines graded, only where the
# hole is about speed (no other floor is the student's). A fill that passes the run
# without what the hole teaches is graded MECHANISM.
# 08.1 edits in shared memory (the copy-out with cp_fenceproxy and the acquires follow
# the hole); 08.2 edits in global memory and holds the release and the acquires itself.
# Their order (each acquire after the release) is the shadow build's to judge.
lab = {
    1: {"teaches": "the maps are retargeted in shared memory with tensormap.replace (address, dims, the stride), then "
                   "copied out with the release (cp_fenceproxy) and acquired",
        "hole": {"*": ["tensormap.replace.tile.global_address.shared::cta",
                       "tensormap.replace.tile.global_dim.shared::cta",
                       "tensormap.replace.tile.global_stride.shared::cta"]}},
    2: {"teaches": "the maps are retargeted where they are, in global memory (tensormap.replace .global), then a "
                   "release fence and an acquire per map",
        "hole": {"*": ["tensormap.replace.tile.global_address.global", "tensormap.replace.tile.global_dim.global",
                       "tensormap.replace.tile.global_stride.global", "fence.proxy.tensormap::generic.release",
                       "fence.proxy.tensormap::generic.acquire"]}},
}
