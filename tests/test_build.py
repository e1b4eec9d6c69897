"""Every step builds, with no warnings, with the required flags, and is rebuilt
when anything it includes, or a flag, changes."""

import os
import pathlib
import re

from conftest import REPO, STEP_DIRS, WARNING_RE, binary, run
from contract import build_facts, twin_dirs

import patches


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


def test_experiment_variants_still_apply():
    # A variant an experiment timed against a step (results/experiments/*.diff, e.g. the L2 prefetch lesson
    # 10 reports) must still apply to the step as it is: a reader can rebuild what the numbers came from.
    diffs = sorted((REPO / "results" / "experiments").glob("*.diff"))
    assert diffs, "no experiment variant found: results/experiments/*.diff moved?"
    for d in diffs:
        try:
            patches.plan(d.read_text(), REPO)
        except ValueError as e:
            raise AssertionError(f"{d.relative_to(REPO)} no longer applies: {e}") from None


def test_experiments_build():
    # Every experiment behind a lesson (results/experiments/*.cu) builds with
    # the steps' flags and headers into build/experiments/<name>, with no
    # warnings, like a step (`make experiments`).
    sources = sorted((REPO / "results" / "experiments").glob("*.cu"))
    assert sources, "no results/experiments/*.cu"
    p = run(["make", f"-j{os.cpu_count() or 2}", "experiments"])  # one build each: as many at once as cores
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


def test_the_toolkit_is_found_from_cuda_home_or_nvcc():
    # `make CUDA_HOME=...` and `make NVCC=...` name the compiler; with no nvcc on PATH, CUDA_HOME from the
    # environment does (a course machine's module system sets it); otherwise nvcc from PATH.
    def compiler(*args, env=None):
        p = run(["make", "-s", "compile-command-03", *args], env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stdout.split()[0]
    bare = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if not (pathlib.Path(d) / "nvcc").exists())
    assert compiler("CUDA_HOME=/opt/cuda-x") == "/opt/cuda-x/bin/nvcc"
    assert compiler("NVCC=/opt/y/nvcc") == "/opt/y/nvcc"
    assert compiler(env=dict(os.environ, PATH=bare, CUDA_HOME="/opt/cuda-z")) == "/opt/cuda-z/bin/nvcc"
    assert compiler(env=dict(os.environ, CUDA_HOME="/opt/cuda-z")) == "nvcc"  # nvcc on PATH wins over the environment


def test_sanitize_runs_the_three_tools_by_default():
    # tools/sanitize.sh runs the tools a step's build facts name (contract.build_facts): memcheck, racecheck
    # and synccheck unless its check.py names its own (09 and 10, and their lessons say why).
    script = (REPO / "tools" / "sanitize.sh").read_text()
    assert "tools/contract.py sanitize-tools" in script and "tools/contract.py sanitize-args" in script
    named = [d for d in STEP_DIRS if build_facts(d)["sanitize_tools"] != ["memcheck", "racecheck", "synccheck"]]
    assert named == ["09_gemm", "10_grouped_gemm"], named


def test_check_nn_fails_when_the_step_fails_and_its_twins_pass(tmp_path):
    # make check-NN checks the step, then its twins: a failing step fails it even if the twins pass last.
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\n# the step fails, its twins pass\ncase \"$2\" in */twins) exit 0;; *) exit 1;; esac\n")
    fake.chmod(0o755)
    p = run(["make", "check-03", f"PYTHON={fake}"])
    assert p.returncode != 0, p.stdout + p.stderr
    fake.write_text("#!/bin/sh\nexit 0\n")
    p = run(["make", "check-03", f"PYTHON={fake}"])
    assert p.returncode == 0, p.stdout + p.stderr
