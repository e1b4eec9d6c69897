"""Code compared as code: a submission against the copy as handed out (EDITED, UNFILLED, and where each hole's
fill is), a guarded file against its original, and an answer against every file a student can read.

Whitespace and comments are never code: C and CUDA are compared token by token with comments dropped, check.py
as Python tokens with comments and blank lines dropped. expected_output.txt is data: compared line by line,
trailing whitespace aside.
"""

from __future__ import annotations

import difflib
import io
import re
import tokenize

import lab_copy

TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*|\d[\w.]*|->|::|<<|>>|&&|\|\||'
                   r'[-+*/%<>=!&|^]=|\+\+|--|\S')


def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def code_lines(text: str) -> list[tuple[int, str]]:
    """(0-based line, its code) for every line that holds code: comments dropped (// and /* */, not inside a
    string), its tokens one space apart. An edit of whitespace or of a comment changes none of them."""
    out, code, in_block, line = [], [], False, 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if in_block:
            if text.startswith("*/", i):
                in_block, i = False, i + 2
                code.append(" ")
                continue
            if c == "\n":
                out.append((line, squash("".join(code))))
                code, line = [], line + 1
            i += 1
        elif c in "\"'":  # a literal, copied whole (escapes included)
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            code.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            in_block, i = True, i + 2
        elif c == "\n":
            out.append((line, squash("".join(code))))
            code, line = [], line + 1
            i += 1
        else:
            code.append(c)
            i += 1
    out.append((line, squash("".join(code))))
    return [(ln, " ".join(TOKEN.findall(s))) for ln, s in out if s]  # `x=1 ;` and `x = 1;` are the same


def show_change(old: str, new: str, width: int = 36) -> str:
    """Where two lines of code differ, with some context either side: the changed characters always show."""
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    a = max(0, p - width)

    def cut(t: str) -> str:
        end = min(len(t), len(t) - s + width)
        return ("..." if a else "") + t[a:end] + ("..." if end < len(t) else "")
    return f"{cut(old)!r} -> {cut(new)!r}"


def compare_with_copy(copy: str, spans: list[tuple[int, int]], submitted: str):
    """(every change of the submitted file outside its holes, as 'line N ...' of the copy as handed out; the
    holes, 0-based, it left as they were; each hole's lines in the submitted file, 0-based and inclusive:
    everything between the code before it and the code after it). Inside a hole (its TODO line, its stubs,
    and lines added just before or after them) anything goes."""
    a, b = code_lines(copy), code_lines(submitted)
    # Hole k covers the code lines from `first[k]` (its first stub) up to, not including, `end[k]`.
    first = [sum(1 for ln, _ in a if ln < f) for f, _ in spans]
    end = [sum(1 for ln, _ in a if ln <= l) for _, l in spans]
    hole_of = lambda i: next((k for k in range(len(spans)) if first[k] <= i < end[k]), None)  # noqa: E731
    edits, touched, twin = [], set(), {}  # twin: a code line of the copy -> the same line in the submission
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, [s for _, s in a], [s for _, s in b],
                                                       autojunk=False).get_opcodes():
        if tag == "equal":
            twin.update({i1 + d: j1 + d for d in range(i2 - i1)})
            continue
        if i1 == i2:  # lines added: in a hole if they touch one (just before, inside or just after it)
            at = [k for k in range(len(spans)) if first[k] <= i1 <= end[k]]
            touched.update(at)
            if not at:
                line = a[i1][0] + 1 if i1 < len(a) else len(copy.splitlines()) + 1
                edits.append(f"lines added before line {line}: {b[j1][1][:72]!r}")
            continue
        for i in range(i1, i2):
            k = hole_of(i)
            if k is not None:
                touched.add(k)
            elif tag == "replace" and j1 + (i - i1) < j2:
                edits.append(f"line {a[i][0] + 1} changed: {show_change(a[i][1], b[j1 + (i - i1)][1])}")
            else:
                edits.append(f"line {a[i][0] + 1} deleted: {a[i][1][:72]!r}")
        if tag == "replace" and j2 - j1 > i2 - i1 and hole_of(i2 - 1) is None and not any(
                first[k] <= i2 <= end[k] for k in range(len(spans))):
            edits.append(f"lines added before line {a[i2][0] + 1 if i2 < len(a) else len(copy.splitlines()) + 1}: "
                         f"{b[j1 + i2 - i1][1][:72]!r}")
    lines = len(submitted.splitlines())
    regions = []
    for k in range(len(spans)):
        before = [twin[i] for i in range(first[k]) if i in twin and hole_of(i) is None]
        after = [twin[i] for i in range(end[k], len(a)) if i in twin and hole_of(i) is None]
        regions.append((b[before[-1]][0] + 1 if before else 0, b[after[0]][0] - 1 if after else lines - 1))
    return edits, [k for k in range(len(spans)) if k not in touched], regions


def outside_edits(copy: str, spans: list[tuple[int, int]], submitted: str) -> list[str]:
    return compare_with_copy(copy, spans, submitted)[0]


def untouched_holes(copy: str, spans: list[tuple[int, int]], submitted: str, labels: list[str]) -> list[str]:
    """The holes (NN.k) the submission left as handed out (whitespace and comments aside)."""
    return [labels[k] for k in compare_with_copy(copy, spans, submitted)[1]]


def python_code(text: str) -> list[str]:
    """A Python file's tokens, comments, blank lines, docstrings (a string that is a statement of its own) and
    the width of an indent left out (a file that does not tokenize is its lines)."""
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text.splitlines()
    starts = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    out, skip = [], False
    for i, t in enumerate(toks):
        if skip:  # the docstring's own end of line
            skip = False
            continue
        if t.type == tokenize.STRING and (i == 0 or toks[i - 1].type in starts) and \
                i + 1 < len(toks) and toks[i + 1].type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            skip = toks[i + 1].type == tokenize.NEWLINE
            continue
        out.append(f"{t.type}:{'' if t.type in starts[1:] else t.string}")
    return out


def same_code(name: str, original: str, submitted: str) -> bool:
    """Whether a guarded file of a submission is its original, as code: check.py as Python tokens (comments,
    docstrings and blank lines aside), a header as C tokens (comments and whitespace aside), expected_output.txt
    line by line (trailing spaces aside)."""
    if name.endswith(".py"):
        return python_code(original) == python_code(submitted)
    if name.endswith((".h", ".cuh", ".cu")):
        return [c for _, c in code_lines(original)] == [c for _, c in code_lines(submitted)]
    return [ln.rstrip() for ln in original.splitlines()] == [ln.rstrip() for ln in submitted.splitlines()]


# ---- answers up to renamed variables ------------------------------------------------------------------------------
# A hole's answer must appear nowhere else a student can read, not even with other names: a neighbouring kernel that
# does the same with its own variables is the answer one paste away. Code is compared as tokens, comments dropped,
# every identifier that is not the tutorial's or CUDA's vocabulary (a wrapper, a keyword, a type, a builtin, a
# member name) replaced by `$`: `tma_load_2d(box, &map, col0, row0, &bar)` is `tma_load_2d ( $ , & $ , $ , $ , & $ )`.
VOCABULARY = set("""
    alignas alignof asm auto bool break case char const constexpr continue default do double else enum extern false
    float for goto if inline int long return short signed sizeof static static_assert static_cast struct switch
    template true typedef typename union unsigned using void volatile while reinterpret_cast const_cast nullptr
    int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t float2 float4 uint2 uint4 int2 int4
    threadIdx blockIdx blockDim gridDim warpSize __shared__ __device__ __global__ __forceinline__ __restrict__
    __align__ pragma unroll""".split())


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def vocabulary() -> set[str]:
    """The names a kernel may share with the answer and still be another kernel: every function, macro and
    template the tutorial's sources call or define (its wrappers, CUDA's intrinsics), besides VOCABULARY."""
    names = set(VOCABULARY)
    root = lab_copy.root()
    sources = [p for d in ["common", *lab_copy.contract.step_dirs()] for p in (root / d).rglob("*")
               if p.suffix in (".cu", ".cuh", ".h") and "twins" not in p.parts]
    for p in sources:
        code = strip_comments(p.read_text())
        # called or defined, macros included; not a member's call, and no one-letter name (09's maps.b() is
        # a method: b is still any variable's name)
        names |= {n for n in re.findall(r"(?<![.>\w])([A-Za-z_]\w*)\(", code) if len(n) > 1}
        names |= set(re.findall(r"\b([A-Za-z_]\w*)<[^;<>()]*>\(", code))  # templates: tmap_replace_dim<0>(
    return names


def shape(text: str, names: set[str]) -> list[str]:
    """The code's tokens with every identifier outside `names` (and not after . or ->) replaced by `$`. In
    Markdown and diffs a line's leading + or - (a diff's mark) is dropped first."""
    text = re.sub(r"^[+-](?![+-])", " ", text, flags=re.M)
    toks = TOKEN.findall(strip_comments(text))
    return ["$" if re.match(r"[A-Za-z_]", t) and t not in names and not (i and toks[i - 1] in (".", "->")) else t
            for i, t in enumerate(toks)]


def answer_shapes(names: set[str], steps: list[str] | None = None) -> dict[str, list[str]]:
    """{NN.k: its answer (the solution's lines, stubs left out) as shape() tokens} for every hole."""
    out = {}
    for step in steps or lab_copy.contract.step_dirs():
        for label, rel, h in lab_copy.step_holes(step):
            out[label] = shape("\n".join(lab_copy.hole_body(lab_copy.solution_text(rel), h)), names)
    return out


def pasted_answers(text: str, answers: dict[str, list[str]], names: set[str]) -> list[str]:
    """The answers (their keys) whose whole shape, up to renamed variables, stands somewhere in `text`."""
    flat = " " + " ".join(shape(text, names)) + " "
    return [k for k, a in answers.items() if a and " " + " ".join(a) + " " in flat]
