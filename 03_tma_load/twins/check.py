# The rules for 03_tma_load/twins (data only; tools/checker.py reads them). The twins
# are checked for correctness only, every element, against the same reference
# as their PTX kernel: no PERF lines (they are the PTX kernels' machine code,
# which make test proves from the SASS: tests/test_twins.py).
perf_floors = {}
headline = "check:load_ptx"
# The instructions each kernel is about (make sass-NN shows them; tools/sass.py).
# load_cute (a template on CuTe's TiledCopy type) is compared by tests/test_twins.py only.
sass = {
    "load_ptx": ["UTMALDG.2D"],
    "load_cuda_ptx": ["UTMALDG.2D"],
    "load_cuda_experimental": ["UTMALDG.2D"],
    "load_cute_atom": ["UTMALDG.2D"],
    "bulk_ptx": ["UBLKCP.S.G"],
    "bulk_cuda_ptx": ["UBLKCP.S.G"],
    "bulk_memcpy_async_tx": ["UBLKCP.S.G"],
    "bulk_memcpy_async_tx_copy_first": ["UBLKCP.S.G"],
    "bulk_cuda_barrier": ["UBLKCP.S.G", "NANOSLEEP"],
    "bulk_cute": ["UBLKCP.S.G"],
}
