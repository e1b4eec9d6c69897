"""The C++ twins of the steps' PTX (issue: "from the PTX you learned to the APIs you will use"): every
NN_topic/twins/*.cu is compiled for sm_90a and each twin's SASS compared with its PTX kernel's, instruction
by instruction, registers and addresses aside. Equal, or the difference is named here and in the step's
twins/README.md: CuTe's L2 cache-hint operand, cooperative groups' loop and block barrier, the byte-by-byte
fallback of cuda::memcpy_async without cuda::aligned_size_t, cuda::barrier's own wait."""

import collections
import difflib
import inspect
import re
import subprocess

import pytest

from sass import dump_sass, instruction

from checker import load_step
from conftest import REPO, WARNING_RE, cute_include, no_gpu_env, run
from contract import binary_path, twin_dirs

TWINS = {
    "02": REPO / "02_cp_async" / "twins" / "cp_async_twins.cu",
    "03": REPO / "03_tma_load" / "twins" / "tma_load_twins.cu",
    "04": REPO / "04_tma_store" / "twins" / "tma_store_twins.cu",
    "07": REPO / "07_reduce_multicast" / "twins" / "reduce_multicast_twins.cu",
    "08": REPO / "08_descriptor_update" / "twins" / "tensormap_edit_twins.cu",
    "09": REPO / "09_gemm" / "twins" / "wgmma_twins.cu",
}

# (step, PTX kernel, twin): the same machine code, instruction for instruction.
EQUAL = [
    ("02", "copy_ptx", "copy_pipeline_primitives"),
    ("02", "copy_ptx", "copy_cuda_memcpy_async"),
    ("02", "copy_ptx", "copy_cuda_memcpy_async_typed"),
    ("03", "load_ptx", "load_cuda_ptx"),
    ("03", "load_ptx", "load_cuda_experimental"),
    ("03", "bulk_ptx", "bulk_cuda_ptx"),
    ("03", "bulk_ptx", "bulk_memcpy_async_tx"),
    ("03", "bulk_ptx", "bulk_cute"),
    ("04", "store_ptx", "store_cuda_ptx"),
    ("04", "store_ptx", "store_cuda_experimental"),
    ("04", "store_ptx", "store_cute"),
    ("07", "reduce_ptx", "reduce_cuda_ptx"),
    ("07", "reduce_ptx", "reduce_cute"),
    ("07", "multicast_ptx", "multicast_cuda_ptx"),
    ("08", "retarget_ptx", "retarget_cuda_ptx"),
    ("09", "mma_ptx", "mma_cute"),
]
# The instruction each PTX kernel is about: the comparison must not pass on two kernels that lost it.
KEY = {"copy_ptx": "LDGSTS.E.BYPASS.128", "load_ptx": "UTMALDG.2D", "bulk_ptx": "UBLKCP.S.G",
       "store_ptx": "UTMASTG.2D", "reduce_ptx": "UTMAREDG.2D.ADD", "multicast_ptx": "UTMALDG.2D.MULTICAST",
       "retarget_ptx": "UTMACCTL.IV", "mma_ptx": "HGMMA.64x256x16.F32.BF16"}
# CuTe's TMA loads: the PTX kernel's machine code plus the L2 cache-hint operand.
CACHE_HINT = [("03", "load_ptx", "load_cute_atom"), ("03", "load_ptx", "load_cute"), ("07", "multicast_ptx", "multicast_cute")]
# (step, kernel, twin, the test): every other comparison, a difference named by its own test.
NAMED = [
    *[(s, k, t, "test_cute_tma_loads_differ_only_by_the_cache_hint") for s, k, t in CACHE_HINT],
    ("07", "multicast_cute", "multicast_cute_tiled", "test_cute_tiled_multicast_keeps_the_atom_twin_s_loads_and_barriers"),
    ("02", "copy_ptx", "copy_cooperative_groups", "test_cooperative_groups_copy_adds_a_loop_and_a_block_barrier"),
    ("02", "copy_ptx", "copy_cuda_memcpy_async_unaligned", "test_memcpy_async_without_an_aligned_size_copies_byte_by_byte"),
    ("03", "bulk_ptx", "bulk_memcpy_async_tx_copy_first",
     "test_memcpy_async_tx_before_the_arrive_is_the_same_instructions_reordered"),
    ("03", "bulk_ptx", "bulk_cuda_barrier", "test_cuda_barrier_waits_without_a_bound"),
]


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


def kernel_name(mangled):
    """'_Z8load_ptx14CUtensorMap_stPj' -> 'load_ptx' (the length-prefixed name of an Itanium mangling)."""
    m = re.match(r"_Z(\d+)", mangled)
    return mangled[m.end():m.end() + int(m[1])]


def compiled(source, tmp):
    """{kernel name: normalized SASS} of one twins program, built with the steps' target and warnings and
    the flags the Makefile adds for the twins (CuTe's headers, --expt-relaxed-constexpr)."""
    cubin = tmp / (source.stem + ".cubin")
    p = subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-I.",
                        "--expt-relaxed-constexpr", "-isystem", str(cute_include()),
                        "-Xcompiler", "-Wall,-Wextra", "-cubin", "-o", str(cubin), str(source)],
                       cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    # ptxas's wgmma advisories (WARNING_RE) say it changed the code, e.g. injected a missing
    # warpgroup.arrive: the SASS then matches although the source is wrong.
    assert not re.search(WARNING_RE, p.stdout + p.stderr, re.I), p.stdout + p.stderr
    return {kernel_name(f): normalized(lines) for f, lines in dump_sass(cubin).items()}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("twins")
    cache = {}

    def of(step):
        if step not in cache:
            cache[step] = compiled(TWINS[step], tmp)
        return cache[step]
    return of


def sass_difference(ptx, twin):
    """Where two normalized kernels first differ, as the instructions only one of them has there; None if equal."""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ptx, twin, autojunk=False).get_opcodes():
        if tag != "equal":
            return f"instruction {i1}: PTX kernel {ptx[i1:i2][:2]}, twin {twin[j1:j2][:2]}"
    return None


def test_every_twins_program_is_compared():
    assert sorted(str(p.relative_to(REPO)) for p in REPO.glob("[0-9][0-9]_*/twins/*.cu")) == \
        sorted(str(p.relative_to(REPO)) for p in TWINS.values())
    assert twin_dirs() == sorted(str(p.parent.relative_to(REPO)) for p in TWINS.values())


def readme_pairs(twins_dir):
    """The README's "| twin | SASS against ..." table: [(PTX kernel or None, twin, says identical)]. The
    kernel is the PTX kernel the row names ("identical to `load_ptx`") or the header does ("against
    `copy_ptx`")."""
    pairs, header_kernel, in_table = [], None, False
    for line in (REPO / twins_dir / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) >= 2 and cells[0] == "twin" and cells[1].startswith("SASS against"):
            in_table, header_kernel = True, (re.findall(r"`(\w+)`", cells[1]) or [None])[0]
            continue
        if not cells:
            in_table = False
        if not in_table or set(cells[0]) <= set("- "):
            continue
        named = [k for k in re.findall(r"`(\w+)`", cells[1]) if k in KEY]
        for twin in re.findall(r"`(\w+)`", cells[0].split("(")[0]):
            pairs.append((named[0] if named else header_kernel, twin, cells[1].startswith("identical")))
    return pairs


def compares(test, step, ptx, twin):
    """Whether test function `test` of this file compares `twin` (with `ptx`): its parameters, or its body."""
    fn = globals().get(test)
    if not callable(fn):
        return False
    params = [tuple(a) for m in getattr(fn, "pytestmark", []) if m.name == "parametrize" for a in m.args[1]]
    return (step, ptx, twin) in params or f'"{twin}"' in inspect.getsource(fn)


def test_every_twin_the_rules_name_is_compared():
    # A twin of a step's rules (NN_topic/twins/check.py) or of its README's SASS table must be compared with
    # its kernel: in EQUAL, or by the test that names its difference (NAMED). A pair dropped from either,
    # or a difference's test deleted, leaves that twin unchecked while every remaining comparison passes.
    pairs = {(s, k, t) for s, k, t in EQUAL} | {(s, k, t) for s, k, t, test in NAMED if compares(test, s, k, t)}
    assert {(s, k, t) for s, k, t, _ in NAMED} <= pairs, "a named difference's test is gone or no longer names its twin"
    for twins_dir in twin_dirs():
        step, rules = twins_dir[:2], load_step(twins_dir)
        listed = set(rules.sass) | set(rules.sass_absent) | set(rules.sass_count)
        table = readme_pairs(twins_dir)
        assert table or step in ("04", "08", "09"), f"{twins_dir}/README.md: no '| twin | SASS against' table"
        for twin in sorted((listed | {t for _, t, _ in table}) - set(KEY)):
            assert any(s == step and t == twin for s, _, t in pairs), f"{twins_dir}: {twin} is compared with nothing"
        for ptx, twin, identical in table:  # "identical": the instruction-for-instruction comparison
            assert not identical or (step, ptx, twin) in EQUAL, f"{twins_dir}/README.md: {twin} is said identical " \
                f"to {ptx}, and EQUAL does not compare them"


def test_the_pair_check_sees_a_dropped_pair(monkeypatch):
    # The check above, against a pair removed from EQUAL and a named test renamed away.
    monkeypatch.setattr(__import__(__name__), "EQUAL", [e for e in EQUAL if e[2] != "store_cute"])
    with pytest.raises(AssertionError, match="store_cute is compared with nothing"):
        test_every_twin_the_rules_name_is_compared()
    monkeypatch.setattr(__import__(__name__), "EQUAL", EQUAL)
    monkeypatch.setattr(__import__(__name__), "NAMED", NAMED[:-1] + [(*NAMED[-1][:3], "test_gone")])
    with pytest.raises(AssertionError, match="named difference's test is gone"):
        test_every_twin_the_rules_name_is_compared()


@pytest.mark.parametrize("step,ptx,twin", EQUAL, ids=[f"{s}-{t}" for s, _, t in EQUAL])
def test_the_twin_is_the_ptx_kernel(kernels, step, ptx, twin):
    k = kernels(step)
    assert any(i.startswith(KEY[ptx]) for i in k[ptx]), f"{ptx} has no {KEY[ptx]}"
    assert sass_difference(k[ptx], k[twin]) is None, f"{twin}: {sass_difference(k[ptx], k[twin])}"


@pytest.mark.parametrize("step,ptx,twin", CACHE_HINT)
def test_cute_tma_loads_differ_only_by_the_cache_hint(kernels, step, ptx, twin):
    # CuTe's SM90_TMA_LOAD* always emit .L2::cache_hint with a 64-bit policy (EVICT_NORMAL here): two moves
    # of the policy's halves and one more operand of the load. Counted as multisets, because make_tma_copy's
    # coordinate arithmetic (load_cute) is scheduled differently; nothing else may differ.
    k = kernels(step)
    extra, missing = collections.Counter(k[twin]), collections.Counter(k[ptx])
    extra.subtract(k[ptx])
    missing.subtract(k[twin])
    load = [i for i in k[ptx] if i.startswith(KEY[ptx])]
    assert len(load) == 1
    assert +extra == collections.Counter({"UMOV R, 0x0": 1, "UMOV R, 0x10000000": 1, load[0] + ", desc[R]": 1})
    assert +missing == collections.Counter({load[0]: 1})


def test_cute_tiled_multicast_keeps_the_atom_twin_s_loads_and_barriers(kernels):
    # 07's make_tma_copy(SM90_TMA_LOAD_MULTICAST, matrix, box, cluster size) and get_slice(rank): every CTA
    # issues one multicast load of its share of the box, where the atom twin's CTA 0 issues the whole box.
    # The loads, barriers and stores are the atom twin's, in the same order, the load the same instruction
    # (with CuTe's cache hint); only the coordinates and the issuing predicate differ.
    k = kernels("07")
    tiled, atom = k["multicast_cute_tiled"], k["multicast_cute"]
    loads = [i for i in tiled if i.startswith("UTMALDG")]
    assert loads == [i for i in atom if i.startswith("UTMALDG")] == ["UTMALDG.2D.MULTICAST [R], [R], R, desc[R]"]
    assert memory_and_sync(tiled) == memory_and_sync(atom)
    assert sass_difference(atom, tiled), "a different kernel: its own coordinates"


def memory_and_sync(kernel):
    """The instructions that move data or synchronize, in order: what a twin with other arithmetic must keep."""
    keep = ("LDG", "STG", "LDS", "STS", "LDGSTS", "LDGDEPBAR", "DEPBAR", "BAR", "MEMBAR", "SYNCS", "UBLKCP", "UTMA")
    return [i for i in kernel if i.split()[0].split(".")[0] in keep]


def test_cooperative_groups_copy_adds_a_loop_and_a_block_barrier(kernels):
    # cg::memcpy_async splits the block's bytes over its threads in a loop (other arithmetic, the same
    # LDGSTS.E.BYPASS.128), and cg::wait is wait_group 0 AND a __syncthreads: one BAR.SYNC more.
    k = kernels("02")
    ptx, cg = memory_and_sync(k["copy_ptx"]), memory_and_sync(k["copy_cooperative_groups"])
    assert any(i.startswith("LDGSTS.E.BYPASS.128") for i in cg)
    assert sass_difference(ptx, cg) == "instruction 3: PTX kernel [], twin ['BAR.SYNC.DEFER_BLOCKING 0x0']"


def test_memcpy_async_without_an_aligned_size_copies_byte_by_byte(kernels):
    # The named difference (the lesson's trap): no LDGSTS, sixteen 1-byte loads and a store instead.
    trap = kernels("02")["copy_cuda_memcpy_async_unaligned"]
    assert not any(i.startswith("LDGSTS") for i in trap)
    assert sum(i.startswith("LDG.E.U8") for i in trap) == 16 and any(i.startswith("STS.128") for i in trap)
    assert sass_difference(kernels("02")["copy_ptx"], trap)


def test_memcpy_async_tx_before_the_arrive_is_the_same_instructions_reordered(kernels):
    # Copy first, then barrier_arrive_tx (as CCCL's examples write it): legal, the same instructions, but the
    # UBLKCP now comes before the arrive, where bulk_ptx (and its twins) arm the barrier first.
    k = kernels("03")
    ptx, twin = k["bulk_ptx"], k["bulk_memcpy_async_tx_copy_first"]
    assert collections.Counter(ptx) == collections.Counter(twin) and ptx != twin

    def first(ins, prefix):
        return next(i for i, x in enumerate(ins) if x.startswith(prefix))
    assert first(ptx, "SYNCS.ARRIVE") < first(ptx, "UBLKCP") and first(twin, "UBLKCP") < first(twin, "SYNCS.ARRIVE")


def test_a_cta_scope_release_of_the_edited_map_compiles_to_the_same_sass(kernels, tmp_path):
    # 08_descriptor_update/twins/README.md: scope_cta in tensormap_cp_fenceproxy gives the machine code of
    # scope_gpu, so only the PTX can tell them apart (which is why the step pins its fences in the PTX).
    text = TWINS["08"].read_text()
    call = "cuda::ptx::tensormap_cp_fenceproxy(cuda::ptx::sem_release, cuda::ptx::scope_gpu,"
    assert text.count(call) == 1
    planted = tmp_path / "cta_scope.cu"
    planted.write_text(text.replace(call, call.replace("scope_gpu", "scope_cta")))
    cta = compiled(planted, tmp_path)["retarget_cuda_ptx"]
    assert sass_difference(kernels("08")["retarget_cuda_ptx"], cta) is None


def test_cuda_barrier_waits_without_a_bound(kernels):
    # bar.wait(token): the same bulk copy, but CCCL's own wait: try_wait, then a back-off loop that sleeps
    # (NANOSLEEP) and never gives up, so it stores nothing but the output. The step's bounded wait never
    # sleeps, and when it gives up it writes its report (which barrier, where, which parity) to global
    # memory: more stores than the one output store.
    k = kernels("03")
    ptx, cccl = k["bulk_ptx"], k["bulk_cuda_barrier"]
    assert any(i.startswith("UBLKCP.S.G") for i in cccl) and any("TRYWAIT" in i for i in cccl)
    stores = {name: sum(i.startswith("STG") for i in k[name]) for name in ("bulk_ptx", "bulk_cuda_barrier")}
    assert stores["bulk_cuda_barrier"] == 1 and stores["bulk_ptx"] > 1, stores
    assert any(i.startswith("NANOSLEEP") for i in cccl) and not any(i.startswith("NANOSLEEP") for i in ptx)


def test_the_comparison_names_a_difference():
    assert sass_difference(["LDGSTS.E.BYPASS.128 [R], desc[R][R.64]"], ["LDG.E.U8 R, desc[R][R.64]"]) \
        == "instruction 0: PTX kernel ['LDGSTS.E.BYPASS.128 [R], desc[R][R.64]'], twin ['LDG.E.U8 R, desc[R][R.64]']"
    assert sass_difference(["A", "CCTL.IVALL", "B"], ["A", "B"]) == "instruction 1: PTX kernel ['CCTL.IVALL'], twin []"
    assert sass_difference(["A"], ["A"]) is None
    assert kernel_name("_Z8load_ptx14CUtensorMap_stPj") == "load_ptx"


# ---- The twins programs keep the program contract (without a GPU) --------------------------------------
PROGRAMS = twin_dirs()
SIZE_OPTION = {"02_cp_async/twins": "--mib", "09_gemm/twins": "--blocks"}  # the others: --boxes


@pytest.mark.parametrize("twins_dir", PROGRAMS)
def test_twins_program_builds_without_warnings(built, twins_dir):
    log = binary_path(twins_dir).with_name(binary_path(twins_dir).name + ".log")
    assert binary_path(twins_dir).is_file() and log.is_file(), "make all builds build/twins/NN_topic and its log"
    bad = [ln for ln in log.read_text().splitlines() if re.search(WARNING_RE, ln, re.I)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("twins_dir", PROGRAMS)
def test_twins_program_keeps_the_contract_without_a_gpu(built, twins_dir):
    exe = str(binary_path(twins_dir))
    for args in ([], ["--quick"]):
        p = run([exe, *args], env=no_gpu_env())
        assert p.returncode == 77 and p.stdout == "" and p.stderr.startswith("no CUDA device found"), p
    p = run([exe, "--help"], env=no_gpu_env())
    opt = SIZE_OPTION.get(twins_dir, "--boxes")
    assert p.returncode == 0 and opt in p.stdout and "--seed" in p.stdout and "--reps" not in p.stdout
    for args, rule in (([opt, "0"], "out of range"), (["--reps", "3"], "--reps"), (["--seed", "x"], "whole number")):
        p = run([exe, *args], env=no_gpu_env())
        assert p.returncode == 2 and rule in p.stderr, (args, p.returncode, p.stderr)


@pytest.mark.parametrize("twins_dir", PROGRAMS)
def test_twins_expected_output_passes_its_checker_and_a_failure_does_not(tmp_path, twins_dir):
    expected = REPO / twins_dir / "expected_output.txt"
    text = expected.read_text()
    assert "GPU    NVIDIA H200" in text and text.count("PASS  (0 of") >= 2
    p = run(["python3", "tools/checker.py", twins_dir, "--output", str(expected)])
    assert p.returncode == 0, p.stdout
    failed = tmp_path / "failed.txt"
    failed.write_text(re.sub(r"PASS  \(0 of (\d+) wrong\)", r"FAIL  (1 of \1 wrong)", text, count=1)
                      .replace("RESULT: PASS", "RESULT: FAIL"))
    p = run(["python3", "tools/checker.py", twins_dir, "--output", str(failed), "--exit-code", "1"])
    assert p.returncode == 1 and "check failed" in p.stdout, p.stdout


def test_thread_scopes_compile_to_these_ptx_scopes(tmp_path):
    # 03_tma_load/twins/README.md's table: cuda::thread_scope -> the scope of the PTX it compiles to.
    src = tmp_path / "scopes.cu"
    scopes = ["thread", "block", "device", "system"]
    src.write_text("#include <cuda/atomic>\n__global__ void k(int* p) {\n" + "".join(
        f"    cuda::atomic_ref<int, cuda::thread_scope_{s}>(p[{i}]).fetch_add(1, cuda::std::memory_order_relaxed);\n"
        for i, s in enumerate(scopes)) + "}\n")
    p = subprocess.run(["nvcc", "-std=c++17", "-arch=sm_90a", "-ptx", str(src), "-o", str(tmp_path / "s.ptx")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    found = re.findall(r"atom\.add\.relaxed\.(\w+)\.s32", (tmp_path / "s.ptx").read_text())
    assert found == ["cta", "cta", "gpu", "sys"], found


@pytest.mark.parametrize("twins_dir", PROGRAMS)
def test_twins_recorded_runs_pass_against_the_expected_output(tmp_path, twins_dir):
    # Independent runs on the H200 and the H100 (results/runs/<gpu>/twins/), judged by the twins' checker
    # against expected_output.txt: the expected output is not judged against itself.
    step = twins_dir.removesuffix("/twins")
    runs = sorted((REPO / "results" / "runs").glob(f"*/twins/{step}.txt"))
    assert {r.parent.parent.name for r in runs} >= {"NVIDIA_H200", "NVIDIA_H100_80GB_HBM3"}, runs
    for r in runs:
        first, _, out = r.read_text().partition("\n")
        assert first.endswith(": exit 0"), f"{r}: {first}"
        saved = tmp_path / r.name
        saved.write_text(out)
        p = run(["python3", "tools/checker.py", twins_dir, "--output", str(saved)])
        assert p.returncode == 0, f"{r.relative_to(REPO)}: {p.stdout}"


@pytest.mark.parametrize("twins_dir", PROGRAMS)
def test_make_sass_shows_each_twins_instructions(built, twins_dir):
    # twins/check.py's `sass` rules (what make sass-NN prints), checked against the build.
    p = run(["python3", "tools/sass.py", twins_dir])
    assert p.returncode == 0, p.stdout + p.stderr
