"""common/tutorial.cuh's and 03_tma_load/tensor_map.h's host code, compiled
and run on the CPU: the median, the seeded fill and the poison, the
comparator against a wrong index, a missing element and an output never
written, and every tensor-map rule; and the steps' own checks compiled from
their programs (09's TMA-store tail rule, inputs, PERF references, reference
and readback check; 07's split-K, reduce-op, broadcast and ring checks; 08's
parts re-poisoning their pool, the cross-CTA copy's and the field probes'
checks; 10's batch check).
The checks that read an output back run on host memory standing in for the
device's (tests/unit_fake_device.h), so a weakened check (one that compares
the output with itself, keeps the readback buffer as its expectation, or
checks a pool it did not re-poison) fails here, not only on a GPU."""

import re

from contract import CHECK_RE

from conftest import REPO, run, run_unit


def test_tutorial_host_functions(tmp_path):
    p = run_unit("tests/unit_tutorial.cu", tmp_path)
    checks = [ln for ln in p.stdout.splitlines() if ln.startswith("check")]
    assert len(checks) == 7 and all(CHECK_RE.match(ln) for ln in checks), checks
    assert checks[4].startswith("check  unit_hung") and "FAIL  (0 of 1 wrong)" in checks[4], "a hung part fails"
    # CHECK_AND_TIME poisons before each part: a part that writes nothing fails after a right one
    assert "PASS  (0 of 64 wrong)" in checks[5] and "FAIL  (64 of 64 wrong)" in checks[6], checks[5:]

    assert "(1 of 1048576 wrong)" in checks[1] and "FAIL" in checks[1]
    assert re.search(r"\[1048575\] got 0xffffffff want 0x[0-9a-f]{8}  \(poison: never written\)", p.stdout)
    assert re.search(r"^RESULT: FAIL\n(.*\n)*?RESULT: PASS$", p.stdout, re.M), "print_result's verdict follows the checks"


def test_tensor_map_rules(tmp_path):
    # Each rule of 03_tma_load/tensor_map.h: one spec that keeps it, one that
    # breaks it, and the message names the rule (the encoder itself only says
    # CUDA_ERROR_INVALID_VALUE).
    p = run_unit("tests/unit_tensor_map.cu", tmp_path)
    lines = {}  # case name -> the rule's message ("" when the spec was accepted)
    for ln in p.stdout.splitlines():
        if ln.startswith("ok "):
            name, _, message = ln[3:].partition(": ")
            lines[name] = message
    want = {
        "rank_6": "tensor rank 6 is not 1..5",
        "address_8_aligned": "is not 16-byte aligned",
        "dim_0": "dimension 1 has 0 elements",
        "row_stride_4004": "row stride 4004 B is not a multiple of 16 B, which TMA requires: pad the row to 1004",
        "stride_2_40": "is not below 2^40",
        "box_257": "box dimension 1 is 257 elements: it must be 1..256",
        "inner_box_12_bytes": "12 B is not a multiple of 16 B",
        "swizzle_128_box_256_bytes": "wider than the 128 B swizzle span",
        "swizzle_32_box_64_bytes": "wider than the 32 B swizzle span",
        "elem_stride_9": "element stride of dimension 1 is 9",
        "nan_fill_uint32": "NaN out-of-bounds fill needs a floating-point element type",
    }
    for name, text in want.items():
        assert name in lines and text in lines[name], f"{name}: {lines.get(name)}"
    # Rows that overlap are legal: the encoder accepts them (step 03's rules part shows it on the GPU).
    assert lines.get("rows_overlap_valid") == ""
    assert "box_bytes_strided" in lines and lines["box_bytes_strided"] == ""


def unit_cases(source, tmp_path, *flags):
    """A step's host-side unit test built for sm_90a (the step's own source is included) and run: the
    names of its passing cases, and the run (its output is each assertion's message)."""
    p = run_unit(source, tmp_path, ("-gencode", "arch=compute_90a,code=sm_90a", *flags))
    return {ln.split()[1] for ln in p.stdout.splitlines() if ln.startswith("ok ")}, p


def test_gemm_host_checks(tmp_path):
    # 09_gemm/gemm.cu's host checks, fed wrong answers: the tail past C excused only when it holds
    # what the hardware writes there (zeros), a frame or interior word never; an unpaired PERF line
    # gets no reference; the reference checked against the CPU and kept apart from the readback
    # buffer (a later readback must not become the expectation), and check_gemm comparing the
    # output with the expectation (a wrong word, a word outside C, an output never written).
    oks, p = unit_cases("tests/unit_gemm_checks.cu", tmp_path, "-lcublas", "-lcublasLt")
    assert {"tail_zeros_counted", "tail_value_not_excused", "frame_zero_not_excused", "interior_zero_reported",
            "reduce_tail_nan_counted", "reduce_tail_zero_not_excused", "store_tail_nan_not_excused",
            "inputs_nonzero_small", "unpaired_line_gets_none", "reference_checked_against_the_cpu",
            "reference_kept_as_the_expected_output", "right_output_passes", "wrong_word_in_c_found",
            "word_outside_c_found", "never_written_found", "expected_output_unchanged_by_readbacks",
            "reference_is_the_fastest_exact_candidate", "reference_never_the_slowest_exact",
            "reference_of_no_exact_is_the_fastest"} <= oks, p.stdout


def test_stream_k_schedule(tmp_path):
    # 09's stream-K schedule (09_gemm/parts/stream_k.cuh), from the program itself: every (tile, k-block)
    # of C covered once by the clusters' dealt tiles and tail pieces, a cluster's one waiting piece last,
    # one storing piece per cut tile, the shares even; the tail is the last round (one more when its shares
    # are too small), none when the rounds are whole.
    oks, p = unit_cases("tests/unit_stream_k.cu", tmp_path, "-lcublas", "-lcublasLt")
    assert {"stream_k_covers_every_tile_and_k_block_once", "stream_k_no_tail_when_rounds_are_whole",
            "stream_k_tail_is_the_last_round", "stream_k_small_tail_takes_one_more_round"} <= oks, p.stdout


def test_reduce_host_checks(tmp_path):
    # 07_reduce_multicast's checks, fed right and wrong answers. Split-K: one contributor lost or added
    # twice is caught for every element, the bound stays within 2^-17 of the terms' magnitudes, a real f32
    # order passes, check_splitk finds a short sum and the poison. The reduce ops: each op by hand, every
    # contributor folded and showing. The broadcast: even words (no checksum is the poison), the reference
    # is the consumers' checksum, check_broadcast tells a moved row, an unwritten and a foreign sum apart,
    # each variant re-poisons. The dsmem ring: its words never the poison, the previous rank's expected.
    oks, p = unit_cases("tests/unit_host_checks_07.cu", tmp_path)
    assert {"in_order_sum_within_bound", "bound_is_tight", "missing_contributor_caught",
            "doubled_contributor_caught", "splitk_right_sums_pass", "splitk_lost_contributor_found",
            "splitk_lost_contributor_counted", "splitk_poison_found", "splitk_poison_counted", "apply_op_by_hand",
            "reference_folds_every_contributor", "a_lost_contributor_shows_in_every_element",
            "a_lost_contributor_shows_in_min_and_max", "b_words_even", "checksums_never_the_poison_word",
            "reference_is_the_consumers_checksum", "every_cta_wants_every_row", "broadcast_right_sums_pass",
            "broadcast_wrong_sums_found", "broadcast_wrong_sums_counted", "broadcast_moved_row_named",
            "broadcast_kinds_told_apart", "broadcast_part_right_passes", "broadcast_part_repoisoned",
            "dsmem_words_never_the_poison_word", "dsmem_reference_takes_the_previous_rank",
            "dsmem_reference_never_a_cta_s_own"} <= oks, p.stdout


def test_grouped_gemm_host_checks(tmp_path):
    # 10_grouped_gemm's check_batch, fed wrong outputs: the right one passes; a stale expert counts as one
    # expert (all its words wrong), words of the frame or the row padding as written outside C, never
    # as an expert; each batch is checked in its own buffer set.
    oks, p = unit_cases("tests/unit_host_checks_10.cu", tmp_path, "-lcublas")
    assert {"right_answer_passes", "stale_expert_counted", "words_outside_c_counted", "experts_and_outside_apart",
            "never_written_counted", "other_set_passes", "other_set_expert_counted"} <= oks, p.stdout


def test_grouped_schedule(tmp_path):
    # 10_grouped_gemm's schedule, from the program itself: a permutation of the units for every batch, the
    # memory-bound units dealt within one of their share in every 132 units, the plan of both problems (the
    # first mixed, the second in expert order, as measured on both GPUs) and the other schedule.
    oks, p = unit_cases("tests/unit_grouped_schedule.cu", tmp_path, "-lcublas")
    assert {"first_problem_mixed", "first_problem_permutation", "first_problem_dealt_evenly",
            "first_problem_other_in_expert_order", "second_problem_in_expert_order", "second_problem_other_mixed",
            "second_problem_other_dealt_evenly", "empty_expert", "all_small_mixed"} <= oks, p.stdout


def test_cp_async_host_checks(tmp_path):
    # 02_cp_async's CPU reference of the polynomial (every poly_* part's expected output): Horner's rule from
    # x, the coefficients in order, one rounding per step as the kernels' __fmaf_rn (a twice-rounded
    # reference differs for some inputs).
    oks, p = unit_cases("tests/unit_host_checks_02.cu", tmp_path)
    assert {"degree_0_is_the_identity", "degree_2_by_hand", "coefficients_in_order",
            "one_rounding_per_step"} <= oks, p.stdout


def test_tma_store_host_checks(tmp_path):
    # 04_tma_store's input words: one-to-one, below 2^31 (+1 never the poison or the guard word), and +1
    # never the next element's or the next row's word.
    oks, p = unit_cases("tests/unit_host_checks_04.cu", tmp_path)
    assert {"below_2_to_31", "plus_one_never_poison_or_guard", "plus_one_is_not_the_neighbour",
            "plus_one_is_not_the_next_row", "one_to_one"} <= oks, p.stdout


def test_swizzle_host_checks(tmp_path):
    # 05_swizzle's judges: `misplaced` finds none in the formula's own layout (every mode, 2- and 4-byte
    # elements) and counts swapped, lost, wrong-mode and wrong-base layouts; `conflict_degree` gives 1 for
    # a row and a broadcast, 2, 4 and 32 for the 2-way, swizzled-column and plain-column patterns.
    oks, p = unit_cases("tests/unit_host_checks_05.cu", tmp_path)
    assert {"formula_layout_has_none_misplaced", "two_swapped_counted", "one_lost_counted", "wrong_mode_caught",
            "absolute_base_matters", "row_of_words_conflict_free", "column_of_128B_rows_32_way", "broadcast_free",
            "stride_2_words_2_way", "swizzled_column_4_way"} <= oks, p.stdout


def test_tma_load_host_checks(tmp_path):
    # 03_tma_load's expected_word, from the program: the index inside, the fill (0) one step out on every
    # side, and a box shifted by one row or column never matching.
    oks, p = unit_cases("tests/unit_host_checks_03.cu", tmp_path)
    assert {"inside_is_index", "left_is_fill", "top_is_fill", "right_is_fill", "bottom_is_fill",
            "shift_by_one_never_matches"} <= oks, p.stdout


def test_transpose_host_checks(tmp_path):
    # 06_transpose's TMA-store tail rule, fed wrong outputs: zeros in a row's last chunk excused, any other
    # value there, a zero in the frame or in the transpose itself reported.
    oks, p = unit_cases("tests/unit_host_checks_06.cu", tmp_path, "-lcublas")
    assert {"tail_zeros_counted", "tail_zeros_restored", "tail_value_not_excused", "frame_zero_not_excused",
            "interior_zero_reported"} <= oks, p.stdout


def test_descriptor_update_host_checks(tmp_path):
    # 08_descriptor_update's group layout: 16-byte aligned starts and strides, no overlap, every box in
    # exactly one item, at the defaults, at --quick, small odd shapes and the array case; each part
    # (COPY_PART) poisons the destination pool first: a part that leaves a group out fails, exactly that
    # group's words never written, after a part that copied it; cross_cta's part, run whole, the same;
    # a field probe's check finds one wrong word and an edit never made, and refuses a probe that could
    # not fail (its host box the template's).
    oks, p = unit_cases("tests/unit_host_checks_08.cu", tmp_path)
    assert {"grouped_aligned", "grouped_apart", "grouped_items_cover_every_box_once", "quick_apart",
            "odd_aligned", "odd_items_cover_every_box_once", "same_shape_one_shape", "right_part_passes",
            "next_part_repoisoned", "left_out_group_counted", "cross_cta_right_passes", "cross_cta_repoisoned",
            "field_right_passes", "field_one_word_found", "field_not_edited_found",
            "field_that_cannot_fail_refused"} <= oks, p.stdout
