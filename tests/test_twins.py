"""The C++ twins of a step's PTX (issue: "from the PTX you learned to the APIs you will use"): each twin is
compiled for sm_90a and its SASS compared with the PTX kernel's, instruction by instruction, registers and
addresses aside. Equal, or the difference is named: 02's twins in 02_cp_async/twins/cp_async_twins.cu."""

import re
import subprocess

import pytest

from sass import dump_sass, instruction

from conftest import REPO

TWINS = REPO / "02_cp_async" / "twins" / "cp_async_twins.cu"


def normalized(lines):
    """SASS without its register numbers, immediates of addresses and the no-op padding."""
    out = []
    for ln in lines:
        ins = instruction(ln)
        if not ins or ins.startswith(("NOP", "BRA", "@!PT LDS RZ", "LDS RZ")) or ins == "EXIT":
            continue
        ins = re.sub(r"\bU?R\d+\b", "R", ins)
        ins = re.sub(r"\bU?P\d+\b", "P", ins)
        ins = re.sub(r"c\[0x0\]\[0x[0-9a-f]+\]", "c[..]", ins)
        out.append(ins)
    return out


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    cubin = tmp_path_factory.mktemp("twins") / "cp_async_twins.cubin"
    p = subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-I.",
                        "-Xcompiler", "-Wall,-Wextra", "-cubin", "-o", str(cubin), str(TWINS)],
                       cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    fns = dump_sass(cubin)
    return {re.match(r"_Z\d+(\w+?)PK6float4", f)[1]: normalized(lines) for f, lines in fns.items()}


def sass_difference(ptx, twin):
    """The first instruction where two normalized kernels differ, or None."""
    for k, (a, b) in enumerate(zip(ptx, twin)):
        if a != b:
            return f"instruction {k}: PTX kernel {a!r}, twin {b!r}"
    return None if len(ptx) == len(twin) else f"{len(ptx)} instructions against {len(twin)}"


@pytest.mark.parametrize("twin", ["copy_pipeline_primitives", "copy_cuda_memcpy_async"])
def test_the_twin_is_the_ptx_kernel(twins, twin):
    assert any(i.startswith("LDGSTS.E.BYPASS.128") for i in twins["copy_ptx"])
    assert sass_difference(twins["copy_ptx"], twins[twin]) is None, \
        f"{twin}: {sass_difference(twins['copy_ptx'], twins[twin])}"


def test_memcpy_async_without_an_aligned_size_copies_byte_by_byte(twins):
    # The named difference (the lesson's trap): no LDGSTS, sixteen 1-byte loads and a store instead.
    trap = twins["copy_cuda_memcpy_async_unaligned"]
    assert not any(i.startswith("LDGSTS") for i in trap)
    assert sum(i.startswith("LDG.E.U8") for i in trap) == 16 and any(i.startswith("STS.128") for i in trap)
    assert sass_difference(twins["copy_ptx"], trap)


def test_the_comparison_names_a_difference():
    assert sass_difference(["LDGSTS.E.BYPASS.128 [R], desc[R][R.64]"], ["LDG.E.U8 R, desc[R][R.64]"]) \
        == "instruction 0: PTX kernel 'LDGSTS.E.BYPASS.128 [R], desc[R][R.64]', twin 'LDG.E.U8 R, desc[R][R.64]'"
