"""Category 2: each kernel's SASS holds the instructions its step teaches.

cuobjdump/nvdisasm come from PATH, the toolkit, or the wheels requirements.txt
installs; a missing tool is a failure, never a skip.
"""

import pytest

from sass import check_sass, dump_sass, find_tool, opcode, pattern_regex

from conftest import binary


def test_cuobjdump_is_available():
    assert find_tool("cuobjdump").is_file()
    assert find_tool("nvdisasm").is_file()


def test_step_sass_contains_its_instructions(built, step_dir, step):
    functions = dump_sass(binary(step_dir))
    assert step.sass, f"{step_dir}/check.py declares no SASS"
    for kernel, lines, missing in check_sass(functions, step.sass):
        assert missing is not None, f"kernel {kernel} not found in {step_dir}"
        assert not missing, f"{kernel}: SASS lacks {missing}"


def test_pattern_syntax():
    rx = pattern_regex("LDG.E.128[.CONSTANT]")
    assert rx.match("LDG.E.128") and rx.match("LDG.E.128.CONSTANT")
    assert not rx.match("LDG.E.64") and not rx.match("LDG.E")
    assert pattern_regex("LDG.E[.CONSTANT]").match("LDG.E.CONSTANT")
    assert not pattern_regex("LDG.E[.CONSTANT]").match("LDG.E.128.CONSTANT")
    assert pattern_regex("SYNCS.ARRIVE*").match("SYNCS.ARRIVE.TRANS64.A1T0")
    assert opcode("/*0180*/  @!P0 LDG.E.128.CONSTANT R4, desc[UR10][R24.64] ;") == "LDG.E.128.CONSTANT"


def test_missing_instruction_is_reported(built):
    functions = dump_sass(binary("01_memcpy_baseline"))
    (kernel, _, missing), = check_sass(functions, {"copy_float4": ["LDG.E.128[.CONSTANT]", "LDGSTS.E.BYPASS.128"]})
    assert missing == ["LDGSTS.E.BYPASS.128"]
    (_, _, missing), = check_sass(functions, {"no_such_kernel": ["LDG.E"]})
    assert missing is None


def test_step01_scalar_and_vector_widths(built):
    functions = dump_sass(binary("01_memcpy_baseline"))
    ops = {k: [opcode(ln) for ln in v] for k, v in functions.items()}
    scalar = next(v for k, v in ops.items() if "11copy_scalar" in k)
    assert not any(o.startswith(("LDG.E.128", "LDG.E.64")) for o in scalar), "copy_scalar must load 4 bytes"


def test_step01_batched_issues_all_loads_before_first_store(built):
    # The point of staged_batched: BATCH independent 16-byte loads in flight
    # before the first STS needs any of them.
    functions = dump_sass(binary("01_memcpy_baseline"))
    for name, want in (("14staged_batched", 4), ("10staged_one", 1)):
        ops = [opcode(ln) for ln in next(v for k, v in functions.items() if name in k)]
        first_sts = next(i for i, o in enumerate(ops) if o.startswith("STS"))
        loads = sum(o.startswith("LDG.E.128") for o in ops[:first_sts])
        assert loads == want, f"{name}: {loads} LDG.E.128 before the first STS, want {want}"


def test_step02_groups_wait_oldest_first(built):
    # groups(): four groups in flight, then wait_group 3, 2, 1, 0 in that order
    # (DEPBAR.LE SB0, N is cp.async.wait_group N).
    from sass import kernel_function
    functions = dump_sass(binary("02_cp_async"))
    lines = functions[kernel_function(functions, "groups")]
    waits = [int(m, 16) for ln in lines for m in __import__("re").findall(r"DEPBAR\.LE SB0, (0x[0-9a-f]+)", ln)]
    assert waits[:4] == [3, 2, 1, 0], waits
    commits = sum(opcode(ln) == "LDGDEPBAR" for ln in lines)
    assert commits >= 4, "one commit_group per row"


def test_step02_pipeline_waits_stages_minus_one(built):
    from sass import kernel_function
    functions = dump_sass(binary("02_cp_async"))
    for stages in (1, 2, 3, 4):
        lines = functions[kernel_function(functions, f"pipeline<{stages}>")]
        text = "\n".join(lines)
        assert f"DEPBAR.LE SB0, {hex(stages - 1)}" in text, f"pipeline<{stages}> lacks wait_group {stages - 1}"


def test_kernel_names_with_template_arguments():
    from sass import kernel_function
    fns = {"_Z6stagedILi4EEvPK6float4PS0_m": [], "_Z6stagedILi0EEvPK6float4PS0_m": [], "_Z6groupsPK6float4PS_miPx": []}
    assert kernel_function(fns, "staged<4>") == "_Z6stagedILi4EEvPK6float4PS0_m"
    assert kernel_function(fns, "staged<0>") == "_Z6stagedILi0EEvPK6float4PS0_m"
    assert kernel_function(fns, "groups") == "_Z6groupsPK6float4PS_miPx"
    assert kernel_function(fns, "staged") is None


@pytest.mark.parametrize("step_name", ["03_tma_load", "04_tma_store", "05_swizzle"])
def test_tma_steps_use_shared_not_generic_accesses(built, step_name):
    # Rounding the dynamic shared-memory base up through uintptr_t once made
    # every shared access a generic LD/ST; tma_smem_base<>() keeps them LDS/STS.
    functions = dump_sass(binary(step_name))
    generic = [(f, ln) for f, lines in functions.items() for ln in lines if opcode(ln).split(".")[0] in ("LD", "ST")]
    assert not generic, f"generic loads/stores (shared memory seen as generic): {generic[:3]}"
