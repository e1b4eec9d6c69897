"""Rules for step 02_cp_async (`make check-02`): data only; tools/checker.py reads them.

Floors are fractions of cudaMemcpy device-to-device measured in the same run,
about 90 % of the lowest value the H200 and the H100 recorded (results/; a
test keeps each between 70 and 100 % of it). copy_4stage's floor is the
step's promise: a cp.async pipeline copies at >= 97 % of cudaMemcpy.
perf_order holds the lesson's claims: the pipelined polynomial beats both the
register-staged and the single-stage version, four stages beat two, and a
dynamic schedule beats a fixed share per persistent block.
"""

perf_floors = {
    "cudaMemcpy_D2D": 1.00,
    "staged_ldg_sts": 0.861,
    "staged_ca4": 0.873,
    "staged_ca8": 0.864,
    "staged_ca16": 0.862,
    "staged_cg16": 0.86,
    "groups_oldest_first": 0.873,
    "copy_regs": 0.591,
    "copy_1stage": 0.583,
    "copy_2stage": 0.784,
    "copy_4stage": 0.97,
    "copy_regs_4stage": 0.8109,
    "poly_regs": 0.356,
    "poly_1stage": 0.358,
    "poly_2stage": 0.502,
    "poly_4stage": 0.519,
    "poly_regs_4stage": 0.4471,
    "copy_4stage_persistent": 0.812,
    "copy_4stage_dynamic": 0.836,
}
headline = "copy_4stage"
perf_order = [
    ("poly_4stage", "poly_regs"),
    ("poly_4stage", "poly_1stage"),
    ("copy_4stage", "copy_2stage"),
    ("copy_4stage_dynamic", "copy_4stage_persistent"),
]
sass = {
    "staged<0>": ["LDG.E.128[.CONSTANT]", "STS.128", "LDS.128", "STG.E.128"],
    "staged<1>": ["LDGSTS.E", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "staged<2>": ["LDGSTS.E.64", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "staged<3>": ["LDGSTS.E.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "staged<4>": ["LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "groups": ["LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x3", "DEPBAR.LE SB0, 0x2", "DEPBAR.LE SB0, 0x1",
               "DEPBAR.LE SB0, 0x0"],
    "tail_copy": ["LDGSTS.E.BYPASS.128", "LDGSTS.E.BYPASS.128.ZFILL", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "pipeline<1>": ["LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "pipeline<4>": ["LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x3"],
    "pipeline_dynamic<4>": ["ATOMG.E.ADD*", "LDGSTS.E.BYPASS.128", "DEPBAR.LE SB0, 0x3"],
    "regs_staged": ["LDG.E.128[.CONSTANT]", "STS.128"],
    "regs_prefetch<4>": ["LDG.E.128[.CONSTANT]", "STS.128", "LDS.128", "STG.E.128"],
}
sass_count = {
    # 4 tiles of 4 loads in the prologue, 4 in each of the 4 unrolled iterations: 4 tiles ahead
    "regs_prefetch<4>": {"LDG.E.128[.CONSTANT]": 32},
}
sass_absent = {
    "staged<0>": ["LDGSTS*"],  # the LDG + STS version has no async copy
    "regs_staged": ["LDGSTS*"],
    "regs_prefetch<4>": ["LDGSTS*", "LDL*", "STL*"],  # plain loads; the register stages stay in registers
}

# The lab holes (tools/lab.py grade; tools/lab_rules.py says what each key means): for
# each hole NN.k, what its fill must show: "hole", what the hole's own code holds in
# PTX, in every kernel it is compiled into ("*"), so that a helper, a rolled loop or
# raw PTX passes as the wrappers do; "perf", the PERF lines graded, only where the
# hole is about speed (no other floor is the student's). A fill that passes the run
# without what the hole teaches is graded MECHANISM.
# 02.1 is about speed: the pipelines' floors and the lesson's claims between them.
# It issues with cp.async (either caching) and stores nothing to shared memory itself:
# a tile loaded into registers and stored is what this step replaces. Its commit and
# its wait_group STAGES - 1 are outside it.
lab = {
    1: {"teaches": "the tile STAGES - 1 ahead is issued into its stage with cp.async, never loaded into registers and "
                   "stored",
        "perf": ["copy_1stage", "copy_2stage", "copy_4stage", "poly_1stage", "poly_2stage", "poly_4stage",
                 "copy_4stage_persistent", "copy_4stage_dynamic"],
        "hole": {"*": ["cp.async.cg.shared.global|cp.async.ca.shared.global"]},
        "hole_absent": {"*": ["st.shared"]}},
}
