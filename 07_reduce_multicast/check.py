"""Rules for step 07_reduce_multicast (`make check-07`): data only; tools/checker.py reads them.

Floors are fractions of cudaMemcpy device-to-device measured in the same run,
85 % of the lowest value the H200 and the H100 recorded (results/; a test
keeps each between 70 and 100 % of it); 75 % for the split-K runs at 1 and 4
contributors, which last a few microseconds and say little. The broadcast
runs read from L2 and exceed 100 % of a DRAM copy. perf_order holds
the lesson's claims, and only those: at 16 and 64 contributors the TMA
reduce beats one CTA's load-add-store, and the vector red and the coalesced
atomicAdd both beat atomicAdd in the strided layout. It makes no claim
between the TMA reduce, red_v4 and the coalesced atomicAdd (the lesson
says they tie), and none about multicast's time: on this broadcast, whose
operand stays in L2, multicast is not faster on either GPU (the lesson shows
why, with the counters below). `make profile-07` reads ncu's L2 counters and
the instructions issued for the check run of each split-K and broadcast
launch (--reps 1: each check run is followed by 3 warm-up runs and 1 timed
run, profiled and not reported).
"""

# atomicAdd_strided_k* is the kernel that was recorded as atomicAdd_k* until
# the baseline was coalesced: its floors are the ones derived from those
# recordings.
perf_floors = {
    "cudaMemcpy_D2D": 1.00,
    "tma_reduce_k1": 0.0293,
    "atomicAdd_k1": 0.0338,
    "red_v4_k1": 0.032,
    "load_add_store_k1": 0.031,
    "atomicAdd_strided_k1": 0.0263,
    "tma_reduce_k4": 0.105,
    "atomicAdd_k4": 0.1125,
    "red_v4_k4": 0.1193,
    "load_add_store_k4": 0.089,
    "atomicAdd_strided_k4": 0.066,
    "tma_reduce_k16": 0.305,
    "atomicAdd_k16": 0.2728,
    "red_v4_k16": 0.294,
    "load_add_store_k16": 0.186,
    "atomicAdd_strided_k16": 0.132,
    "tma_reduce_k64": 0.561,
    "atomicAdd_k64": 0.5729,
    "red_v4_k64": 0.581,
    "load_add_store_k64": 0.245,
    "atomicAdd_strided_k64": 0.167,
    "broadcast_c1": 1.07,
    "broadcast_c2": 1.066,
    "broadcast_c2_mc": 1.044,
    "broadcast_c4": 1.071,
    "broadcast_c4_mc": 1.041,
    "broadcast_c8_mc": 0.979,
    "broadcast_c16_mc": 0.863,
    "broadcast_c1_staggered": 1.073,
    "broadcast_c4_mc_staggered": 1.035,
}
headline = "tma_reduce_k64"
perf_order = [
    ("tma_reduce_k16", "load_add_store_k16"),
    ("tma_reduce_k64", "load_add_store_k64"),
    ("red_v4_k16", "atomicAdd_strided_k16"),
    ("red_v4_k64", "atomicAdd_strided_k64"),
    ("atomicAdd_k16", "atomicAdd_strided_k16"),
    ("atomicAdd_k64", "atomicAdd_strided_k64"),
]
sass = {
    "reduce_ops_tensor<(ReduceOp)0>": ["FENCE.VIEW.ASYNC.S", "UTMAREDG.2D.ADD", "UTMACMDFLUSH", "DEPBAR.LE SB0, 0x0"],
    "reduce_ops_tensor<(ReduceOp)1>": ["UTMAREDG.2D.MIN"],
    "reduce_ops_tensor<(ReduceOp)2>": ["UTMAREDG.2D.MAX"],
    "reduce_ops_tensor<(ReduceOp)3>": ["UTMAREDG.2D.INC"],
    "reduce_ops_tensor<(ReduceOp)4>": ["UTMAREDG.2D.DEC"],
    "reduce_ops_tensor<(ReduceOp)5>": ["UTMAREDG.2D.AND"],
    "reduce_ops_tensor<(ReduceOp)6>": ["UTMAREDG.2D.OR"],
    "reduce_ops_tensor<(ReduceOp)7>": ["UTMAREDG.2D.XOR"],
    "reduce_ops_bulk<(ReduceOp)0>": ["UBLKRED.G.S.ADD", "UTMACMDFLUSH"],
    "reduce_ops_bulk<(ReduceOp)5>": ["UBLKRED.G.S.AND"],
    "splitk_tma_reduce": ["STS.128", "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S", "UTMAREDG.2D.ADD", "DEPBAR.LE SB0, 0x1"],
    "splitk_atomic_add": ["REDG.E.ADD.F32.FTZ.RN.STRONG.GPU"],
    "splitk_red_v4": ["REDG.E.ADD.F32x4.FTZ.RN.STRONG.GPU"],
    "splitk_atomic_add_strided": ["REDG.E.ADD.F32.FTZ.RN.STRONG.GPU"],
    "splitk_load_add_store": ["LDG.E.128.STRONG.GPU", "STG.E.128"],
    "broadcast<true>": ["UCGABAR_ARV", "UCGABAR_WAIT", "ELECT", "UTMALDG.2D.MULTICAST", "SYNCS.ARRIVE.TRANS64.RED.A1T0",
                        "LDS.128"],
    "broadcast<false>": ["UTMALDG.2D", "LDS.128"],
    "dsmem_ring": ["UCGABAR_ARV", "UCGABAR_WAIT", "SYNCS.ARRIVE.TRANS64", "UBLKCP.S.S"],
}
sass_absent = {
    # one f32 reduction per element (atomicAdd, either layout) against four
    # (the vector red)
    "splitk_atomic_add": ["REDG.E.ADD.F32x4*"],
    "splitk_atomic_add_strided": ["REDG.E.ADD.F32x4*"],
    # the block exits after wait_group.read 0 (its buffers read), not the
    # full wait, whose SASS adds CCTL.IVALL
    "splitk_tma_reduce": ["CCTL.IVALL"],
    # the remote arrive is not preceded by the barriers of a cluster-scope
    # release (MEMBAR.ALL.GPU, ERRBAR, CGAERRBAR): those wait for the thread's
    # global stores, once per tile and warp
    "broadcast<true>": ["CGAERRBAR + SYNCS.ARRIVE.TRANS64.RED.A1T0"],
    "broadcast<false>": ["UTMALDG.2D.MULTICAST"],
}
profile = {
    "kernel": "splitk_ and broadcast",
    "ncu_filter": ["--kernel-name", "regex:^(splitk_|broadcast)"],
    "args": ["--reps", "1"],
    "every": 5,
    "launches": [
        "tma_reduce_k1", "atomicAdd_k1", "red_v4_k1", "load_add_store_k1", "atomicAdd_strided_k1",
        "tma_reduce_k4", "atomicAdd_k4", "red_v4_k4", "load_add_store_k4", "atomicAdd_strided_k4",
        "tma_reduce_k16", "atomicAdd_k16", "red_v4_k16", "load_add_store_k16", "atomicAdd_strided_k16",
        "tma_reduce_k64", "atomicAdd_k64", "red_v4_k64", "load_add_store_k64", "atomicAdd_strided_k64",
        "broadcast_c1", "broadcast_c2", "broadcast_c2_mc", "broadcast_c4", "broadcast_c4_mc", "broadcast_c8_mc",
        "broadcast_c16_mc", "broadcast_c1_staggered", "broadcast_c4_mc_staggered",
    ],
    "metrics": {
        "red_requests": "lts__t_requests_srcunit_tex_op_red.sum",
        "red_sectors": "lts__t_sectors_srcunit_tex_op_red.sum",
        "l2_read_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
        "l2_write_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",
        "sectors_into_gpcs": "lrc__xbar2gpc_sectors_op_read.sum",
        "coalesced_by_hardware": "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum",
        "coalesced_by_multicast": "lrc__request_sectors_op_read_coalescing_achieved_type_programmatic.sum",
        "ns": "gpu__time_duration.sum",
        # what issuing the reduction costs the SMs: the whole kernel, computing
        # the partials included (the same work in every split-K method)
        "warp_inst": "smsp__inst_executed.sum",
        "thread_inst": "smsp__thread_inst_executed.sum",
        "registers": "launch__registers_per_thread",
    },
    "ratios": {
        "l2_reads_per_sector_delivered": ["l2_read_sectors", "sectors_into_gpcs"],
    },
}

# Every fence, release, acquire and cluster barrier, counted per kernel: in the PTX
# (fences) and in the SASS (sass_fences; fence.mbarrier_init leaves none on sm_90a).
# Dropping one changes a count even where the hardware hides it. After a deliberate
# change: python3 tools/sass.py 07_reduce_multicast --pins
fences = {
    "broadcast<false>": {"barrier.cluster.arrive.release.aligned": 2, "barrier.cluster.wait.acquire.aligned": 2, "fence.mbarrier_init.release.cluster": 1, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64": 3, "membar.gl": 2},
    "broadcast<true>": {"barrier.cluster.arrive.release.aligned": 2, "barrier.cluster.wait.acquire.aligned": 2, "fence.mbarrier_init.release.cluster": 1, "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64": 3, "membar.gl": 2},
    "dsmem_ring": {"barrier.cluster.arrive.release.aligned": 2, "barrier.cluster.wait.acquire.aligned": 2, "fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 1, "membar.gl": 1},
    "reduce_ops_bulk<(ReduceOp)0>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_bulk<(ReduceOp)1>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_bulk<(ReduceOp)2>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_bulk<(ReduceOp)3>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_bulk<(ReduceOp)4>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_bulk<(ReduceOp)5>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_bulk<(ReduceOp)6>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_bulk<(ReduceOp)7>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_tensor<(ReduceOp)0>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_tensor<(ReduceOp)1>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_tensor<(ReduceOp)2>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_tensor<(ReduceOp)3>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_tensor<(ReduceOp)4>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_tensor<(ReduceOp)5>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_tensor<(ReduceOp)6>": {"fence.proxy.async.shared::cta": 1},
    "reduce_ops_tensor<(ReduceOp)7>": {"fence.proxy.async.shared::cta": 1},
    "splitk_tma_reduce": {"fence.proxy.async.shared::cta": 1},
}
sass_fences = {
    "broadcast<false>": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.ALL.GPU": 2, "MEMBAR.SC.GPU": 2, "UCGABAR_ARV": 2, "UCGABAR_WAIT": 2},
    "broadcast<true>": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.ALL.GPU": 2, "MEMBAR.SC.GPU": 2, "UCGABAR_ARV": 2, "UCGABAR_WAIT": 2},
    "dsmem_ring": {"FENCE.VIEW.ASYNC.S": 2, "MEMBAR.ALL.GPU": 2, "MEMBAR.SC.GPU": 1, "UCGABAR_ARV": 2, "UCGABAR_WAIT": 2},
    "reduce_ops_bulk<(ReduceOp)0>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_bulk<(ReduceOp)1>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_bulk<(ReduceOp)2>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_bulk<(ReduceOp)3>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_bulk<(ReduceOp)4>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_bulk<(ReduceOp)5>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_bulk<(ReduceOp)6>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_bulk<(ReduceOp)7>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_tensor<(ReduceOp)0>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_tensor<(ReduceOp)1>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_tensor<(ReduceOp)2>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_tensor<(ReduceOp)3>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_tensor<(ReduceOp)4>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_tensor<(ReduceOp)5>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_tensor<(ReduceOp)6>": {"FENCE.VIEW.ASYNC.S": 1},
    "reduce_ops_tensor<(ReduceOp)7>": {"FENCE.VIEW.ASYNC.S": 1},
    "splitk_tma_reduce": {"FENCE.VIEW.ASYNC.S": 1},
}

# The order of every proxy fence, read wait and wgmma wait in the machine code
# (tools/sass.py, check_order), not only their counts: a proxy fence after the
# threads' last shared store and before the barrier that hands the buffer to
# the copy engine; a read wait with its exact count between a store that read
# a buffer and the writes that reuse it.
sass_order = {
    "reduce_ops_tensor<(ReduceOp)0>": [{"anchor": "UTMAREDG*", "before": ["BAR.SYNC*", "FENCE.VIEW.ASYNC.S"], "stop": "STS*"}],
    "reduce_ops_bulk<(ReduceOp)0>": [{"anchor": "UBLKRED*", "before": ["BAR.SYNC*", "FENCE.VIEW.ASYNC.S"], "stop": "STS*"}],
    "splitk_tma_reduce": [
        {"anchor": "UTMAREDG*", "before": ["BAR.SYNC*", "FENCE.VIEW.ASYNC.S"], "stop": "STS*"},
        # a buffer is rewritten once the reduce issued from it two items ago has read it
        {"anchor": "STS.128", "before": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x1"])], "stop": "UTMAREDG*"},
    ],
    # send and recv written, fenced, then the cluster barrier, then the copy
    "dsmem_ring": [{"anchor": "UBLKCP.S.S", "before": ["UCGABAR_ARV", "FENCE.VIEW.ASYNC.S"], "stop": "STS*"}],
}

# The lab holes (tools/lab.py grade; tools/lab_rules.py says what each key means): for
# each hole NN.k, what its fill must show: "hole", what the hole's own code holds in
# PTX, in every kernel it is compiled into ("*"), so that a helper, a rolled loop or
# raw PTX passes as the wrappers do; "perf", the PERF lines graded, only where the
# hole is about speed (no other floor is the student's). A fill that passes the run
# without what the hole teaches is graded MECHANISM.
# 07.1 reduces with the TMA (the threads hold no address of the output for an atomic);
# 07.2 multicasts in broadcast<true> and loads plainly in broadcast<false>.
lab = {
    1: {"teaches": "the box is reduced into global memory by the TMA (cp.reduce.async.bulk.tensor), not by the threads' "
                   "atomics",
        "hole": {"*": ["cp.reduce.async.bulk.tensor"]}},
    2: {"teaches": "with MULTICAST one load writes the slice into every CTA of the cluster (.multicast::cluster); "
                   "without, a plain load",
        "hole": {"broadcast<true>": ["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"],
                 "broadcast<false>": ["cp.async.bulk.tensor.2d.shared::cluster.global"]},
        "hole_absent": {"broadcast<false>": ["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"]}},
}
