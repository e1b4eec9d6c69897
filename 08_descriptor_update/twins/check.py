# The rules for 08_descriptor_update/twins (data only; tools/checker.py reads them). The twins
# are checked for correctness only, every element, against the same reference
# as their PTX kernel: no PERF lines (they are the PTX kernels' machine code,
# which make test proves from the SASS: tests/test_twins.py).
perf_floors = {}
headline = "check:retarget_ptx"
# The instructions each kernel is about (make sass-NN shows them; tools/sass.py).
sass = {k: ["ATOMG.E.EXCH.STRONG.GPU", "UTMACCTL.IV"] for k in ("retarget_ptx", "retarget_cuda_ptx")}
