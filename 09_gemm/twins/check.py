# The rules for 09_gemm/twins (data only; tools/checker.py reads them). The twins
# are checked for correctness only, every element, against the same reference
# as their PTX kernel: no PERF lines (they are the PTX kernels' machine code,
# which make test proves from the SASS: tests/test_twins.py).
perf_floors = {}
headline = "check:mma_ptx"
# The instructions each kernel is about (make sass-NN shows them; tools/sass.py).
sass = {k: ["WARPGROUP.ARRIVE", "HGMMA.64x256x16.F32.BF16", "WARPGROUP.DEPBAR.LE gsb0, 0x0"]
        for k in ("mma_ptx", "mma_cute")}
