"""Category 2: each kernel's SASS holds the instructions its step teaches.

cuobjdump/nvdisasm come from PATH, the toolkit, or the wheels requirements.txt
installs; a missing tool is a failure, never a skip.
"""

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
