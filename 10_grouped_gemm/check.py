"""Step 10's rules: data only (tools/checker.py reads them).

Every PERF line is arithmetic (TFLOP/s) against cuBLAS on the DENSE problem of
the same total size (`dense_cublas`, `many_dense_cublas`: one cublasGemmEx of
all the rows against one B, 100.0 %): what grouping costs. Every part does
2 sum(M_g) N K flops. A floor is 85 % of the lowest of six recorded runs
(three on the H200, three on the H100; tools/bench.py --repeat 3), so that
run-to-run noise passes.
"""

perf_floors = {
    "dense_cublas": 1.0,
    "dense": 0.842,
    "cublas_loop": 0.395,
    "cublas_loop_graph": 0.422,
    "loop_ours": 0.194,
    "one_map": 0.524,
    "host_maps": 0.533,
    "device_maps": 0.542,
    "device_edit": 0.539,
    "device_edit_other_order": 0.496,
    "new_batch_device_edit": 0.524,
    "graph_one_map": 0.524,
    "graph_host_maps": 0.536,
    "graph_device_maps": 0.535,
    "graph_device_edit": 0.53,
    "many_dense_cublas": 1.0,
    "many_dense": 0.829,
    "many_cublas_loop": 0.131,
    "many_cublas_loop_graph": 0.138,
    "many_loop_ours": 0.063,
    "many_one_map": 0.156,
    "many_host_maps": 0.151,
    "many_device_maps": 0.153,
    "many_device_edit": 0.153,
    "many_device_edit_other_order": 0.132,
    "many_new_batch_device_edit": 0.155,
    "many_graph_one_map": 0.158,
    "many_graph_host_maps": 0.156,
    "many_graph_device_maps": 0.156,
    "many_graph_device_edit": 0.155,
}
headline = "device_edit"
# `make bench` records three full runs: the lesson states the headline as their range (its spread table).
bench_runs = 3
# The lesson's claims, checked on every run (tools/checker.py): one grouped kernel beats the per-expert loop,
# even replayed from a CUDA graph, on both problems; a graph replay of the device-edited kernel on a new batch
# runs at no less than 0.9 x the same kernel launched on that batch (0.97-1.05 in the recorded runs; 0.93 once,
# when the lab's grader ran the solution on the H200: the two are timed apart); our dense kernel holds 0.9 x cuBLAS's; the
# plan's schedule beats the other one on the second problem (expert order: 9-13 % ahead on the H200, 13-19 % on
# the H100) and is no slower than 0.97 x it on the first (mixed: -0.2 to 6.6 % ahead on the H200, 2.8-11 % on the
# H100; the CPU suite pins the plan itself, tests/unit_grouped_schedule.cu).
perf_order = [("device_edit", "cublas_loop_graph"), ("many_device_edit", "many_cublas_loop_graph"),
              ("device_edit", "device_edit_other_order", 0.97), ("many_device_edit", "many_device_edit_other_order"),
              ("graph_device_edit", "new_batch_device_edit", 0.9),
              ("many_graph_device_edit", "many_new_batch_device_edit", 0.9),
              ("dense", "dense_cublas", 0.9), ("many_dense", "many_dense_cublas", 0.9)]
# make profile-10: the EDIT kernel's check launch on the dense problem, batch 0 mixed and batch 0 in expert order
# (--reps 1: each check launch is followed by 3 warm-up runs and 1 timed run, profiled and not reported; the
# first 15 launches of grouped_gemm<3> are these three parts). Why mixing pays: DRAM bytes per ns.
profile = {
    "kernel": "grouped_gemm<3>",
    "ncu_filter": ["--kernel-name-base", "demangled", "--kernel-name", "regex:grouped_gemm<[^>]*3>",
                   "--launch-count", "15"],
    "args": ["--reps", "1"],
    "every": 5,
    "launches": ["dense", "device_edit", "device_edit_other_order"],
    "metrics": {
        "ns": "gpu__time_duration.sum",
        "dram_read_bytes": "dram__bytes_read.sum",
        "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "l2_hit_pct": "lts__t_sector_hit_rate.pct",
        "tensor_pct": "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    },
    "ratios": {"dram_read_gb_per_s": ("dram_read_bytes", "ns")},
}
_TMA = ["UTMALDG.2D", "UTMASTG.2D", "HGMMA.64x256x16.F32.BF16", "UTMACCTL.IV", "USETMAXREG.DEALLOC*"]
sass = {
    "grouped_gemm<0>": ["UTMALDG.2D", "HGMMA.64x256x16.F32.BF16", "STG.E.64"],
    "grouped_gemm<1>": _TMA,
    "grouped_gemm<2>": _TMA,
    # the retarget: cp_fenceproxy is an exchange of the map's words into global memory, the acquire an
    # invalidation of the TMA's cached copy (UTMACCTL.IV)
    "grouped_gemm<3>": _TMA + ["ATOMG.E.EXCH.STRONG.GPU"],
}
# ONE_MAP never stores through the TMA (it could not clip at an expert's edge) nor acquires a map.
sass_absent = {"grouped_gemm<0>": ["UTMASTG*", "UTMACCTL*"]}
# One wgmma.fence per k-block and its four MMAs, in every kernel.
sass_count = {k: {"WARPGROUP.ARRIVE": 1, "HGMMA.64x256x16.F32.BF16*": 4}
              for k in ["grouped_gemm<0>", "grouped_gemm<1>", "grouped_gemm<2>", "grouped_gemm<3>"]}
fences = {
    "build_maps": {"fence.proxy.tensormap::generic.release.gpu": 1},
    "retarget_alone": {"fence.proxy.tensormap::generic.acquire.gpu": 3,
                       "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned": 3},
    "grouped_gemm<0>": {"fence.mbarrier_init.release.cluster": 1, "membar.gl": 3},
    "grouped_gemm<1>": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 8, "fence.proxy.tensormap::generic.acquire.sys": 3, "membar.gl": 3},
    "grouped_gemm<2>": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 8, "fence.proxy.tensormap::generic.acquire.gpu": 3, "membar.gl": 3},
    "grouped_gemm<3>": {"fence.mbarrier_init.release.cluster": 1, "fence.proxy.async.shared::cta": 8, "fence.proxy.tensormap::generic.acquire.gpu": 3, "membar.gl": 4, "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned": 3},
}
sass_fences = {
    "build_maps": {"MEMBAR.ALL.GPU": 1},
    "retarget_alone": {"UTMACCTL.IV": 3},
    "grouped_gemm<0>": {"FENCE.VIEW.ASYNC.S": 1, "MEMBAR.SC.GPU": 3},
    "grouped_gemm<1>": {"FENCE.VIEW.ASYNC.S": 9, "MEMBAR.SC.GPU": 3, "UTMACCTL.IV": 3},
    "grouped_gemm<2>": {"FENCE.VIEW.ASYNC.S": 9, "MEMBAR.SC.GPU": 3, "UTMACCTL.IV": 3},
    "grouped_gemm<3>": {"FENCE.VIEW.ASYNC.S": 9, "MEMBAR.SC.GPU": 4, "UTMACCTL.IV": 3},
}

# The order of the waits in the machine code (tools/sass.py, check_order): a consumer hands a stage back (a
# plain arrive) only after wgmma.wait_group 1 (in the loop) or 0 (after it), with no MMA between; the
# TMA-store epilogue rewrites a box only after wait_group.read 1, and its proxy fence sits between the last
# shared store and the barrier before the store. 09's rules: the loop and the epilogue are 09's code
# (09_gemm/parts/), which these kernels run.
_RELEASE = {"anchor": "SYNCS.ARRIVE.TRANS64[.RED].A1T0", "from": "HGMMA*",
            "before": [("WARPGROUP.DEPBAR.LE", ["WARPGROUP.DEPBAR.LE gsb0, 0x1", "WARPGROUP.DEPBAR.LE gsb0, 0x0"])],
            "stop": "HGMMA*"}
_EPILOGUE = [{"anchor": "UTMASTG.2D", "before": ["BAR.SYNC*", "FENCE.VIEW.ASYNC.S"], "stop": "STS*"},
             {"anchor": "STS.64", "before": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x1"])], "stop": "UTMASTG.2D"}]
# In the EDIT kernel the map edits are shared stores too (tensormap.replace in shared memory is STS.64): a
# consumer's C map is rewritten after wait_group.read 0, every store through it read.
_EDIT_EPILOGUE = [_EPILOGUE[0], {"anchor": "STS.64", "before": [("DEPBAR.LE SB0", ["DEPBAR.LE SB0, 0x1",
                                                                                  "DEPBAR.LE SB0, 0x0"])],
                                 "stop": "UTMASTG.2D"}]
# After a tile's k-loop: wgmma.wait_group 0, then the last stage handed back, before any MMA (09's
# _LAST_RELEASE: _RELEASE alone accepts that arrive after the loop's wait_group 1).
_LAST_RELEASE = {"anchor": "WARPGROUP.DEPBAR.LE gsb0, 0x0", "after_it": ["SYNCS.ARRIVE.TRANS64[.RED].A1T0"],
                 "stop": "HGMMA*"}
# Each stage's MMAs after the wait on its full barrier, with no MMA, load or arrive between (09's
# _FULL_BEFORE_MMA: here the hand-backs of a unit without rows come just before the k-loop); the ring's
# barriers initialised before the block's barrier, which comes before any arrive, wait or load (09's
# _INIT_PUBLISHED); the TMA store's final wait_group 0 after the last store (09's _LAST_STORE_WAIT: DEPBAR
# then CCTL.IVALL, which a consumer's wait_group.read 0 before its C map's edit is not).
_FULL_BEFORE_MMA = {"anchor": "WARPGROUP.ARRIVE", "before": ["SYNCS.PHASECHK.TRANS64.TRYWAIT*"],
                    "stop": "HGMMA*|UTMALDG*|SYNCS.ARRIVE*"}
_INIT_PUBLISHED = {"anchor": "SYNCS.EXCH.64", "after_it": ["BAR.SYNC*"],
                   "stop": "UTMALDG*|SYNCS.ARRIVE*|SYNCS.PHASECHK*"}
_LAST_STORE_WAIT = {"anchor": "DEPBAR.LE SB0, 0x0 + CCTL.IVALL", "from": "UTMASTG.2D", "after_it": ["EXIT"],
                    "stop": "UTMASTG.2D"}
_RING = [_RELEASE, _LAST_RELEASE, _FULL_BEFORE_MMA, _INIT_PUBLISHED]
sass_order = {"grouped_gemm<0>": _RING, "grouped_gemm<1>": [*_RING, *_EPILOGUE, _LAST_STORE_WAIT],
              "grouped_gemm<2>": [*_RING, *_EPILOGUE, _LAST_STORE_WAIT],
              "grouped_gemm<3>": [*_RING, *_EDIT_EPILOGUE, _LAST_STORE_WAIT]}

# The lab holes (tools/lab.py grade; tools/lab_rules.py says what each key means): for
# each hole NN.k, what its fill must show: "hole", what the hole's own code holds in
# PTX, in every kernel it is compiled into ("*"), so that a helper, a rolled loop or
# raw PTX passes as the wrappers do; "perf", the PERF lines graded, only where the
# hole is about speed (no other floor is the student's). A fill that passes the run
# without what the hole teaches is graded MECHANISM.
# 10.1 waits on the pair's loads, edits in shared memory, publishes with cp_fenceproxy and
# acquires, and edits nothing in global memory (08's global path is another lesson).
# Which loads it must wait for, and the order of the copies and the acquires, are the
# shadow build's to judge.
lab = {
    1: {"teaches": "a retarget waits for the loads through the pair, edits A's address and rows and B's address in "
                   "shared memory, publishes both with cp_fenceproxy and acquires both",
        "hole": {"*": ["tensormap.replace.tile.global_address.shared::cta", "tensormap.replace.tile.global_dim.shared::cta",
                       "tensormap.cp_fenceproxy", "fence.proxy.tensormap::generic.acquire"],
                 # retarget_alone times the edit alone: nothing is in flight there, so its retarget waits for nothing
                 "grouped_gemm<3>": ["mbarrier.try_wait"]},
        "hole_absent": {"*": ["tensormap.replace.tile.global_address.global",
                              "tensormap.replace.tile.global_dim.global"]}},
}

# What the build and the sanitizers need beyond what every step shares (tools/contract.py, build_facts):
# cuBLAS (the references); make sanitize-10 checks this program's kernels only, not cuBLAS's, with memcheck and
# synccheck (racecheck stops at the first grouped kernel with an internal error: the lesson says why).
build = {
    "link": "-lcublas",
    "sanitize_kernels": ["grouped_gemm", "build_maps", "retarget_alone", "make_operand"],
    "sanitize_tools": ["memcheck", "synccheck"],
}
