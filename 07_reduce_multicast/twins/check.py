# The rules for 07_reduce_multicast/twins (data only; tools/checker.py reads them). The twins
# are checked for correctness only, every element, against the same reference
# as their PTX kernel: no PERF lines (they are the PTX kernels' machine code,
# which make test proves from the SASS: tests/test_twins.py).
perf_floors = {}
headline = "check:reduce_ptx"
# The instructions each kernel is about (make sass-NN shows them; tools/sass.py).
sass = {
    "reduce_ptx": ["UTMAREDG.2D.ADD"],
    "reduce_cuda_ptx": ["UTMAREDG.2D.ADD"],
    "reduce_cute": ["UTMAREDG.2D.ADD"],
    "multicast_ptx": ["UTMALDG.2D.MULTICAST"],
    "multicast_cuda_ptx": ["UTMALDG.2D.MULTICAST"],
    "multicast_cute": ["UTMALDG.2D.MULTICAST"],
}
