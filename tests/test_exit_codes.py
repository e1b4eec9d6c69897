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


@pytest.mark.parametrize("args,message", [
    (["--mib", "0"], "--mib 0 is out of range: it must be 1..16384"),
    (["--mib", "1.5"], "--mib '1.5' is not a whole number"),
    (["--mib", "99999"], "--mib 99999 is out of range"),
])
def test_step01_size_rules(built, args, message):
    p = run([str(binary("01_memcpy_baseline")), *args], env=no_gpu_env())
    assert p.returncode == 2 and message in p.stderr, p.stderr
