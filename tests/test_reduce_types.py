"""Which reductions the TMA store-reduce takes, checked where they are decided.

The 1D form spells the element type in the instruction, so a reduction the
PTX ISA does not define (.min on .f32) is refused when the program is BUILT:
by ptxas, and earlier by the wrapper's static_assert. The tensor form takes
the type from the tensor map at run time (on the H200 .min on an f32 map
traps), so step 07 checks a host-side table first; the table must be the PTX
ISA's, written here a second time, independently.
"""

import itertools

import pytest

from conftest import REPO, run, run_unit

PTX = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{{
  .reg .b64 %rd<2>;
  .shared .align 128 .b8 buf[256];
  ld.param.u64 %rd1, [p];
  cp.reduce.async.bulk.global.shared::cta.bulk_group.{op} [%rd1], [buf], 256;
  ret;
}}
"""


@pytest.mark.parametrize("op,ok", [("min.f32", False), ("max.f32", False), ("min.u32", True), ("add.f32", True)])
def test_ptxas_decides_the_1d_form(tmp_path, op, ok):
    src = tmp_path / "reduce.ptx"
    src.write_text(PTX.format(op=op))
    p = run(["ptxas", "-arch=sm_90a", str(src), "-o", str(tmp_path / "reduce.cubin")])
    assert (p.returncode == 0) == ok, p.stdout + p.stderr
    if not ok:
        kind, _, _ = op.partition(".")
        assert f"Incorrect type '.f32' for operation '.{kind}'" in p.stderr, p.stderr


CU = """#include "07_reduce_multicast/tma_reduce.cuh"
__global__ void k({t}* out) {{
    __shared__ alignas(128) {t} buf[64];
    bulk_reduce<{op}>(out, buf, 256);
}}
"""


@pytest.mark.parametrize("op,t,ok", [("RED_MIN", "float", False), ("RED_XOR", "float", False),
                                     ("RED_ADD", "float", True), ("RED_MIN", "uint32_t", True)])
def test_the_wrapper_refuses_what_ptxas_would(tmp_path, op, t, ok):
    src = tmp_path / "reduce.cu"
    src.write_text(CU.format(op=op, t=t))
    p = run(["nvcc", "-std=c++17", f"-I{REPO}", "-gencode", "arch=compute_90a,code=sm_90a", "-c", str(src),
             "-o", str(tmp_path / "reduce.o")])
    assert (p.returncode == 0) == ok, p.stdout + p.stderr
    if not ok:
        assert "an f32 reduces with .add only" in p.stdout + p.stderr


# The PTX ISA's table for cp.reduce.async.bulk.tensor (the element type from the map).
ALLOWED = {
    "add": {"u32", "s32", "u64", "f32", "f16", "bf16"},
    "min": {"u32", "s32", "u64", "s64", "f16", "bf16"},
    "max": {"u32", "s32", "u64", "s64", "f16", "bf16"},
    "inc": {"u32"},
    "dec": {"u32"},
    "and": {"u32", "s32", "u64", "s64"},
    "or": {"u32", "s32", "u64", "s64"},
    "xor": {"u32", "s32", "u64", "s64"},
}
TYPES = ["u32", "s32", "u64", "s64", "f32", "f16", "bf16", "f64", "u8"]


def test_the_host_table_is_the_ptx_isa_table(tmp_path):
    p = run_unit("tests/unit_reduce_table.cu", tmp_path)
    got = dict(ln.split(": ", 1) for ln in p.stdout.splitlines() if ": " in ln)
    for op, t in itertools.product(ALLOWED, TYPES):
        verdict = got[f"{op} {t}"]
        if t in ALLOWED[op]:
            assert verdict == "allowed", f"{op} {t}: {verdict}"
        else:
            assert verdict.startswith(f"cp.reduce.async.bulk.tensor .{op} does not reduce"), f"{op} {t}: {verdict}"
    assert "no f32" in got["min f32"]


def test_f32_max_as_ordered_integers():
    # Step 07's way around the missing f32 .max: the f32 bits b as s32 with b ^ ((b >> 31) & 0x7fffffff)
    # sort as the floats do (a negative float's magnitude bits flipped), so a .max on an s32 map gives the
    # largest float's encoding; the map is its own inverse. Checked on every ordered pair of a sample that
    # holds both zeros, both infinities, subnormals, the extremes and ordinary values of both signs.
    import struct

    def bits(x):
        return struct.unpack("<I", struct.pack("<f", x))[0]

    def encode(b):  # u32 bits -> s32
        e = b ^ (0x7FFFFFFF if b >> 31 else 0)
        return e - (1 << 32) if e >> 31 else e

    def decode(s):  # s32 -> u32 bits: the same map
        b = s & 0xFFFFFFFF
        return b ^ (0x7FFFFFFF if b >> 31 else 0)

    inf, tiny = float("inf"), struct.unpack("<f", struct.pack("<I", 1))[0]
    values = [-inf, -3.4028234663852886e38, -1.5, -1.0, -tiny, -0.0, 0.0, tiny, 1.17549435e-38, 0.5, 1.0,
              1.0000001, 3.4028234663852886e38, inf] + [(-1) ** k * 2.0 ** (k - 20) for k in range(40)]
    sample = sorted({bits(x): x for x in values}.values(), key=lambda x: (x, bits(x) >> 31 == 0))  # -0.0 first
    assert sum(x == 0 for x in sample) == 2, "both zeros in the sample"
    codes = [encode(bits(x)) for x in sample]
    for (x, cx), (y, cy) in itertools.combinations(zip(sample, codes), 2):  # x <= y as floats
        assert cx < cy or (x == y and bits(x) != bits(y)), (x, y, cx, cy)  # only -0.0 < 0.0 is new
    assert all(decode(encode(bits(x))) == bits(x) for x in sample)
