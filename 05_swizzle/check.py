"""Rules for step 05_swizzle (`make check-05`): data only; tools/checker.py reads them.

This step measures no bandwidth: its results are layouts (every element of
every mode, element size, offset and narrow box where the formula says) and bank-conflict
costs (TIME lines, machine-dependent). The README's result column quotes the
layout checks. `make profile-05` counts ncu's shared-memory wavefronts per
load instruction for the four bank_patterns launches.
"""

perf_floors = {}
headline = "check:layout_"
sass = {
    "raw_load": ["UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S"],
    "bank_patterns": ["UTMALDG.2D", "LDS", "CS2R *SR_CLOCKLO"],  # clock64 (the bounded wait reads SR_GLOBALTIMERLO)
}
profile = {
    "kernel": "bank_patterns",
    "launches": ["row", "column", "column_padded", "column_swizzled"],
    "metrics": {
        "lds_instructions": "smsp__sass_inst_executed_op_shared_ld.sum",
        "wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "bank_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    },
    "ratios": {"wavefronts_per_lds": ["wavefronts", "lds_instructions"]},
}

# Every fence, release, acquire and cluster barrier, counted per kernel: in the PTX
# (fences) and in the SASS (sass_fences; fence.mbarrier_init leaves none on sm_90a).
# Dropping one changes a count even where the hardware hides it. After a deliberate
# change: python3 tools/sass.py 05_swizzle --pins
fences = {
    "bank_patterns": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 1},
    "raw_load": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 1, "membar.gl": 1},
}
sass_fences = {
    "bank_patterns": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 1},
    "raw_load": {"FENCE.VIEW.ASYNC.S": 2, "MEMBAR.SC.GPU": 1},
}

# The lab holes (tools/lab.py grade; tools/lab_rules.py says what each key means): for
# each hole NN.k, what its fill must show: "hole", what the hole's own code holds in
# PTX, in every kernel it is compiled into ("*"), so that a helper, a rolled loop or
# raw PTX passes as the wrappers do; "perf", the PERF lines graded, only where the
# hole is about speed (no other floor is the student's). A fill that passes the run
# without what the hole teaches is graded MECHANISM.
# 05.1 reads shared memory (the tile is position-coded: a fill that computes the value
# from its position reads nothing); it is given no global pointer to read instead.
lab = {
    1: {"teaches": "element (t, k) is read where the TMA put it, in the swizzled tile in shared memory, not computed "
                   "from its position",
        "hole": {"*": ["ld.shared"]}},
}
