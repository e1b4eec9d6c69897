# The rules for 02_cp_async/twins (data only; tools/checker.py reads them). The twins
# are checked for correctness only, every element, against the same reference
# as their PTX kernel: no PERF lines (they are the PTX kernels' machine code,
# which make test proves from the SASS: tests/test_twins.py).
perf_floors = {}
headline = "check:copy_ptx"
# The instructions each kernel is about (make sass-NN shows them; tools/sass.py).
sass = {
    "copy_ptx": ["LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "copy_pipeline_primitives": ["LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "copy_cuda_memcpy_async": ["LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "copy_cuda_memcpy_async_typed": ["LDGSTS.E.BYPASS.128", "LDGDEPBAR", "DEPBAR.LE SB0, 0x0"],
    "copy_cuda_memcpy_async_unaligned": ["LDG.E.U8", "STS.128"],
    "copy_cooperative_groups": ["LDGSTS.E.BYPASS.128", "DEPBAR.LE SB0, 0x0", "BAR.SYNC*"],
}
sass_absent = {"copy_cuda_memcpy_async_unaligned": ["LDGSTS*"]}
sass_count = {"copy_cuda_memcpy_async_unaligned": {"LDG.E.U8": 16}}
