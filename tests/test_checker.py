"""Each step's checker: it passes the recorded GPU runs and fails on every
kind of damage (a FAIL verdict, a deleted or changed deterministic line, a
PERF below its floor, a missing or undeclared PERF line, RESULT: FAIL, a
non-zero exit), and exit 77 is SKIP, never a pass. The rules themselves are
held to the recordings: floors sit just below what every GPU recorded, and
every ordering claim holds on every GPU."""

import re

import pytest

from checker import deterministic_lines, evaluate, order_problems
from contract import REFERENCE_GPU, REFERENCE_RE, RESULTS, gpu_slug, read_csv

from conftest import REPO, binary, no_gpu_env, run

GPU_RUN_DIRS = sorted(p for p in (RESULTS / "runs").glob("*") if p.is_dir())


def expected(step):
    text = step.expected_path.read_text()
    assert text.strip(), f"{step.expected_path} is empty"
    return text


def recorded_runs(step_dir):
    """Full runs of the step that `make bench` recorded: one per GPU, and the
    repeated runs of `bench.py --repeat` (<step>.run2.txt ...)."""
    return [p for d in GPU_RUN_DIRS for p in [d / f"{step_dir}.txt", *sorted(d.glob(f"{step_dir}.run[0-9]*.txt"))]
            if p.is_file()]


def check_cli(step_dir, *args, **kw):
    return run(["python3", "tools/checker.py", step_dir, *args], **kw)


def test_the_reference_gpu_and_the_h100_are_recorded():
    names = {d.name for d in GPU_RUN_DIRS}
    assert gpu_slug(REFERENCE_GPU) in names, f"results/runs/{gpu_slug(REFERENCE_GPU)} is missing: run `make bench` on it"
    assert any(n.startswith("NVIDIA_H100") for n in names), "no H100 recording in results/runs"


def test_every_gpu_holds_the_runs_the_step_asks_for(step_dir, step):
    # A step whose headline is a range (09: bench_runs = 3) has that many full runs on each recorded GPU
    # (`make bench`), each judged by the test below.
    for d in GPU_RUN_DIRS:
        runs = [p.name for p in recorded_runs(step_dir) if p.parent == d]
        assert not runs or len(runs) >= step.bench_runs, f"{d.name}: {runs}, want {step.bench_runs}: run `make bench`"
    if step.bench_runs > 1:  # the reference GPU always; another one's runs may be of an older version (older/)
        ref = RESULTS / "runs" / gpu_slug(REFERENCE_GPU)
        assert len([p for p in recorded_runs(step_dir) if p.parent == ref]) >= step.bench_runs


def test_every_recorded_run_passes_against_expected_output(step_dir, step):
    # expected_output.txt is judged against independent real runs, not against
    # itself: a line deleted from it, or a number typed into it, fails here.
    runs = recorded_runs(step_dir)
    assert runs, f"no recorded run of {step_dir} in results/runs/"
    for path in runs:
        text = path.read_text()
        first, _, out = text.partition("\n")
        assert first.endswith(": exit 0"), f"{path}: {first}"
        v = evaluate(step, out, 0, expected(step))
        assert v.status == "PASS", f"{path.relative_to(REPO)}: {v.problems}"


def test_expected_output_is_the_h200_run(step_dir, step):
    out = expected(step)
    assert re.search(rf"^GPU\s+{re.escape(REFERENCE_GPU)}\b", out, re.M), f"expected_output.txt must come from the {REFERENCE_GPU}"
    assert set(re.findall(r"^PERF\s+(\S+)", out, re.M)) == set(step.perf_floors), "PERF lines and floors differ"
    if step.headline.startswith("check:"):
        assert re.search(rf"^check\s+{re.escape(step.headline[6:])}", out, re.M)
    else:
        assert step.headline in step.perf_floors
    p = check_cli(step_dir, "--output", str(step.expected_path))
    assert p.returncode == 0, p.stdout


def recorded_pct(step_dir):
    """PERF name -> the lowest % of its reference (memcpy or cuBLAS) any GPU recorded for it (results/*.csv)."""
    lowest = {}
    for csv_path in sorted(RESULTS.glob("*.csv")):
        for r in read_csv(csv_path):
            if r.get("step") == step_dir:
                lowest[r["name"]] = min(lowest.get(r["name"], 1e9), float(r["pct"]))
    return lowest


def test_floors_sit_just_below_every_recording(step_dir, step):
    # A floor of 0 would let any regression through; one above a recording
    # would fail a healthy GPU. Each floor lies between 70 % and 100 % of the
    # lowest value any GPU recorded. A line that a ratio claim guards against
    # our own kernel ((faster, slower, r) in perf_order: 09's edge problem,
    # where cuBLAS has no fast kernel) may instead ask only to match its
    # reference: 1.0 (10's ratio claims keep ordinary floors).
    lowest = recorded_pct(step_dir)
    ratio_guarded = {claim[0] for claim in step.perf_order if len(claim) == 3}
    for name, floor in step.perf_floors.items():
        if REFERENCE_RE.match(name):  # cudaMemcpy_D2D, cublas, edge_cublas, splitk_cublas
            assert floor == 1.0
            continue
        assert name in lowest, f"PERF {name} has no recording in results/"
        if name in ratio_guarded and floor >= 1.0:
            assert 100 * floor <= lowest[name], f"{name}: floor {floor}, lowest {lowest[name]} %"
            continue
        assert name in lowest, f"PERF {name} has no recording in results/"
        assert 0.70 * lowest[name] <= 100 * floor <= lowest[name], \
            f"{name}: floor {100 * floor:.2f} % vs lowest recording {lowest[name]} %"


def test_ordering_claims_hold_on_every_gpu(step_dir, step):
    for csv_path in sorted(RESULTS.glob("*.csv")):
        rows = {r["name"]: {"pct": float(r["pct"]), "rate": float(r["rate"]), "unit": r["unit"], "ref": r["reference"]}
                for r in read_csv(csv_path) if r.get("step") == step_dir}
        for claim in step.perf_order:
            assert not order_problems(claim, rows), f"{csv_path.name}: {order_problems(claim, rows)}"


def needs_perf(step):
    if not step.perf_floors:
        pytest.skip(f"{step.name} prints no PERF lines")


def mutate_first(text, pattern, repl):
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    assert n == 1, f"mutation {pattern!r} did not apply"
    return new


def fails(step, text, code=0, want=None):
    v = evaluate(step, text, code, expected(step))
    assert v.status == "FAIL", f"mutation passed: {v}"
    if want:
        assert any(want in p for p in v.problems), v.problems
    return v


def test_check_line_turned_fail(step):
    out = mutate_first(expected(step), r"^(check\s+\S+ \.+ )PASS  \(0 of", r"\1FAIL  (7 of")
    fails(step, out, want="check failed")


def test_every_deleted_deterministic_line_fails(step):
    out = expected(step)
    for victim in dict.fromkeys(deterministic_lines(out)):
        fails(step, out.replace(victim + "\n", "", 1), want="differ from expected_output.txt")


def test_reordered_deterministic_lines_fail(step):
    # The expected output is compared in order, not as a set: two check lines swapped must fail.
    out = expected(step)
    checks = [ln for ln in out.splitlines() if ln.startswith("check  ")]
    if len(checks) < 2:
        pytest.skip("fewer than two check lines")
    a, b = checks[0], checks[1]
    swapped = out.replace(a, "\0").replace(b, a).replace("\0", b)
    fails(step, swapped, want="differ from expected_output.txt")


def test_changed_deterministic_value(step):
    out = mutate_first(expected(step), r"^(problem: \D*)(\d)", lambda m: m[1] + str((int(m[2]) + 1) % 10))
    fails(step, out, want="differ from expected_output.txt")


def test_every_perf_line_below_its_floor_fails(step):
    needs_perf(step)
    for name, floor in step.perf_floors.items():
        low = 100.0 * floor - 0.1
        if low < 0:
            continue
        out = mutate_first(expected(step), rf"^(PERF\s+{re.escape(name)}\s.*?)\d+\.\d+ % of (memcpy|cublas)$",
                           lambda m: f"{m[1]}{low:.1f} % of {m[2]}")
        fails(step, out, want=f"PERF {name} is {low:.1f} % of ")
        fails(step, out, want="below its floor")


def test_missing_perf_line(step):
    needs_perf(step)
    out = mutate_first(expected(step), rf"^PERF\s+{re.escape(step.headline)}\s.*\n", "")
    fails(step, out, want=f"PERF {step.headline} is missing")


def test_undeclared_perf_line(step):
    out = mutate_first(expected(step), r"^(RESULT: PASS)$",
                       "PERF   surprise                 1.000 ms    100.0 GB/s    2.0 % of memcpy\n\\1")
    fails(step, out, want="not declared")


def test_malformed_perf_line(step):
    needs_perf(step)
    out = mutate_first(expected(step), r"^(PERF\s+\S+\s+\d+\.\d+) ms", r"\1 us")
    fails(step, out, want="malformed PERF")


def test_result_fail(step):
    out = mutate_first(expected(step), r"^RESULT: PASS$", "RESULT: FAIL")
    fails(step, out, want="want 'RESULT: PASS'")


def test_nonzero_exit(step):
    fails(step, expected(step), code=1, want="exit code 1")
    fails(step, expected(step), code=2, want="exit code 2")


def test_broken_lesson_claim(step):
    # Each claim's faster line given a value just short of what the claim asks
    # (the slower line's percent; or r times its rate): the claim fails.
    if not step.perf_order:
        pytest.skip(f"{step.name}/check.py states no ordering claim")
    for claim in step.perf_order:
        faster, slower = claim[:2]
        out = expected(step)
        line = {n: re.search(rf"^PERF\s+{re.escape(n)}\s+\S+ ms\s+(\d+\.\d+) \S+\s+(\d+\.\d+) % of", out, re.M)
                for n in (faster, slower)}
        if len(claim) == 2:  # the percent: swapped with the slower line's
            out = mutate_first(out, rf"^(PERF\s+{re.escape(faster)}\s.*?)\d+\.\d+( % of (memcpy|cublas))$",
                               lambda m: m[1] + line[slower][2] + m[2])
            out = mutate_first(out, rf"^(PERF\s+{re.escape(slower)}\s.*?)\d+\.\d+( % of (memcpy|cublas))$",
                               lambda m: m[1] + line[faster][2] + m[2])
        else:  # the rate: just under r times the slower line's
            short = float(line[slower][1]) * claim[2] * 0.999
            out = mutate_first(out, rf"^(PERF\s+{re.escape(faster)}\s+\S+ ms\s+)\d+\.\d+ ",
                               lambda m: f"{m[1]}{short:.1f} ")
        fails(step, out, want="the lesson's claim no longer holds")


def test_lesson_claim_with_a_ratio():
    # (a, b): a's percent above b's; (a, b, r): a's rate at least r times b's.
    perf = {"a": {"rate": 600.0, "unit": "TFLOP/s", "pct": 99.0, "ref": "cublas"},
            "b": {"rate": 900.0, "unit": "TFLOP/s", "pct": 98.0, "ref": "cublas"}}
    assert order_problems(("a", "b"), perf) == []  # a drift: fewer TFLOP/s, a higher percent of the reference
    assert "should beat a" in order_problems(("b", "a"), perf)[0]
    assert order_problems(("a", "b", 0.6), perf) == []
    assert "should reach 0.7 x b" in order_problems(("a", "b", 0.7), perf)[0]


def test_exit_77_is_skip_not_pass(step_dir, step):
    v = evaluate(step, expected(step), 77, expected(step), "no CUDA device found")
    assert v.status == "SKIP"
    p = check_cli(step_dir, "--output", str(step.expected_path), "--exit-code", "77")
    assert p.returncode == 77 and "SKIP" in p.stdout


def test_real_run_without_gpu_is_skip(built, step_dir):
    log = REPO / "build" / f"{step_dir}.check.log"
    log.unlink(missing_ok=True)  # a log left from an earlier run must not pass for this one
    p = check_cli(step_dir, env=no_gpu_env())
    assert p.returncode == 77, p.stdout
    assert "SKIP" in p.stdout and "no CUDA device found" in p.stdout
    assert "# exit code 77" in log.read_text(), "the run's log is kept under build/"


@pytest.mark.parametrize("text,message", [
    ('perf_floors = {"a": 0.5}\nheadline = "a"\nsass = {}\nperf_order = [("a", "typo")]\n', "typo"),
    ('perf_floors = {"a": 0.5}\nheadline = "a"\nsass = {}\nperf_order = [("a", "a", -1)]\n', "least ratio"),
    ('perf_floors = {"a": 0.5}\nheadline = "b"\nsass = {}\n', "'b'"),
    ('perf_floors = {"a": 0.5}\nsass = {}\n', "headline"),
    ('perf_floors = {"a": 0.5\n', "does not load"),
])
def test_broken_rules_file_is_refused(tmp_path, monkeypatch, text, message):
    import checker
    (tmp_path / "99_x").mkdir()
    (tmp_path / "99_x" / "check.py").write_text(text)
    monkeypatch.setattr(checker, "REPO", tmp_path)
    with pytest.raises(ValueError, match=message):
        checker.load_step("99_x")


def test_make_check_reports_every_step_and_fails_when_skipped(built):
    p = run(["make", "--no-print-directory", "check"], env=no_gpu_env())
    assert p.returncode != 0, "a skipped check must fail make check"
    from conftest import STEP_DIRS
    from contract import twin_dirs
    programs = sorted(STEP_DIRS + twin_dirs())  # each step, then its twins
    for d in programs:
        assert f"{d}: SKIP" in p.stdout, f"make check stopped before {d}"
    assert "failed or skipped: " + " ".join(d[:2] + ("/twins" if d.endswith("/twins") else "")
                                            for d in programs) in p.stdout


def test_update_refuses_a_run_that_cannot_run(built, step_dir, step):
    before = step.expected_path.read_text()
    p = check_cli(step_dir, "--update", env=no_gpu_env())
    assert p.returncode == 77 and "NOT updated" in p.stdout
    assert step.expected_path.read_text() == before


@pytest.mark.parametrize("args,message", [
    (["--timeout", "0"], "is not a positive, finite number of seconds"),
    (["--timeout", "-5"], "is not a positive, finite number of seconds"),
    (["--timeout", "nan"], "is not a positive, finite number of seconds"),
    (["--output", "tools"], "--output tools: not a file"),
    (["--binary", "build/no_such_binary"], "build/no_such_binary not found: build it with `make build-01`"),
])
def test_checker_bad_options_are_one_clear_line(args, message):
    p = check_cli("01_memcpy_baseline", *args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stdout + p.stderr
    assert "Traceback" not in p.stdout + p.stderr


def test_checker_unknown_step():
    p = check_cli("09_nothing")
    assert p.returncode == 2 and "09_nothing/check.py not found" in p.stdout and "Traceback" not in p.stderr


def test_checker_reads_undecodable_output(tmp_path, step):
    # Bytes that are not UTF-8 in a program's output are a FAIL, not a crash.
    bad = tmp_path / "out.txt"
    bad.write_bytes(expected(step).encode().replace(b"RESULT: PASS", b"RESULT: \xff\xfe"))
    p = check_cli(step.name, "--output", str(bad))
    assert p.returncode == 1 and "Traceback" not in p.stderr


def test_a_check_line_is_judged_by_its_counts_not_only_its_verdict(step):
    # "PASS" beside wrong elements, and "FAIL" beside none, are both failures:
    # the counts are the check. Judged without the expected-output comparison,
    # so that only the check-line rule can catch them.
    out = expected(step)
    for pattern, repl in ((r"^(check\s+\S+ \.+ PASS  \()0 of", r"\g<1>3 of"),
                          (r"^(check\s+\S+ \.+ )PASS(  \(0 of)", r"\1FAIL\2")):
        v = evaluate(step, mutate_first(out, pattern, repl), 0, None)
        assert v.status == "FAIL" and any("check failed" in p for p in v.problems), v.problems


def test_deterministic_and_machine_lines_are_told_apart():
    # The classification against lines written out by hand, not against itself.
    machine = ["GPU    NVIDIA H200 (sm_90, 132 SMs, 60 MiB L2) CUDA 13.0 driver 580.159.04",
               "GPU    launch: 132 blocks of 288 threads", "PERF   copy_float4   0.510 ms  4213.7 GB/s  100.2 % of memcpy",
               "TIME   overlap: 1.8x"]
    deterministic = ["== 01_memcpy_baseline: what a plain copy costs", "problem: 1024 MiB",
                     "check  tiling ........................ PASS  (0 of 6160384 wrong)",
                     "note   tma_naive: the TMA store also wrote 3 words past the matrix", "RESULT: PASS",
                     "GPUs are not named here", "PERFECT", "       [0] got 0xffffffff want 0x00000000"]
    assert deterministic_lines("\n".join(machine + deterministic)) == deterministic


@pytest.mark.parametrize("nn", ["01", "03"])
def test_make_check_nn_fails_when_the_step_cannot_run(built, nn):
    # `make check-NN` on a machine with no GPU: the checker says SKIP and the
    # target must not succeed (a skip is never a pass).
    p = run(["make", "--no-print-directory", f"check-{nn}"], env=no_gpu_env())
    assert p.returncode != 0, f"make check-{nn} exited 0 on a skip"
    assert "SKIP" in p.stdout, p.stdout


def test_bench_removes_the_runs_past_its_count(tmp_path):
    # tools/bench.py --repeat N: runK files past N (an earlier version's) go; the step's own first run, its
    # runs up to N, its planted mistakes' runs and other steps' runs stay.
    import bench
    names = ["09_gemm.txt", "09_gemm.run2.txt", "09_gemm.run3.txt", "09_gemm.run4.txt", "09_gemm.run12.txt",
             "09_gemm.bug1.txt", "09_gemm.shadow.txt", "10_grouped_gemm.run4.txt"]
    for name in names:
        (tmp_path / name).write_text("x")
    bench.prune_runs(tmp_path, "09_gemm", 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(set(names) - {"09_gemm.run4.txt", "09_gemm.run12.txt"})


def test_the_spread_table_spans_every_recorded_run(tmp_path, monkeypatch):
    # tools/results_table.py's <!-- spread --> table: per GPU, the count of runs and the lowest and highest
    # of a line over the first run and every runK (not the first run alone, not a mean).
    import results_table
    folder = tmp_path / "results" / "runs" / gpu_slug(REFERENCE_GPU)
    folder.mkdir(parents=True)
    for file, pct in [("99_demo.txt", 52.0), ("99_demo.run2.txt", 50.0), ("99_demo.run3.txt", 55.5)]:
        (folder / file).write_text("PERF   ref_cublas    1.000 ms    100.0 TFLOP/s  100.0 % of cublas\n"
                                   f"PERF   part          1.000 ms    {pct:.1f} TFLOP/s   {pct:.1f} % of cublas\n")
    monkeypatch.setattr(results_table, "REPO", tmp_path)
    text = results_table.spread_tables("99_demo", "<!-- spread:part -->old<!-- /spread -->")
    assert f"| {gpu_slug(REFERENCE_GPU).replace('_', ' ')} | 3 | `part` | 50.0 to 55.5 TFLOP/s | 50.0 to 55.5 % of cublas |" \
        in text, text
