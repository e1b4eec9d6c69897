"""Categories 3 and 4: the program contract without a GPU.

Exit 77 with one clear line when no GPU is visible; exit 2 with the broken rule
on bad arguments (validated before the GPU is touched, so this runs anywhere);
--help exits 0.
"""

import pytest

from conftest import binary, no_gpu_env, run

BAD_ARGS = [
    (["--bogus"], "unknown option '--bogus'"),
    (["--reps", "0"], "--reps 0 is out of range"),
    (["--reps", "abc"], "--reps 'abc' is not a whole number"),
    (["--reps"], "--reps needs a value"),
    (["--seed", "-1"], "--seed -1 is out of range"),
    (["--seed", "4294967296"], "--seed 4294967296 is out of range"),
]


def test_no_gpu_exits_77_with_one_line(built, step_dir):
    p = run([str(binary(step_dir))], env=no_gpu_env())
    assert p.returncode == 77, f"exit {p.returncode}, stderr {p.stderr!r}"
    assert p.stdout == "", "nothing may be printed before the GPU guard"
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("no CUDA device found"), p.stderr


def test_make_run_without_gpu_fails_with_the_one_line(built):
    # make itself turns any failing recipe into its own exit 2 and names the
    # program's code ("Error 77"); the program's line is all it prints besides.
    p = run(["make", "--no-print-directory", "run-01"], env=no_gpu_env())
    assert p.returncode != 0
    assert "no CUDA device found" in p.stderr and "Error 77" in p.stderr


def test_help_exits_0(built, step_dir):
    p = run([str(binary(step_dir)), "--help"], env=no_gpu_env())
    assert p.returncode == 0
    for opt in ("--help", "--quick", "--reps", "--seed", "exit codes"):
        assert opt in p.stdout


@pytest.mark.parametrize("args,message", BAD_ARGS)
def test_bad_arguments_exit_2_naming_the_rule(built, step_dir, args, message):
    p = run([str(binary(step_dir)), *args], env=no_gpu_env())
    assert p.returncode == 2, f"{args}: exit {p.returncode}"
    assert message in p.stderr, p.stderr
    assert p.stdout == ""


# Each step's own size rules, checked before the GPU is touched.
STEP_RULES = [
    ("01_memcpy_baseline", ["--mib", "0"], "--mib 0 is out of range: it must be 1..16384"),
    ("01_memcpy_baseline", ["--mib", "1.5"], "--mib '1.5' is not a whole number"),
    ("01_memcpy_baseline", ["--mib", "99999"], "--mib 99999 is out of range"),
    ("02_cp_async", ["--chunk", "3"], "--chunk 3 does not divide the 65536 16 KiB tiles"),
    ("02_cp_async", ["--stages", "5"], "--stages 5 is out of range: it must be 3..4"),
    ("02_cp_async", ["--bug", "3"], "--bug 3 is out of range"),
    ("02_cp_async", ["--degree", "0"], "--degree 0 is out of range"),
    ("02_cp_async", ["--tail", "0"], "--tail 0 is out of range"),
    ("03_tma_load", ["--cols", "1001"], "row stride 4004 B is not a multiple of 16 B, which TMA requires: pad the row"),
    ("03_tma_load", ["--box-cols", "300"], "box dimension 0 is 300 elements: it must be 1..256"),
    ("03_tma_load", ["--box-cols", "3"], "inner box dimension 3 x 4 B = 12 B is not a multiple of 16 B"),
    ("03_tma_load", ["--box-rows", "256", "--box-cols", "256"], "does not fit"),
    ("03_tma_load", ["--bulk-bytes", "1000"], "bulk copy size 1000 B is not a multiple of 16 B"),
    ("03_tma_load", ["--chunk", "3"], "--chunk 3 does not divide"),
    ("04_tma_store", ["--cols", "1001"], "is not a multiple of 16 B, which TMA requires"),
    ("04_tma_store", ["--bulk-bytes", "48"], "--bulk-bytes 48 does not divide the 1048576 bytes of the 1 MiB part-3"),
    ("04_tma_store", ["--chunk", "3"], "--chunk 3 does not divide"),
]


@pytest.mark.parametrize("step_name,args,message", STEP_RULES)
def test_step_size_rules(built, step_name, args, message):
    p = run([str(binary(step_name)), *args], env=no_gpu_env())
    assert p.returncode == 2 and message in p.stderr, p.stderr
