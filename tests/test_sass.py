"""Each kernel's SASS holds the instructions its step teaches, and none that
its step says must be absent.

cuobjdump/nvdisasm come from PATH, the toolkit, or the wheels requirements.txt
installs; a missing tool is a failure, never a skip.
"""

import pathlib
import re
import subprocess

import pytest

from checker import load_step
from sass import (check_fences, check_order, check_orders, check_sass, dump_ptx, dump_sass, fence_counts,
                  find_pattern, find_tool, instruction, kernel_function, opcode, pattern_regex)

from conftest import REPO, STEP_DIRS, binary


def test_cuobjdump_is_available():
    assert find_tool("cuobjdump").is_file()
    assert find_tool("nvdisasm").is_file()


def test_step_sass_contains_its_instructions(built, step_dir, step):
    functions = dump_sass(binary(step_dir))
    assert step.sass, f"{step_dir}/check.py declares no SASS"
    for kernel, lines, problems in check_sass(functions, step.sass, step.sass_absent, step.sass_count):
        assert problems is not None, f"kernel {kernel} not found in {step_dir}"
        assert not problems, f"{kernel}: {problems}"


FENCED_STEPS = [d for d in __import__("conftest").STEP_DIRS if d >= "03"]


@pytest.mark.parametrize("fenced_step", FENCED_STEPS)
def test_every_fence_is_pinned(built, fenced_step):
    # Every fence, release, acquire and cluster barrier of every kernel, counted
    # in the PTX and in the SASS against check.py's pins: an omission that the
    # hardware hides (the data still come out right) fails here, with no GPU.
    from checker import load_step
    step = load_step(fenced_step)
    assert step.fences and step.sass_fences, f"{fenced_step}/check.py pins no fences"
    source = next((REPO / fenced_step).glob("*.cu"))
    problems = check_fences(dump_ptx(source), step.fences, ptx=True)
    problems += check_fences(dump_sass(binary(fenced_step)), step.sass_fences, ptx=False)
    assert not problems, f"{fenced_step}: fences differ from their pins:\n" + "\n".join(problems)


def test_fence_pins_see_an_omission():
    # The counting itself: one fence fewer, one more, and an unpinned kernel are all reported.
    ptx = {"_Z1kv": ["fence.proxy.async.shared::cta;", "st.global.u32 [%rd1], %r1;", "ld.acquire.gpu.global.u32 %r2, [%rd1];"]}
    assert fence_counts(ptx, ptx=True) == {"_Z1kv": {"fence.proxy.async.shared::cta": 1, "ld.acquire.gpu.global.u32": 1}}
    pins = {"k": {"fence.proxy.async.shared::cta": 1, "ld.acquire.gpu.global.u32": 1}}
    assert check_fences(ptx, pins, ptx=True) == []
    assert check_fences({"_Z1kv": ptx["_Z1kv"][1:]}, pins, ptx=True)  # the fence omitted
    assert check_fences(ptx, {}, ptx=True)  # a kernel with fences and no pin


def test_pattern_syntax():
    rx = pattern_regex("LDG.E.128[.CONSTANT]")
    assert rx.match("LDG.E.128") and rx.match("LDG.E.128.CONSTANT R4, desc[UR4][R2.64]")
    assert not rx.match("LDG.E.64") and not rx.match("LDG.E")
    assert pattern_regex("LDG.E[.CONSTANT]").match("LDG.E.CONSTANT R1, [R2]")
    assert not pattern_regex("LDG.E[.CONSTANT]").match("LDG.E.128.CONSTANT R1, [R2]")
    assert pattern_regex("SYNCS.ARRIVE*").match("SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R1], RZ")
    assert pattern_regex("DEPBAR.LE SB0, 0x0").match("DEPBAR.LE SB0, 0x0")
    assert not pattern_regex("DEPBAR.LE SB0, 0x0").match("DEPBAR.LE SB0, 0x1")
    assert pattern_regex("CS2R *SR_CLOCKLO").match("CS2R R4, SR_CLOCKLO")
    assert not pattern_regex("CS2R *SR_CLOCKLO").match("CS2R R4, SR_GLOBALTIMERLO")
    line = "/*0180*/  @!P0 LDG.E.128.CONSTANT R4, desc[UR10][R24.64] ; /* 0x000000 */"
    assert opcode(line) == "LDG.E.128.CONSTANT" and instruction(line) == "LDG.E.128.CONSTANT R4, desc[UR10][R24.64]"


def test_sequences_must_be_consecutive():
    lines = ["/*0010*/ MEMBAR.ALL.CTA ;", "/*0020*/ MEMBAR.SC.GPU ;", "/*0030*/ FENCE.VIEW.ASYNC.S ;",
             "/*0040*/ MEMBAR.ALL.CTA ;", "/*0050*/ FENCE.VIEW.ASYNC.S ;"]
    assert find_pattern(lines, "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S") == [3]
    assert find_pattern(lines[:3], "MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S") == []


def test_missing_forbidden_and_miscounted_are_reported():
    fns = {"_Z1kv": ["/*0010*/ DEPBAR.LE SB0, 0x0 ;", "/*0020*/ CCTL.IVALL ;", "/*0030*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;",
                     "/*0040*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;"]}
    (_, _, problems), = check_sass(fns, {"k": ["DEPBAR.LE SB0, 0x0 + CCTL.IVALL", "UTMASTG.2D"]},
                                   {"k": ["CCTL.IVALL"]}, {"k": {"BAR.SYNC[.DEFER_BLOCKING]": 1}})
    assert problems == ["no UTMASTG.2D", "has CCTL.IVALL", "2 x BAR.SYNC[.DEFER_BLOCKING], want 1"]
    (_, _, problems), = check_sass(fns, {"no_such_kernel": ["LDG.E"]})
    assert problems is None


def test_kernel_names_with_template_arguments():
    fns = {"_Z6stagedILi4EEvPK6float4PS0_": [], "_Z6stagedILi0EEvPK6float4PS0_": [],
           "_Z8sum_ringILb1EEv14CUtensorMap_stjPjiPy": [], "_Z6groupsPK6float4PS_iPx": []}
    assert kernel_function(fns, "staged<4>") == "_Z6stagedILi4EEvPK6float4PS0_"
    assert kernel_function(fns, "staged<0>") == "_Z6stagedILi0EEvPK6float4PS0_"
    assert kernel_function(fns, "sum_ring<true>") == "_Z8sum_ringILb1EEv14CUtensorMap_stjPjiPy"
    assert kernel_function(fns, "sum_ring<false>") is None
    assert kernel_function(fns, "groups") == "_Z6groupsPK6float4PS_iPx"
    assert kernel_function(fns, "staged") is None


def test_step01_batched_issues_all_loads_before_first_store(built):
    # The point of staged_batched: BATCH independent 16-byte loads in flight
    # before the first STS needs any of them.
    functions = dump_sass(binary("01_memcpy_baseline"))
    for name, want in (("staged_batched", 4), ("staged_one", 1)):
        ops = [opcode(ln) for ln in functions[kernel_function(functions, name)]]
        first_sts = next(i for i, o in enumerate(ops) if o.startswith("STS"))
        loads = sum(o.startswith("LDG.E.128") for o in ops[:first_sts])
        assert loads == want, f"{name}: {loads} LDG.E.128 before the first STS, want {want}"


def test_step02_groups_wait_oldest_first(built):
    # groups(): four groups in flight, then wait_group 3, 2, 1, 0 in that order
    # (DEPBAR.LE SB0, N is cp.async.wait_group N).
    functions = dump_sass(binary("02_cp_async"))
    lines = functions[kernel_function(functions, "groups")]
    waits = [int(m, 16) for ln in lines for m in re.findall(r"DEPBAR\.LE SB0, (0x[0-9a-f]+)", ln)]
    assert waits[:4] == [3, 2, 1, 0], waits
    assert sum(opcode(ln) == "LDGDEPBAR" for ln in lines) >= 4, "one commit_group per row"


def test_step02_pipeline_waits_stages_minus_one(built):
    functions = dump_sass(binary("02_cp_async"))
    for stages in (1, 2, 3, 4):
        text = "\n".join(functions[kernel_function(functions, f"pipeline<{stages}>")])
        assert f"DEPBAR.LE SB0, {hex(stages - 1)}" in text, f"pipeline<{stages}> lacks wait_group {stages - 1}"


def test_tma_steps_use_shared_not_generic_accesses(built):
    # Rounding the dynamic shared-memory base up through uintptr_t once made
    # every shared access a generic LD/ST; tma_smem_base<>() keeps them LDS/STS.
    for step_name in ("03_tma_load", "04_tma_store", "05_swizzle"):
        functions = dump_sass(binary(step_name))
        generic = [(f, ln) for f, lines in functions.items() for ln in lines if opcode(ln).split(".")[0] in ("LD", "ST")]
        assert not generic, f"{step_name}: generic loads/stores (shared memory seen as generic): {generic[:3]}"


ORDERED_STEPS = [s for s in STEP_DIRS if load_step(s).sass_order]


@pytest.mark.parametrize("step_dir", ORDERED_STEPS)
def test_sass_order(built, step_dir):
    # Every proxy fence, read wait and wgmma wait in its place in the machine code,
    # with its exact group count (check.py's sass_order): counting them (the fence
    # pins) passes a fence moved after the store, a read wait loosened from 1 to 2,
    # a stage handed back after wgmma.wait_group 2; tests/defects/order-*.diff plant each.
    problems = check_orders(dump_sass(binary(step_dir)), load_step(step_dir).sass_order)
    assert not problems, f"{step_dir}: machine code out of order:\n" + "\n".join(problems)


def test_the_order_rule_sees_a_misplaced_or_loosened_wait():
    mma = "/*0100*/ HGMMA.64x256x16.F32.BF16 R24, gdesc[UR8], R24, gsb0 ;"
    wait = "/*0110*/ WARPGROUP.DEPBAR.LE gsb0, 0x{} ;"
    arrive = "/*0120*/ SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R9+URZ], RZ ;"
    rule = {"anchor": "SYNCS.ARRIVE.TRANS64[.RED].A1T0", "from": "HGMMA*",
            "before": [("WARPGROUP.DEPBAR.LE", ["WARPGROUP.DEPBAR.LE gsb0, 0x1"])], "stop": "HGMMA*"}
    assert not check_order([mma, wait.format(1), arrive], rule)
    assert check_order([mma, arrive, wait.format(1)], rule)  # the hand-back before the wait
    assert check_order([mma, wait.format(2), arrive], rule)  # a wait, but one that leaves the batch pending
    fence = {"anchor": "UTMASTG.2D", "before": ["BAR.SYNC*", "FENCE.VIEW.ASYNC.S"], "stop": "STS*"}
    sts, fen, bar, st = ("/*0200*/ STS [R4], R5 ;", "/*0210*/ FENCE.VIEW.ASYNC.S ;",
                         "/*0220*/ BAR.SYNC.DEFER_BLOCKING 0x0 ;", "/*0230*/ UTMASTG.2D [UR4], [UR6] ;")
    assert not check_order([sts, fen, bar, st], fence)
    assert check_order([sts, bar, fen, st], fence)  # the fence after the barrier: one thread's, too late
    assert check_order([fen, sts, bar, st], fence)  # a store after the fence
    assert check_order([sts, bar, st], fence)       # no fence


def test_memcpy_async_with_a_barrier(tmp_path):
    # The seed's question, answered from the machine code (tests/probe_memcpy_async_barrier.cu):
    # cuda::memcpy_async with a cuda::barrier follows the alignment the call promises (pointer type or
    # cuda::aligned_size_t): 16 bytes, a TMA bulk copy (UBLKCP, its bytes counted by the barrier's
    # expect-tx arrive); 8 or 4 bytes, cp.async (LDGSTS) whose completion the barrier tracks
    # (ARRIVES.LDGSTSBAR); nothing, silently a synchronous byte copy by the threads.
    exe = tmp_path / "probe.cubin"
    p = subprocess.run(["nvcc", "-std=c++17", "-I.", "-gencode", "arch=compute_90a,code=sm_90a", "-cubin",
                        "tests/probe_memcpy_async_barrier.cu", "-o", str(exe)], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    functions = dump_sass(exe)
    ops = {int(re.search(r"ILi(\d)E", name)[1]): {opcode(ln) for ln in lines}
           for name, lines in functions.items() if "memcpy_async_barrier" in name}
    assert sorted(ops) == list(range(10)), sorted(ops)
    for call in (0, 1, 3, 8, 9):  # 16 bytes promised: block, float4 pointers, one thread, a warp, each thread
        assert "UBLKCP.S.G" in ops[call] and "SYNCS.ARRIVE.TRANS64.RED.A0TR" in ops[call], (call, sorted(ops[call]))
        assert not any(o.startswith("LDGSTS") for o in ops[call]), (call, sorted(ops[call]))
    for call, ldgsts in ((4, "LDGSTS.E.64"), (6, "LDGSTS.E.64"), (5, "LDGSTS.E"), (7, "LDGSTS.E")):  # 8 and 4 bytes
        assert ldgsts in ops[call] and "ARRIVES.LDGSTSBAR.64.TRANSCNT" in ops[call], (call, sorted(ops[call]))
        assert not any(o.startswith("UBLKCP") for o in ops[call]), (call, sorted(ops[call]))
    bytes_copy = ops[2]  # char pointers, a plain size: nothing promises alignment
    assert not any(o.startswith(("UBLKCP", "LDGSTS")) for o in bytes_copy), sorted(bytes_copy)
    assert any(o.startswith("LDG.E.U8") for o in bytes_copy), sorted(bytes_copy)



# One kernel around one instruction, for ptxas alone: its operands are a tensor map's address (%rd1),
# a shared box (%r1), an mbarrier (%r2), a coordinate 0 (%r3) and a ctaMask (%rs1).
ONE_INSTRUCTION_PTX = """.version 8.8
.target {target}
.address_size 64
.visible .entry k(.param .u64 map)
{{
  .reg .b64 %rd<2>;
  .reg .b32 %r<4>;
  .reg .b16 %rs<2>;
  .shared .align 128 .b8 buf[4096];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [map];
  mov.u32 %r1, buf;
  mov.u32 %r2, bar;
  mov.u32 %r3, 0;
  mov.u16 %rs1, 3;
  {instruction}
  ret;
}}
"""


def assemble(tmp_path, target: str, instruction: str) -> tuple[subprocess.CompletedProcess, pathlib.Path]:
    src, cubin = tmp_path / f"{target}.ptx", tmp_path / f"{target}.cubin"
    src.write_text(ONE_INSTRUCTION_PTX.format(target=target, instruction=instruction))
    return subprocess.run(["ptxas", f"-arch={target}", str(src), "-o", str(cubin)], capture_output=True,
                          text=True), cubin


MULTICAST = ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
             " [%r1], [%rd1, {%r3, %r3}], [%r2], %rs1;")


def test_multicast_on_plain_sm_90_is_the_same_machine_code_with_an_advisory(tmp_path):
    # The PTX ISA calls .multicast::cluster "optimized for" sm_90a (and later a/f targets). Step 07 builds for
    # sm_90a; built for plain sm_90 the load still assembles, ptxas adds an advisory about "some future
    # architectures", and the Hopper machine code is the same instruction for instruction.
    sass = {}
    for target in ("sm_90", "sm_90a"):
        p, cubin = assemble(tmp_path, target, MULTICAST)
        assert p.returncode == 0, p.stderr
        advised = "Advisory: '.multicast::cluster'" in p.stderr and "future architectures" in p.stderr
        assert advised == (target == "sm_90"), (target, p.stderr)
        sass[target] = [instruction(ln) for lines in dump_sass(cubin).values() for ln in lines]
    assert any(i.startswith("UTMALDG.2D.MULTICAST") for i in sass["sm_90"]), sass["sm_90"]
    assert sass["sm_90"] == sass["sm_90a"]


# Where each instruction assembles, among an Ampere, Hopper and Blackwell target, plain and arch-specific:
# what README.md's troubleshooting says. The TMA is sm_90 and later; setmaxnreg and tensormap.replace are
# arch-specific (sm_90a, sm_100a, never a plain target); wgmma is sm_90a's alone.
ASSEMBLES = {
    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r3}], [%r2];":
        {"sm_90", "sm_90a", "sm_100", "sm_100a"},
    "setmaxnreg.inc.sync.aligned.u32 232;": {"sm_90a", "sm_100a"},
    "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r1], %rd1;": {"sm_90a", "sm_100a"},
    "wgmma.fence.sync.aligned;": {"sm_90a"},
}


def test_which_targets_assemble_the_steps_instructions(tmp_path):
    for instruction, want in ASSEMBLES.items():
        got = set()
        for target in ("sm_80", "sm_90", "sm_90a", "sm_100", "sm_100a"):
            p, _ = assemble(tmp_path, target, instruction)
            if p.returncode == 0:
                got.add(target)
            else:
                assert "not supported on .target" in p.stderr or "requires .target" in p.stderr, p.stderr
        assert got == want, f"{instruction.split()[0]} assembles for {sorted(got)}, README.md says {sorted(want)}"
