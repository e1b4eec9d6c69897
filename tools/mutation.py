"""`make mutation`: plant defects one at a time and check that the check aimed at each catches it.

    python3 tools/mutation.py            the CPU mutations (each runs the tests aimed at it)
    python3 tools/mutation.py --gpu      the GPU mutations too (on a Hopper GPU: each rebuilds a step
                                         and runs it with --quick, which must fail)
    python3 tools/mutation.py --gpu-only only the GPU mutations (a GPU machine needs no pytest)
    python3 tools/mutation.py --list     the table of planted defects, nothing run
    python3 tools/mutation.py --gpu-only --only 07   only those whose catcher names "07"

A mutation replaces one exact piece of one file. It is caught when its catcher
fails: for a CPU mutation, the pytest tests named (only those: a defect caught
only by an unrelated test, a lesson quoting the changed line say, does not
count); for a GPU mutation, the step's program run with --quick must exit 1
(a check failed). A catcher that cannot run (a pytest node that no longer
exists, a mutated step that does not build) makes the mutation STALE, never
caught; without a GPU the GPU mutations are "not run". Every file is restored
afterwards and all steps are rebuilt. Not part of `make test`: it rebuilds and
reruns a lot.
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
PYTEST = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]


@dataclasses.dataclass
class Mutation:
    name: str
    path: str      # file, from the repository root
    old: str       # exact text to replace (must occur exactly once)
    new: str
    catcher: str   # "cpu:<pytest node ids or -k expression>" or "gpu:<step folder>"


M = Mutation
MUTATIONS = [
    # The checker and its rules.
    M("expected output loses a line", "03_tma_load/expected_output.txt",
      "check  reuse_two_barriers ............ PASS  (0 of 524288 wrong)\n", "",
      "cpu:tests/test_checker.py::test_every_recorded_run_passes_against_expected_output"),
    M("expected output gets a typed number", "04_tma_store/expected_output.txt",
      "(0 of 262144 wrong)", "(0 of 262145 wrong)",
      "cpu:tests/test_checker.py::test_every_recorded_run_passes_against_expected_output"),
    M("a PERF floor set to 0", "04_tma_store/check.py", '"copy_tma": 0.97,', '"copy_tma": 0.0,',
      "cpu:tests/test_checker.py::test_floors_sit_just_below_every_recording"),
    M("checker ignores the floors", "tools/checker.py",
      'elif perf[name]["pct"] < 100.0 * floor:', "elif False:",
      "cpu:tests/test_checker.py::test_every_perf_line_below_its_floor_fails"),
    M("checker ignores ordering claims", "tools/checker.py",
      'and not perf[faster]["pct"] > perf[slower]["pct"]:', "and False:",
      "cpu:tests/test_checker.py::test_broken_lesson_claim"),
    M("checker skips the expected-output diff", "tools/checker.py", "        if want != got:",
      "        if False:", "cpu:tests/test_checker.py::test_every_deleted_deterministic_line_fails"),
    M("an ordering claim that the GPUs contradict", "02_cp_async/check.py",
      '("copy_4stage", "copy_2stage"),', '("copy_2stage", "copy_4stage"),',
      "cpu:tests/test_checker.py::test_ordering_claims_hold_on_every_gpu"),
    # The harness.
    M("poison byte 0", "common/tutorial.cuh", "#define POISON_BYTE 0xFF", "#define POISON_BYTE 0x00",
      "cpu:tests/test_tutorial_host.py::test_tutorial_host_functions"),
    M("the result line always says PASS", "common/tutorial.cuh",
      'printf("RESULT: %s\\n", g_checks_failed ? "FAIL" : "PASS");', 'printf("RESULT: PASS\\n");',
      "cpu:tests/test_tutorial_host.py::test_tutorial_host_functions"),
    M("the comparator skips the last word", "common/tutorial.cuh",
      "    for (size_t i = 0; i < n; ++i)\n        if (got[i] != want[i]) {",
      "    for (size_t i = 0; i + 1 < n; ++i)\n        if (got[i] != want[i]) {",
      "cpu:tests/test_tutorial_host.py::test_tutorial_host_functions"),
    M("an option a step does not take is accepted", "common/cli.h",
      "if ((s >= 5 || (takes >> s & 1)) && strlen(n) == len", "if (strlen(n) == len",
      "cpu:tests/test_exit_codes.py::test_options_not_taken_are_refused"),
    M("a divisor message without the way out", "common/cli.h",
      ': use a divisor of %zu, such as %zu", opt, value, total,\n              what, total, d);',
      '", opt, value, total, what);', "cpu:tests/test_exit_codes.py -k test_step_size_rules"),
    M("host memory not checked before allocating", "03_tma_load/tma_load.cu",
      "    require_host_memory(what, mat + 2 * boxes);  // never both at once: each names its own options", "",
      "cpu:tests/test_exit_codes.py -k test_step_size_rules"),
    # The tensor-map rules.
    M("the box limit of 256 forgotten", "03_tma_load/tensor_map.h", "s->box[d] > 256", "s->box[d] > 512",
      "cpu:tests/test_tutorial_host.py::test_tensor_map_rules"),
    M("strided boxes counted in full", "03_tma_load/tensor_map.h",
      "bytes *= (s->box[d] + s->elem_stride[d] - 1) / s->elem_stride[d];", "bytes *= s->box[d];",
      "cpu:tests/test_tutorial_host.py::test_tensor_map_rules"),
    # The swizzle formula.
    M("swizzle mask one bit short", "05_swizzle/swizzle.h", "(1u << mode) - 1u", "(1u << mode) / 2u",
      "cpu:tests/test_swizzle.py::test_swizzle_h_matches_h200"),
    M("narrow rows packed instead of spanning", "05_swizzle/swizzle.h",
      "return mode <= 0 ? inner_bytes : 16u << mode;", "return inner_bytes;",
      "cpu:tests/test_swizzle.py::test_swizzle_h_matches_h200"),
    M("the Python model's chunk XOR dropped", "tools/swizzle_model.py",
      "return a ^ (((a >> 7) & mask(mode)) << 4)", "return a",
      "cpu:tests/test_swizzle.py -k test_python_model_matches_h200"),
    # The SASS each step teaches.
    M("no proxy fence after poisoning (03)", "03_tma_load/tma_load.cuh",
      "    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) box[i] = POISON_WORD;\n"
      "    fence_proxy_async_shared();",
      "    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) box[i] = POISON_WORD;",
      "cpu:tests/test_sass.py::test_step_sass_contains_its_instructions[03_tma_load]"),
    M("no proxy fence before the store (04)", "04_tma_store/tma_store.cu",
      "    fence_proxy_async_shared();  // EVERY writing thread, before the barrier",
      "    // fence removed", "cpu:tests/test_sass.py::test_step_sass_contains_its_instructions[04_tma_store]"),
    M("the bulk store waits in full instead of .read", "04_tma_store/tma_store.cu",
      "        bulk_wait_group_read<0>();  // shared source read: the block may exit",
      "        bulk_wait_group<0>();", "cpu:tests/test_sass.py::test_step_sass_contains_its_instructions[04_tma_store]"),
    M("add_one waits only with .read before reloading", "04_tma_store/tma_store.cu",
      "        bulk_wait_group<0>();  // the FULL wait", "        bulk_wait_group_read<0>();  // the FULL wait",
      "cpu:tests/test_sass.py::test_step_sass_contains_its_instructions[04_tma_store]"),
    M("the consumers take no registers", "03_tma_load/tma_load.cu",
      "    if (SETMAXNREG) setmaxnreg_inc<CONSUMER_REGS>();", "",
      "cpu:tests/test_sass.py::test_step_sass_contains_its_instructions[03_tma_load]"),
    M("a __syncthreads in the ring's consumer loop", "03_tma_load/tma_load.cu",
      "        mbar_arrive(&empty[s]);  // this thread is done with stage s",
      "        mbar_arrive(&empty[s]);\n        __syncthreads();",
      "cpu:tests/test_sass.py::test_step_sass_contains_its_instructions[03_tma_load]"),
    M("groups waited for out of order", "02_cp_async/cp_async.cu",
      "    cp_async_wait_group<2>();  // groups 0, 1 complete", "    cp_async_wait_group<1>();",
      "cpu:tests/test_sass.py::test_step02_groups_wait_oldest_first"),
    M("a pipeline that waits for one group too many", "02_cp_async/cp_async.cu",
      "        cp_async_wait_group<STAGES - 1>();", "        cp_async_wait_group<STAGES>();",
      "cpu:tests/test_sass.py::test_step02_pipeline_waits_stages_minus_one"),
    # The build and the layout.
    M("warnings off", "Makefile", "-Xcompiler -Wall,-Wextra", "-w",
      "cpu:tests/test_build.py::test_required_flags"),
    M("headers not tracked", "Makefile", "-MD -MF $$@.d", "",
      "cpu:tests/test_build.py::test_headers_and_flags_trigger_rebuilds"),
    M("PTX in common/", "common/tutorial.cuh", "static int g_gpu_in_use = 0;",
      'static __device__ void nop(void) { asm volatile("nop;"); }\nstatic int g_gpu_in_use = 0;',
      "cpu:tests/test_layout.py::test_common_holds_no_ptx"),
    M("a wrapper nobody uses", "03_tma_load/tma_load.cuh", "// ---- the proxy fence",
      "static __device__ __forceinline__ void tma_unused(void) { asm volatile(\"fence.proxy.async;\"); }\n"
      "// ---- the proxy fence", "cpu:tests/test_layout.py -k test_every_wrapper_is_used"),
    M("the ring's storer waits in full instead of .read", "04_tma_store/tma_store.cu",
      "            bulk_wait_group_read<1>();  // store i - 1 has read its stage: free it",
      "            bulk_wait_group<1>();", "cpu:tests/test_sass.py::test_step_sass_contains_its_instructions[04_tma_store]"),
    M("a rule naming a PERF line that does not exist is accepted", "tools/checker.py",
      "    if undeclared:", "    if False:", "cpu:tests/test_checker.py -k test_broken_rules_file_is_refused"),
    M("--dump into a folder that cannot be written is found out too late", "05_swizzle/swizzle.cu",
      "    if (cli->dump_path) check_dump_folder(cli->dump_path);\n", "",
      "cpu:tests/test_exit_codes.py -k test_bad_standard_arguments_exit_2_naming_the_rule"),
    # The docs.
    M("a typed result in the README", "README.md", "<!-- result:04 -->`copy_tma` ",
      "<!-- result:04 -->`copy_tma` 99.9 % ", "cpu:tests/test_docs.py::test_result_tables_are_generated_and_current"),
    # On the GPU: the program's own checks.
    M("poisoning does nothing", "common/tutorial.cuh",
      "    CUDA_CHECK(cudaMemsetAsync(p, POISON_BYTE, bytes, stream));", "    (void)p, (void)bytes, (void)stream;",
      "gpu:01_memcpy_baseline"),
    M("a CTA leaves its box uncopied", "03_tma_load/tma_load.cu",
      "    copy_out(box, words, out + (size_t)blockIdx.x * words);",
      "    if (blockIdx.x != 7) copy_out(box, words, out + (size_t)blockIdx.x * words);", "gpu:03_tma_load"),
    M("the ring's consumers wait on the wrong parity", "03_tma_load/tma_load.cu",
      "        if (!MBAR_WAIT(&full[s], pass & 1)) break;  // stage s holds a box",
      "        if (!MBAR_WAIT(&full[s], (pass & 1) ^ 1)) break;", "gpu:03_tma_load"),
    M("the persistent copy's schedule skips a unit", "03_tma_load/pipeline.cuh",
      "box = s->unit * s->chunk + k % s->chunk;", "box = (s->unit + (s->unit == 5)) * s->chunk + k % s->chunk;",
      "gpu:04_tma_store"),
    M("the reload never lands (the re-poisoned box is read)", "04_tma_store/tma_store.cu",
      "        mbar_arrive_expect_tx(&bar, bytes);  // phase 1\n        tma_load_2d(box, &out_map, col0, row0, &bar);",
      "        mbar_arrive(&bar);", "gpu:04_tma_store"),
    M("the swizzled tile read at the buffer-relative index", "05_swizzle/swizzle.cu",
      "    return swz[swizzle_element(swz_base, SWIZZLE_MODE_128B, t, k, 4, 128)];",
      "    return swz[swizzle_element(0, SWIZZLE_MODE_128B, t, k, 4, 128) ^ 8];", "gpu:05_swizzle"),
    M("the transposed box stored at the load's coordinates", "06_transpose/transpose.cu",
      "        tma_store_2d(out_map, r0, c0, t);", "        tma_store_2d(out_map, c0, r0, t);", "gpu:06_transpose"),
    M("the pipelined mapping drops its diagonal (blocks moved twice, others never)", "06_transpose/transpose.cu",
      "    *a = hi % groups_a * 8 + (i ^ d);", "    *a = hi % groups_a * 8 + i;", "gpu:06_transpose"),
    M("the tensor-form reduce lands one column off", "07_reduce_multicast/reduce_multicast.cu",
      "        tma_reduce_2d<OP>(&map, (int32_t)c0, (int32_t)r0, box);",
      "        tma_reduce_2d<OP>(&map, (int32_t)c0 + 4, (int32_t)r0, box);", "gpu:07_reduce_multicast"),
    M("split-K loses its last contributor", "07_reduce_multicast/reduce_multicast.cu",
      "    const uint32_t items = p.tiles * p.k_per_tile;\n    for (uint32_t j = 0,",
      "    const uint32_t items = p.tiles * (p.k_per_tile - 1);\n    for (uint32_t j = 0,", "gpu:07_reduce_multicast"),
    M("the multicast mask leaves out the last CTA of the cluster", "07_reduce_multicast/reduce_multicast.cu",
      "(uint16_t)((1u << S) - 1));", "(uint16_t)((1u << S) - 1 - (1u << (S - 1))));", "gpu:07_reduce_multicast"),
    M("the ring sends to its own rank", "07_reduce_multicast/reduce_multicast.cu",
      "bulk_copy_to_peer(recv, send, DS_WORDS * 4, &bar, (rank + 1) % S);",
      "bulk_copy_to_peer(recv, send, DS_WORDS * 4, &bar, rank);", "gpu:07_reduce_multicast"),
    M("a field edit lands in the wrong dimension", "08_descriptor_update/descriptor_update.cu",
      "    case F_DIM0:\n        tmap_replace_dim<0>(m, p->new_value);",
      "    case F_DIM0:\n        tmap_replace_dim<1>(m, p->new_value);", "gpu:08_descriptor_update"),
    M("a retarget forgets the row stride", "08_descriptor_update/descriptor_update.cu",
      "                tmap_replace_stride<0>(&edit[k], (uint64_t)g->ld * 4);\n", "", "gpu:08_descriptor_update"),
    M("the stride given in 16-byte units on CUDA 13", "08_descriptor_update/tensormap_edit.cuh",
      "#if TMAP_STRIDE_IN_BYTES\n    const uint64_t v = bytes;\n#else\n    const uint64_t v = bytes >> 4;\n#endif\n"
      "    asm volatile(\"tensormap.replace.tile.global_stride.shared::cta",
      "    const uint64_t v = bytes >> 4;\n    asm volatile(\"tensormap.replace.tile.global_stride.shared::cta",
      "gpu:08_descriptor_update"),
]


def run(cmd: list[str], timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def catch(m: Mutation) -> tuple[str, str]:
    """("caught" | "MISSED" | "STALE" | "not run", detail)."""
    kind, _, what = m.catcher.partition(":")
    if kind == "cpu":
        p = run(PYTEST + what.split())
        last = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
        # pytest: 0 all passed, 1 some failed; 2-5 mean the tests did not run as named
        verdict = {0: "MISSED", 1: "caught"}.get(p.returncode, "STALE")
        return verdict, last if verdict != "STALE" else f"pytest exit {p.returncode}: {last}"
    step = what
    b = run(["make", f"build-{step[:2]}"])
    if b.returncode != 0:
        return "STALE", "the mutated step does not build, so it tests nothing"
    p = run([f"build/{step}", "--quick"], timeout=900)
    if p.returncode == 77:
        return "not run", "no Hopper GPU here"
    fails = [ln for ln in p.stdout.splitlines() if ln.startswith("check") and "FAIL" in ln]
    return ("caught" if p.returncode == 1 else "MISSED"), f"exit {p.returncode}; " + (
        fails[0] if fails else "no check failed")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", action="store_true", help="also the GPU mutations (needs a Hopper GPU)")
    ap.add_argument("--gpu-only", action="store_true", help="only the GPU mutations")
    ap.add_argument("--list", action="store_true", help="print the planted defects and their catchers")
    ap.add_argument("--only", default="", help="only the mutations whose catcher contains this text")
    a = ap.parse_args()
    rows, bad = [], 0
    for m in MUTATIONS:
        on_gpu = m.catcher.startswith("gpu")
        if a.list or (on_gpu and not (a.gpu or a.gpu_only)) or (a.gpu_only and not on_gpu) or a.only not in m.catcher:
            rows.append((m.name, m.catcher, "" if a.list else "not run"))
            continue
        path = REPO / m.path
        original = path.read_text()
        if original.count(m.old) != 1:
            verdict, detail = "STALE", f"the text to replace occurs {original.count(m.old)} times"
        else:
            try:
                path.write_text(original.replace(m.old, m.new))
                verdict, detail = catch(m)
            finally:
                path.write_text(original)
        rows.append((m.name, m.catcher, f"{verdict}: {detail}"))
        bad += verdict in ("MISSED", "STALE")
    if not a.list and run(["make", "all"]).returncode != 0:  # the restored sources, rebuilt
        print("mutation: the restored sources do not build", file=sys.stderr)
        return 2
    width = max(len(r[0]) for r in rows)
    print(f"| {'planted defect':<{width}} | caught by | result |\n| --- | --- | --- |")
    for name, catcher, result in rows:
        print(f"| {name:<{width}} | `{catcher}` | {result} |")
    ran = sum(1 for r in rows if r[2].split(":")[0] in ("caught", "MISSED", "STALE"))
    if not a.list:
        print(f"mutation: {ran - bad} of {ran} planted defects caught by their aimed check"
              f"{f'; {len(rows) - ran} not run here' if ran < len(rows) else ''}")
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
