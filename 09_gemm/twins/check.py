# The rules for 09_gemm/twins (data only; tools/checker.py reads them). The twins
# are checked for correctness only, every element, against the same reference
# as their PTX kernel: no PERF lines (they are the PTX kernels' machine code,
# which make test proves from the SASS: tests/test_twins.py).
perf_floors = {}
headline = "check:mma_ptx"
sass = {}
