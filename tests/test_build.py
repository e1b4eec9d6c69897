"""Every step builds, with no warnings, with the required flags, and is rebuilt
when anything it includes, or a flag, changes."""

import re

from conftest import REPO, STEP_DIRS, WARNING_RE, binary, run
from contract import twin_dirs


def test_step_builds_without_warnings(built, step_dir):
    log = REPO / "build" / f"{step_dir}.log"
    assert binary(step_dir).is_file()
    assert log.is_file(), "the Makefile keeps each step's compiler output in build/NN_topic.log"
    # ptxas's advisories count too (WARNING_RE): a missing wgmma.fence is 09_gemm/bugs/2.diff.
    warnings = [ln for ln in log.read_text().splitlines() if re.search(WARNING_RE, ln, re.I)]
    assert not warnings, "compiler warnings:\n" + "\n".join(warnings)


def nvcc_command(*make_args, env=None):
    p = run(["make", "-n", *make_args], env=env)
    assert p.returncode == 0, p.stderr
    return [ln for ln in p.stdout.splitlines() if ln.startswith("nvcc") and " -o " in ln]


def test_required_flags(step_dir):
    cmd = nvcc_command("-B", f"build/{step_dir}")
    assert cmd, f"make -n -B build/{step_dir} plans no compile"
    for flag in ("-O3", "-lineinfo", "-gencode arch=compute_90a,code=sm_90a", "-I.", "-Wall", "-Wextra",
                 "-warn-spills", "-warn-lmem-usage"):
        assert flag in cmd[0], f"missing {flag} in: {cmd[0]}"
    assert not re.search(r"(^|\s)-w(\s|$)", cmd[0]), "warnings must not be hidden (-w)"


def test_environment_cannot_drop_required_flags():
    # NVCCFLAGS only adds; an ARCH in the environment is ignored (only `make ARCH=` changes it).
    import os
    env = dict(os.environ, NVCCFLAGS="-DEXTRA_FLAG", ARCH="x86_64")
    cmd = nvcc_command("-B", "build/01_memcpy_baseline", env=env)[0]
    assert "-DEXTRA_FLAG" in cmd and "-I." in cmd and "arch=compute_90a,code=sm_90a" in cmd


def test_headers_and_flags_trigger_rebuilds(built):
    # Touching a header rebuilds exactly the steps that include it (nvcc -MD
    # lists them); a new flag value rebuilds everything (build/flags.txt).
    # The lists must come from the compile itself: .d files left over from an
    # older build would make the -W checks below pass without it.
    for step_dir in STEP_DIRS:
        compile_cmd = " ".join(nvcc_command("-B", f"build/{step_dir}"))
        assert f"-MD -MF build/{step_dir}.d" in compile_cmd, compile_cmd
    # every step and every step's twins (build/twins/NN_topic) include the harness
    assert nvcc_command("-W", "common/tutorial.cuh", "all") and \
        len(nvcc_command("-W", "common/tutorial.cuh", "all")) == len(STEP_DIRS) + len(twin_dirs())
    rebuilt = " ".join(nvcc_command("-W", "04_tma_store/tma_store.cuh", "all"))
    assert "04_tma_store" in rebuilt and "01_memcpy_baseline" not in rebuilt and "03_tma_load.cu" not in rebuilt
    rebuilt = " ".join(nvcc_command("-W", "03_tma_load/mbarrier.cuh", "all"))
    assert all(d in rebuilt for d in ("03_tma_load", "04_tma_store", "05_swizzle")) and "02_cp_async" not in rebuilt


def test_a_changed_flag_rebuilds(built):
    p = run(["make", "-n", "MBAR_TIMEOUT_NS=5", "build/03_tma_load"])
    assert "-DMBAR_TIMEOUT_NS=5ull" in p.stdout


def test_build_terminal_output_is_short(built):
    # The ptxas resource report goes to the log, not the terminal: a learner's
    # `make run-NN` shows the compile command and the program, nothing else.
    p = run(["make", "-B", "build-01"])
    assert p.returncode == 0
    assert "ptxas info" not in p.stdout + p.stderr
    assert len((p.stdout + p.stderr).strip().splitlines()) == 1


def test_experiments_build():
    # Every experiment behind a lesson (results/experiments/*.cu) builds with
    # the steps' flags and headers into build/experiments/<name>, with no
    # warnings, like a step (`make experiments`).
    sources = sorted((REPO / "results" / "experiments").glob("*.cu"))
    assert sources, "no results/experiments/*.cu"
    p = run(["make", "experiments"])
    assert p.returncode == 0, f"make experiments failed:\n{p.stdout}\n{p.stderr}"
    for src in sources:
        exe = REPO / "build" / "experiments" / src.stem
        log = exe.with_name(exe.name + ".log")
        assert exe.is_file(), f"make experiments built no {exe.relative_to(REPO)} from {src.relative_to(REPO)}"
        assert exe.stat().st_mtime >= src.stat().st_mtime, f"{exe.relative_to(REPO)} is older than its source"
        assert log.is_file(), f"no build log {log.relative_to(REPO)}"
        warnings = [ln for ln in log.read_text().splitlines() if re.search(r"\bwarning\b", ln, re.I)]
        assert not warnings, f"{src.name}: compiler warnings:\n" + "\n".join(warnings)
    cmd = nvcc_command("-B", "experiments")
    assert len(cmd) == len(sources), cmd
    for flag in ("-O3", "-lineinfo", "-gencode arch=compute_90a,code=sm_90a", "-I.", "-Wall", "-Wextra",
                 "-warn-spills", "-warn-lmem-usage"):
        assert all(flag in c for c in cmd), f"missing {flag} in an experiment's build: {cmd}"
