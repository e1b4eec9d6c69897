"""Category 5: each step's checker passes its recorded output and fails on
every kind of damage: a FAIL check line, a deleted or changed deterministic
line, a PERF below its floor, a missing PERF line, RESULT: FAIL, a non-zero
exit, and exit 77 (SKIP, never a pass)."""

import re

import pytest

from checker import evaluate, deterministic_lines

from conftest import REPO, binary, no_gpu_env, run


def expected(step):
    text = step.expected_path.read_text()
    assert text.strip(), f"{step.expected_path} is empty"
    return text


def check_cli(step_dir, *args, **kw):
    return run(["python3", f"{step_dir}/check.py", *args], **kw)


def test_recorded_output_passes(step_dir, step):
    out = expected(step)
    v = evaluate(step, out, 0, out)
    assert v.status == "PASS", v.problems
    # and through the command line, as `make check-NN` would judge a saved run
    p = check_cli(step_dir, "--output", str(step.expected_path))
    assert p.returncode == 0, p.stdout


def test_recorded_output_is_a_full_run(step):
    out = expected(step)
    assert re.search(r"^GPU\s+NVIDIA H200", out, re.M), "expected_output.txt must come from the H200"
    names = set(re.findall(r"^PERF\s+(\S+)", out, re.M))
    assert names == set(step.perf_floors), "PERF lines and declared floors differ"
    if step.headline.startswith("check:"):  # a step whose result is correctness (05)
        assert re.search(rf"^check\s+{re.escape(step.headline[6:])}", out, re.M)
    else:
        assert step.headline in names


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


def test_deleted_deterministic_line(step):
    out = expected(step)
    det = deterministic_lines(out)
    victim = det[len(det) // 2]
    fails(step, out.replace(victim + "\n", "", 1), want="differ from expected_output.txt")


def test_deleted_check_line(step):
    out = mutate_first(expected(step), r"^check.*\n", "")
    fails(step, out, want="differ from expected_output.txt")


def test_changed_deterministic_value(step):
    out = mutate_first(expected(step), r"^(problem: \D*)(\d)", lambda m: m[1] + str((int(m[2]) + 1) % 10))
    fails(step, out, want="differ from expected_output.txt")


def test_perf_below_floor(step):
    needs_perf(step)
    name, floor = next((n, f) for n, f in step.perf_floors.items() if f > 0.02)
    low = 100.0 * floor - 1.0
    out = mutate_first(expected(step), rf"^(PERF\s+{re.escape(name)}\s.*?)\d+\.\d+ % of memcpy$",
                       lambda m: f"{m[1]}{low:.1f} % of memcpy")
    fails(step, out, want=f"PERF {name} is {low:.1f} % of memcpy, below its floor")


def test_missing_perf_line(step):
    needs_perf(step)
    name = step.headline
    out = mutate_first(expected(step), rf"^PERF\s+{re.escape(name)}\s.*\n", "")
    fails(step, out, want=f"PERF {name} is missing")


def test_undeclared_perf_line(step):
    needs_perf(step)
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


def test_exit_77_is_skip_not_pass(step_dir, step):
    v = evaluate(step, expected(step), 77, expected(step), "no CUDA device found")
    assert v.status == "SKIP"
    p = check_cli(step_dir, "--output", str(step.expected_path), "--exit-code", "77")
    assert p.returncode == 77 and "SKIP" in p.stdout


def test_real_run_without_gpu_is_skip(built, step_dir):
    p = check_cli(step_dir, "--binary", str(binary(step_dir)), env=no_gpu_env())
    assert p.returncode == 77, p.stdout
    assert "SKIP" in p.stdout and "no CUDA device found" in p.stdout
    assert (REPO / "build" / f"{step_dir}.check.log").is_file(), "the run's log is kept under build/"


def test_make_check_fails_when_skipped(built):
    p = run(["make", "--no-print-directory", "check-01"], env=no_gpu_env())
    assert p.returncode != 0, "a skipped check must fail make check"
    assert "SKIP" in p.stdout


def test_update_refuses_a_run_that_cannot_run(built, step_dir, step):
    before = step.expected_path.read_text()
    p = check_cli(step_dir, "--update", env=no_gpu_env())
    assert p.returncode == 77 and "NOT updated" in p.stdout
    assert step.expected_path.read_text() == before


def test_broken_lesson_claim(step):
    # Swap the two numbers of the first (faster, slower) pair: the claim fails.
    if not step.perf_order:
        pytest.skip(f"{step.name}/check.py states no ordering claim")
    faster, slower = step.perf_order[0]
    out = expected(step)
    pct = {n: re.search(rf"^PERF\s+{re.escape(n)}\s.*?(\d+\.\d+) % of memcpy$", out, re.M) for n in (faster, slower)}
    hi, lo = pct[faster][1], pct[slower][1]
    out = mutate_first(out, rf"^(PERF\s+{re.escape(faster)}\s.*?)\d+\.\d+( % of memcpy)$", lambda m: m[1] + lo + m[2])
    out = mutate_first(out, rf"^(PERF\s+{re.escape(slower)}\s.*?)\d+\.\d+( % of memcpy)$", lambda m: m[1] + hi + m[2])
    fails(step, out, want=f"should beat {slower}")
