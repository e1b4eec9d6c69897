"""The program contract without a GPU.

Exit 77 with one clear line when no GPU is visible; exit 2 with the broken rule
on bad arguments, all validated before the GPU is touched (so this runs
anywhere); --help exits 0 and lists exactly the options the step takes.
"""

import pathlib
import re

import pytest

from conftest import STEP_DIRS, binary, no_gpu_env, run

# The standard options each step declares (CliSpec.takes): an option a step
# does not use is refused, not ignored.
TAKES = {
    "01_memcpy_baseline": {"--reps", "--seed"},
    "02_cp_async": {"--reps", "--seed"},
    "03_tma_load": {"--reps"},
    "04_tma_store": {"--reps", "--seed"},
    "05_swizzle": {"--dump"},
    "06_transpose": {"--reps"},
    "07_reduce_multicast": {"--reps", "--seed"},
    "08_descriptor_update": {"--reps"},
    "09_gemm": {"--reps", "--seed"},
    "10_grouped_gemm": {"--reps", "--seed"},
}
STANDARD = {"--reps": ["--reps", "3"], "--seed": ["--seed", "3"], "--dump": ["--dump", "x.json"]}


def test_every_step_declares_what_it_takes():
    assert set(TAKES) == set(STEP_DIRS)


def test_no_gpu_exits_77_with_one_line(built, step_dir):
    p = run([str(binary(step_dir))], env=no_gpu_env())
    assert p.returncode == 77, f"exit {p.returncode}, stderr {p.stderr!r}"
    assert p.stdout == "", "nothing may be printed before the GPU guard"
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("no CUDA device found"), p.stderr


def test_quick_is_accepted_everywhere(built, step_dir):
    p = run([str(binary(step_dir)), "--quick"], env=no_gpu_env())
    assert p.returncode == 77, p.stderr  # accepted, then the GPU guard


def test_make_run_without_gpu_fails_with_the_one_line(built):
    # make itself turns any failing recipe into its own exit 2 and names the
    # program's code ("Error 77"); the program's line is what it prints besides.
    p = run(["make", "--no-print-directory", "run-01"], env=no_gpu_env())
    assert p.returncode != 0
    assert "no CUDA device found" in p.stderr and "Error 77" in p.stderr
    assert "ptxas" not in p.stdout + p.stderr


def test_help_lists_what_the_step_takes(built, step_dir):
    p = run([str(binary(step_dir)), "--help"], env=no_gpu_env())
    assert p.returncode == 0
    for opt in ("--help", "--quick", "exit codes"):
        assert opt in p.stdout
    for opt in STANDARD:
        assert (f"  {opt} " in p.stdout) == (opt in TAKES[step_dir]), f"--help and TAKES disagree on {opt}"


def test_options_not_taken_are_refused(built, step_dir):
    for opt, args in STANDARD.items():
        p = run([str(binary(step_dir)), *args], env=no_gpu_env())
        if opt in TAKES[step_dir]:
            assert p.returncode == 77, f"{args}: {p.stderr}"
        else:
            assert p.returncode == 2 and f"unknown option '{opt}'" in p.stderr, f"{args}: {p.stderr}"


BAD_ARGS = [
    (["--bogus"], "unknown option '--bogus'"),
    (["--reps", "0"], "--reps 0 is out of range"),
    (["--reps", "abc"], "--reps 'abc' is not a whole number"),
    (["--reps"], "--reps needs a value"),
    (["--reps", "99999999999999999999999"], "--reps 99999999999999999999999 is out of range"),
    (["--seed", "-1"], "--seed -1 is out of range"),
    (["--seed", "4294967296"], "--seed 4294967296 is out of range"),
    (["--dump"], "--dump needs a file name"),
    (["--dump", ""], "--dump needs a file name"),
    (["--dump", "--quick"], "--dump needs a file name"),
    (["--dump", "/nonexistent-folder/x.json"], "its folder is not writable"),
]
# Each step with the bad arguments of the options it takes (--bogus: all).
BAD_CASES = [(d, args, message) for d in STEP_DIRS for args, message in BAD_ARGS
             if args[0] == "--bogus" or args[0] in TAKES[d]]


@pytest.mark.parametrize("step_name,args,message", BAD_CASES, ids=lambda x: " ".join(x) if isinstance(x, list) else x)
def test_bad_standard_arguments_exit_2_naming_the_rule(built, step_name, args, message):
    p = run([str(binary(step_name)), *args], env=no_gpu_env())
    assert p.returncode == 2, f"{args}: exit {p.returncode}"
    assert message in p.stderr, p.stderr
    assert p.stdout == ""


# Each step's own rules, checked before the GPU is touched; the messages name
# the option, the rule and a value that works.
STEP_RULES = [
    ("01_memcpy_baseline", ["--mib", "0"], "--mib 0 is out of range: it must be 1..16384"),
    ("01_memcpy_baseline", ["--mib", "1.5"], "--mib '1.5' is not a whole number"),
    ("01_memcpy_baseline", ["--mib", "99999"], "--mib 99999 is out of range"),
    ("01_memcpy_baseline", ["--mib", "16384"], "needs 80.00 GiB of host memory"),  # refused on small hosts only
    ("02_cp_async", ["--chunk", "3"], "--chunk 3 does not divide the 65536 16 KiB tiles of the buffers (64 per "
                                      "MiB): use a divisor of 65536, such as 2"),
    ("02_cp_async", ["--chunk", "128", "--mib", "1"], "use a divisor of 64, such as 64"),
    ("02_cp_async", ["--stages", "5"], "--stages 5 is out of range: it must be 3..4"),
    ("02_cp_async", ["--degree", "0"], "--degree 0 is out of range"),
    ("02_cp_async", ["--tail", "0"], "--tail 0 is out of range"),
    ("03_tma_load", ["--cols", "1001"], "--rows 3000 --cols 1001 --box-rows 64 --box-cols 64: row stride 4004 B is "
                                        "not a multiple of 16 B, which TMA requires: pad the row to 1004 elements"),
    ("03_tma_load", ["--box-cols", "300"], "--box-cols 300 is out of range: it must be 1..256"),
    ("03_tma_load", ["--box-cols", "3"], "inner box dimension 3 x 4 B = 12 B is not a multiple of 16 B"),
    ("03_tma_load", ["--box-rows", "256", "--box-cols", "256"], "does not fit"),
    ("03_tma_load", ["--bulk-bytes", "1000"], "bulk copy size 1000 B is not a multiple of 16 B"),
    ("03_tma_load", ["--bulk-bytes", "48"], "--bulk-bytes 48 does not divide the 1048576 bytes"),
    ("03_tma_load", ["--chunk", "3"], "--chunk 3 does not divide the 65536 16 KiB boxes"),
    ("03_tma_load", ["--rows", "1048576", "--cols", "1048576"], "GiB of host memory, only"),
    ("04_tma_store", ["--cols", "1001"], "--rows 3000 --cols 1001: row stride 4004 B is not a multiple of 16 B"),
    ("04_tma_store", ["--bulk-bytes", "48"], "--bulk-bytes 48 does not divide the 1048576 bytes of the 1 MiB part-4"),
    ("04_tma_store", ["--chunk", "3"], "--chunk 3 does not divide"),
    ("04_tma_store", ["--rows", "1048576", "--cols", "1048576"], "GiB of host memory, only"),
    # The part-5 copy's memory is --mib's: the message names it, not --rows --cols.
    ("04_tma_store", ["--mib", "16384"], "error: --mib 16384 needs 32.00 GiB of host memory"),
    ("06_transpose", ["--cols", "1001", "--ld", "1001"], "--rows 16384 --cols 1001 --ld 1001: row stride 4004 B is "
                                                         "not a multiple of 16 B, which TMA requires: pad the row to "
                                                         "1004 elements"),
    ("06_transpose", ["--cols", "1001", "--ld", "1000"], "--ld must be at least --cols"),
    ("06_transpose", ["--rows", "40000"], "--rows 40000 is out of range: it must be 1..32768"),
    ("06_transpose", ["--band", "0"], "--band 0 is out of range"),
    ("07_reduce_multicast", ["--rows", "100"], "--rows 100 --cols 512: both must be multiples of 64"),
    ("07_reduce_multicast", ["--ctas", "40"], "--ctas 40 is not a multiple of 16"),
    ("08_descriptor_update", ["--cols", "30"], "--cols 30 is not a multiple of 4"),
    ("08_descriptor_update", ["--groups", "1"], "--groups 1 is out of range: it must be 2..192"),
    ("09_gemm", ["--splitk-k", "100", "--splits", "4"], "--splitk-k 100 has only 2 k-blocks of 64, and every piece needs one"),
    ("09_gemm", ["--m", "100000"], "--m 100000 is out of range: it must be 1..32768"),
    ("10_grouped_gemm", ["--n", "1030"], "--n 1030 is not a multiple of 4: C's rows leave through the TMA store"),
    ("10_grouped_gemm", ["--experts", "300"], "--experts 300 is out of range: it must be 1..256"),
]


def host_available_gib() -> float:
    for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / (1 << 20)
    return 0.0


@pytest.mark.parametrize("step_name,args,message", STEP_RULES, ids=lambda x: " ".join(x) if isinstance(x, list) else x)
def test_step_size_rules(built, step_name, args, message):
    p = run([str(binary(step_name)), *args], env=no_gpu_env())
    needed = re.search(r"needs ([\d.]+) GiB", message)
    if needed and p.returncode == 77 and host_available_gib() >= float(needed.group(1)):
        pytest.skip("this machine has the memory: the rule cannot show here")
    assert p.returncode == 2 and message in p.stderr, p.stderr


# --help does not print over a broken rule: each step's own rules (its
# check_arguments, run by parse_cli) are checked first. Memory is not a rule
# of the arguments: --help never refuses for want of it.
@pytest.mark.parametrize("step_name,args,message", [r for r in STEP_RULES if "GiB" not in r[2]],
                         ids=lambda x: " ".join(x) if isinstance(x, list) else x)
def test_help_checks_the_step_rules_first(built, step_name, args, message):
    for line in (["--help", *args], [*args, "--help"]):
        p = run([str(binary(step_name)), *line], env=no_gpu_env())
        assert p.returncode == 2 and message in p.stderr and p.stdout == "", (line, p.stderr)


def test_help_ignores_the_memory_of_this_machine(built):
    p = run([str(binary("01_memcpy_baseline")), "--help", "--mib", "16384"], env=no_gpu_env())
    assert p.returncode == 0 and "usage:" in p.stdout, p.stderr


# The command line's one rule, the same in every step (common/tutorial.cuh,
# section 3): the whole line is validated first, --help included; each option
# at most once; a value as "--opt V" or "--opt=V"; a number in plain decimal
# digits (no '+', spaces or leading zeros). Errors are one line on stderr
# naming the option. 05 has no number option: only the flags' rules apply.
def rule_cases(n: str | None, v: str = "", w: str = ""):
    flags = [
        (["--help", "--nonsense"], 2, "unknown option '--nonsense'"),
        (["--nonsense", "--help"], 2, "unknown option '--nonsense'"),
        (["--help"], 0, None),
        (["--quick", "--quick"], 2, "--quick given twice"),
        (["--help", "-h"], 2, "--help given twice"),
        (["--quick=1"], 2, "--quick takes no value"),
        (["--quick"], 77, None),
    ]
    if n is None:  # a program with no number option (05)
        return flags
    not_a_number = f"{n} '{{}}' is not a whole number"
    return flags + [
        (["--help", n, "+" + v], 2, not_a_number.format("+" + v)),
        (["--help", "--quick", n, v], 0, None),
        ([n, "+" + v], 2, not_a_number.format("+" + v)),
        ([n, " " + v], 2, not_a_number.format(" " + v)),
        ([n, v + "x"], 2, not_a_number.format(v + "x")),
        ([n, "0" + v], 2, not_a_number.format("0" + v)),
        ([n, "-0"], 2, not_a_number.format("-0")),
        ([f"{n}={v}"], 77, None),
        ([f"{n}=+{v}"], 2, not_a_number.format("+" + v)),
        ([n, v, n, w], 2, f"{n} given twice"),
        ([f"{n}={v}", n, w], 2, f"{n} given twice"),
        ([n, v, "--quick"], 77, None),
    ]


RULE_CASES = [(d, args, code, message) for d in STEP_DIRS
              for args, code, message in (rule_cases("--reps", "5", "6") if "--reps" in TAKES[d]
                                          else rule_cases(None))]


@pytest.mark.parametrize("step_name,args,code,message", RULE_CASES,
                         ids=lambda x: repr(" ".join(x)) if isinstance(x, list) else str(x))
def test_the_command_line_rule(built, step_name, args, code, message):
    p = run([str(binary(step_name)), *args], env=no_gpu_env())
    assert p.returncode == code, f"{args}: exit {p.returncode}, stderr {p.stderr!r}"
    if code == 0:
        assert "usage:" in p.stdout and p.stderr == ""
        return
    assert p.stdout == "" and len(p.stderr.splitlines()) == 1, p.stderr
    want = f"error: {message}" if code == 2 else "no CUDA device found"
    assert p.stderr.startswith(want), p.stderr


def options_in_help(step_name):
    """(option, a valid value under --quick) for every option --help lists; None for a flag."""
    out = run([str(binary(step_name)), "--help"], env=no_gpu_env()).stdout
    found = []
    for m in re.finditer(r"^  (--[\w-]+) (\w*) .*$", out, re.M):
        q = re.search(r"default (\d+)(?:, --quick (\d+))?\)$", m.group(0))
        found.append((m.group(1), None if not m.group(2) else "x.json" if m.group(2) == "FILE"
                      else q.group(2) or q.group(1)))
    return found


def test_every_option_given_twice_is_refused(built, step_dir):
    options = options_in_help(step_dir)
    assert {"--help", "--quick"} | TAKES[step_dir] <= {o for o, _ in options}
    for opt, value in options:
        once = [opt] if value is None else [opt, value]
        p = run([str(binary(step_dir)), *once, *once], env=no_gpu_env())
        assert p.returncode == 2 and p.stderr == f"error: {opt} given twice (see --help)\n", f"{once * 2}: {p.stderr}"


def test_every_number_option_reads_the_same_way(built, step_dir):
    for opt, value in options_in_help(step_dir):
        if value is None:
            continue
        p = run([str(binary(step_dir)), f"{opt}={value}", "--quick"], env=no_gpu_env())
        assert p.returncode == 77, f"{opt}={value}: {p.stderr}"
        if value == "x.json":
            continue
        for bad in ("+" + value, " " + value, value + " ", value + "x", "0" + value):
            p = run([str(binary(step_dir)), opt, bad], env=no_gpu_env())
            assert p.returncode == 2 and f"{opt} '{bad}' is not a whole number" in p.stderr, f"{opt} {bad!r}: {p.stderr}"


def test_every_option_at_once_and_the_argument_after_them(built, step_dir):
    # Every option once (--help aside) is a valid line; no fixed-size argument
    # copy: the argument after them all is judged like the first.
    line = [a for opt, value in options_in_help(step_dir) if opt != "--help"
            for a in ([opt] if value is None else [opt, value])]
    p = run([str(binary(step_dir)), *line], env=no_gpu_env())
    assert p.returncode == 77, f"{line}: {p.stderr}"
    p = run([str(binary(step_dir)), *line, "--bogus"], env=no_gpu_env())
    assert p.returncode == 2 and p.stderr == "error: unknown option '--bogus' (see --help)\n", p.stderr
