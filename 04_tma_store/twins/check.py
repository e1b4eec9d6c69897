# The rules for 04_tma_store/twins (data only; tools/checker.py reads them). The twins
# are checked for correctness only, every element, against the same reference
# as their PTX kernel: no PERF lines (they are the PTX kernels' machine code,
# which make test proves from the SASS: tests/test_twins.py).
perf_floors = {}
headline = "check:store_ptx"
# The instructions each kernel is about (make sass-NN shows them; tools/sass.py).
sass = {k: ["FENCE.VIEW.ASYNC.S", "UTMASTG.2D", "DEPBAR.LE SB0, 0x0"]
        for k in ("store_ptx", "store_cuda_ptx", "store_cuda_experimental", "store_cute")}
