"""tools/patches.py: a diff applies by its text, wherever that text now lives, and never by a guess."""

from __future__ import annotations

import pathlib

import pytest

import patches

DIFF = """what: a planted mistake
caught by: cpu:tests/test_x.py

--- a/step/program.cu
+++ b/step/program.cu
@@ -10,3 +10,3 @@
 int a = 1;
-int b = 2;
+int b = 3;
 int c = 4;
"""


def tree(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_hunk_applies_where_its_text_is_whatever_the_line_numbers_say(tmp_path):
    root = tree(tmp_path, {"step/program.cu": "// moved down\n\n\nint a = 1;\nint b = 2;\nint c = 4;\n"})
    assert patches.apply_text(DIFF, root) == ["step/program.cu"]
    assert (root / "step/program.cu").read_text().endswith("int a = 1;\nint b = 3;\nint c = 4;\n")
    patches.apply_text(DIFF, root, reverse=True)
    assert "int b = 2;" in (root / "step/program.cu").read_text()


def test_a_hunk_follows_its_code_into_another_file(tmp_path):
    # The program was cut into parts: the hunk's text now lives in step/parts/loader.cuh.
    root = tree(tmp_path, {"step/program.cu": "#include \"parts/loader.cuh\"\n",
                           "step/parts/loader.cuh": "int a = 1;\nint b = 2;\nint c = 4;\n"})
    assert patches.apply_text(DIFF, root) == ["step/parts/loader.cuh"]
    assert "int b = 3;" in (root / "step/parts/loader.cuh").read_text()


def test_text_found_twice_or_nowhere_is_an_error_not_a_guess(tmp_path):
    twice = "int a = 1;\nint b = 2;\nint c = 4;\n"
    root = tree(tmp_path, {"step/program.cu": "int x;\n", "step/a.cuh": twice, "step/b.cuh": twice})
    with pytest.raises(ValueError, match="2\\+ places"):
        patches.apply_text(DIFF, root)
    root2 = tree(tmp_path / "other", {"step/program.cu": "int a = 1;\nint b = 5;\nint c = 4;\n"})
    with pytest.raises(ValueError, match="found nowhere"):
        patches.apply_text(DIFF, root2)
    # Nothing was written by a diff that failed.
    assert (root / "step/a.cuh").read_text() == twice


def test_refresh_rewrites_the_header_where_the_hunk_now_is(tmp_path):
    root = tree(tmp_path, {"step/parts/loader.cuh": "x\ny\nint a = 1;\nint b = 2;\nint c = 4;\n"})
    d = root / "1.diff"
    d.write_text(DIFF)
    assert patches.refresh(d, root)
    text = d.read_text()
    assert text.startswith("what: a planted mistake\ncaught by:")
    assert "+++ b/step/parts/loader.cuh\n@@ -3,3 +3,3 @@\n int a = 1;\n-int b = 2;\n+int b = 3;\n" in text
    assert not patches.refresh(d, root)  # idempotent


def test_a_code_hunk_never_moves_into_a_lesson_that_quotes_it(tmp_path):
    # The lesson quotes the code; the code moved into a part: the part is the one match.
    quoted = "int a = 1;\nint b = 2;\nint c = 4;\n"
    root = tree(tmp_path, {"step/program.cu": "#include \"parts/p.cuh\"\n", "step/parts/p.cuh": quoted,
                           "step/README.md": "```\n" + quoted + "```\n"})
    assert patches.apply_text(DIFF, root) == ["step/parts/p.cuh"]
    assert "int b = 2;" in (root / "step/README.md").read_text()
