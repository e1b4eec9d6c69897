"""The C++ twins of a step's PTX (issue: "from the PTX you learned to the APIs you will use"): each twin is
compiled for sm_90a and its SASS compared with the PTX kernel's, instruction by instruction, registers and
addresses aside. Equal, or the difference is named: 02_cp_async/twins/cp_async_twins.cu (cuda_pipeline.h,
cuda::memcpy_async); 03_tma_load/, 04_tma_store/ and 08_descriptor_update/twins/ (cuda::ptx)."""

import difflib
import re
import subprocess

import pytest

from sass import dump_sass, instruction

from conftest import REPO

TWINS = REPO / "02_cp_async" / "twins" / "cp_async_twins.cu"
TMA_TWINS = REPO / "03_tma_load" / "twins" / "tma_load_twins.cu"
STORE_TWINS = REPO / "04_tma_store" / "twins" / "tma_store_twins.cu"
EDIT_TWINS = REPO / "08_descriptor_update" / "twins" / "tensormap_edit_twins.cu"


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
        if ins.split()[0].split(".")[0] in ("BSSY", "BRA", "CALL", "JMP", "BRX"):  # a target moves with the code
            ins = re.sub(r"0x[0-9a-f]+", "<target>", ins)
        out.append(ins)
    return out


def compiled(source, tmp):
    """{kernel name: normalized SASS} of one twins file, built with the steps' target and warnings."""
    cubin = tmp / (source.stem + ".cubin")
    p = subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-I.",
                        "-Xcompiler", "-Wall,-Wextra", "-cubin", "-o", str(cubin), str(source)],
                       cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0 and "warning" not in (p.stdout + p.stderr).lower(), p.stdout + p.stderr
    return {re.match(r"_Z\d+([A-Za-z_]\w*?)(PK6float4|14CUtensorMap|K14CUtensorMap)", f)[1]: normalized(lines)
            for f, lines in dump_sass(cubin).items()}


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    return compiled(TWINS, tmp_path_factory.mktemp("twins"))


def sass_difference(ptx, twin):
    """Where two normalized kernels first differ, as the instructions only one of them has there; None if equal."""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ptx, twin, autojunk=False).get_opcodes():
        if tag != "equal":
            return f"instruction {i1}: PTX kernel {ptx[i1:i2][:2]}, twin {twin[j1:j2][:2]}"
    return None


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
        == "instruction 0: PTX kernel ['LDGSTS.E.BYPASS.128 [R], desc[R][R.64]'], twin ['LDG.E.U8 R, desc[R][R.64]']"
    assert sass_difference(["A", "CCTL.IVALL", "B"], ["A", "B"]) == "instruction 1: PTX kernel ['CCTL.IVALL'], twin []"
    assert sass_difference(["A"], ["A"]) is None


def test_the_cuda_ptx_tma_load_is_the_ptx_kernel(tmp_path):
    k = compiled(TMA_TWINS, tmp_path)
    assert any(i.startswith("UTMALDG.2D") for i in k["load_ptx"])
    assert sass_difference(k["load_ptx"], k["load_cuda_ptx"]) is None, \
        f"load_cuda_ptx: {sass_difference(k['load_ptx'], k['load_cuda_ptx'])}"


def test_the_cuda_ptx_tma_store_is_the_ptx_kernel(tmp_path):
    k = compiled(STORE_TWINS, tmp_path)
    assert any(i.startswith("UTMASTG.2D") for i in k["store_ptx"])
    assert sass_difference(k["store_ptx"], k["store_cuda_ptx"]) is None, \
        f"store_cuda_ptx: {sass_difference(k['store_ptx'], k['store_cuda_ptx'])}"


def test_the_cuda_ptx_tensormap_edit_is_the_ptx_kernel(tmp_path):
    k = compiled(EDIT_TWINS, tmp_path)
    assert any(i.startswith("UTMACCTL") or i.startswith("ATOMG") for i in k["retarget_ptx"])
    assert sass_difference(k["retarget_ptx"], k["retarget_cuda_ptx"]) is None, \
        f"retarget_cuda_ptx: {sass_difference(k['retarget_ptx'], k['retarget_cuda_ptx'])}"
