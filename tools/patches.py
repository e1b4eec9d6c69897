"""Diffs keyed by their text, not by line numbers or files.

Every planted mistake (NN_topic/bugs/N.diff), author's defect
(tests/defects/*.diff) and experiment variant (results/experiments/*.diff) is
a unified diff. Applied by line number, each would break whenever code above
it moves, or moves into another file (a program cut into parts). Here a
hunk is found by its text: the lines it keeps and removes (its "before"),
which must occur exactly once, first in the file the diff names, else in
one other file of the tree (a step's program and its part headers, the
wrappers, the harness, the tools). Line numbers in the @@ headers are
ignored. A hunk whose text occurs nowhere, or more than once, is an error
that names the hunk: never a guess.

    python3 tools/patches.py check DIFF...      each applies to the repository as it is
    python3 tools/patches.py refresh DIFF...    rewrite each diff against where its hunks are now
                                                (file names and line numbers; its text and notes kept)

Used by tools/bugs.py (a planted copy), tools/mutation.py (in place) and the
tests. Standard library only.
"""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
# Where a hunk may move to: text files of these kinds, outside these folders.
SEARCH_SUFFIXES = {".cu", ".cuh", ".h", ".c", ".py", ".sh", ".md", ".txt", ""}
PROSE_SUFFIXES = {".md", ".txt"}
SKIP_PARTS = {".git", ".venv", "build", "bugs", "defects", "results", "labs", "__pycache__", "node_modules"}


@dataclasses.dataclass
class Hunk:
    before: list[str]  # context and removed lines, in order
    after: list[str]  # context and added lines, in order
    header: str  # the @@ line as written (for messages)


@dataclasses.dataclass
class FilePatch:
    path: str  # the file the diff names (b/ side), repository-relative
    hunks: list[Hunk]


def parse(text: str) -> tuple[str, list[FilePatch]]:
    """(the notes above the first ---, the file patches)."""
    lines = text.splitlines()
    notes: list[str] = []
    patches: list[FilePatch] = []
    i = 0
    while i < len(lines) and not (lines[i].startswith("--- ") and i + 1 < len(lines)
                                  and lines[i + 1].startswith("+++ ")):
        notes.append(lines[i])
        i += 1
    while i < len(lines):
        if lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            name = lines[i + 1][4:].split("\t")[0].strip()
            if name == "/dev/null":
                name = lines[i][4:].split("\t")[0].strip()
            path = name[2:] if name.startswith(("a/", "b/")) else name
            patches.append(FilePatch(path, []))
            i += 2
            continue
        if lines[i].startswith("@@"):
            if not patches:
                raise ValueError(f"a hunk before any file header: {lines[i]}")
            hunk = Hunk([], [], lines[i])
            i += 1
            while i < len(lines) and not lines[i].startswith("@@") and not (
                    lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
                ln = lines[i]
                if ln.startswith("\\"):  # "\ No newline at end of file"
                    i += 1
                    continue
                tag, body = (ln[:1], ln[1:]) if ln else (" ", "")
                if tag in (" ", "-"):
                    hunk.before.append(body)
                if tag in (" ", "+"):
                    hunk.after.append(body)
                if tag not in (" ", "-", "+"):
                    raise ValueError(f"not a diff line in {hunk.header}: {ln!r}")
                i += 1
            patches[-1].hunks.append(hunk)
            continue
        i += 1
    if not patches:
        raise ValueError("no file header (--- a/..., +++ b/...) in the diff")
    return "\n".join(notes), patches


def occurrences(haystack: list[str], needle: list[str]) -> list[int]:
    n = len(needle)
    if n == 0:
        return []
    first = needle[0]
    return [i for i in range(len(haystack) - n + 1) if haystack[i] == first and haystack[i:i + n] == needle]


def candidate_files(tree: pathlib.Path) -> list[pathlib.Path]:
    """The text files a hunk may have moved to: in a git checkout, the tracked ones (a stray copy of old
    sources beside them must not answer for the code); elsewhere (a planted copy), every one."""
    if (tree / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=tree, capture_output=True, text=True)
        if listed.returncode == 0:
            paths = [tree / f for f in listed.stdout.split("\0") if f]
            return [p for p in paths if p.is_file() and not SKIP_PARTS.intersection(p.relative_to(tree).parts[:-1])
                    and p.suffix in SEARCH_SUFFIXES]
    out = []
    for p in sorted(tree.rglob("*")):
        rel = p.relative_to(tree)
        if p.is_file() and not SKIP_PARTS.intersection(rel.parts[:-1]) and p.suffix in SEARCH_SUFFIXES:
            out.append(p)
    return out


class Tree:
    """A folder's text files, read once, edited in memory, written at the end."""

    def __init__(self, root: pathlib.Path):
        self.root = root
        self.text: dict[str, list[str]] = {}
        self.trailing: dict[str, bool] = {}
        self._all: list[str] | None = None

    def lines(self, rel: str) -> list[str] | None:
        if rel not in self.text:
            p = self.root / rel
            if not p.is_file():
                return None
            try:
                t = p.read_text()
            except UnicodeDecodeError:
                return None
            self.text[rel] = t.splitlines()
            self.trailing[rel] = t.endswith("\n")
        return self.text[rel]

    def every_file(self) -> list[str]:
        if self._all is None:
            self._all = [str(p.relative_to(self.root)) for p in candidate_files(self.root)]
        return self._all

    def locate(self, fp: FilePatch, hunk: Hunk) -> tuple[str, int]:
        """(file, index) where the hunk's before-text occurs exactly once: the named file first."""
        named = self.lines(fp.path)
        if named is not None:
            at = occurrences(named, hunk.before)
            if len(at) == 1:
                return fp.path, at[0]
            if len(at) > 1:
                raise ValueError(f"{fp.path}: hunk {hunk.header} matches {len(at)} places: add context")
        found = []
        # A lesson may quote the code a hunk changes: a hunk aimed at code moves only among code files.
        prose = pathlib.PurePath(fp.path).suffix in PROSE_SUFFIXES
        for rel in self.every_file():
            if rel == fp.path or (not prose and pathlib.PurePath(rel).suffix in PROSE_SUFFIXES):
                continue
            lines = self.lines(rel)
            if lines is None:
                continue
            found += [(rel, i) for i in occurrences(lines, hunk.before)]
            if len(found) > 1:
                break
        if len(found) == 1:
            return found[0]
        where = "nowhere" if not found else f"in {len(found)}+ places ({', '.join(f for f, _ in found)})"
        first = next((ln.strip() for ln in hunk.before if ln.strip()), "")
        raise ValueError(f"hunk {hunk.header} of {fp.path} ({first[:60]!r}) is found {where}")

    def write(self) -> None:
        for rel, lines in self.text.items():
            (self.root / rel).write_text("\n".join(lines) + ("\n" if self.trailing.get(rel, True) else ""))


def plan(text: str, root: pathlib.Path) -> list[tuple[str, int, Hunk]]:
    """Where each hunk applies in the tree (file, index), without changing anything."""
    _, patches = parse(text)
    tree = Tree(root)
    return [(*tree.locate(fp, h), h) for fp in patches for h in fp.hunks]


def apply_text(text: str, root: pathlib.Path, reverse: bool = False) -> list[str]:
    """Apply a diff to the files under root (reverse: take it back). Returns the files changed.
    Every hunk is located before any file is written: all or nothing."""
    _, patches = parse(text)
    tree = Tree(root)
    edits: list[tuple[str, int, Hunk]] = []
    for fp in patches:
        for h in fp.hunks:
            if reverse:
                h = Hunk(h.after, h.before, h.header)
            rel, at = tree.locate(fp, h)
            edits.append((rel, at, h))
    # Within a file, from the bottom up, so earlier indexes stay valid; overlapping hunks are an error.
    by_file: dict[str, list[tuple[int, Hunk]]] = {}
    for rel, at, h in edits:
        by_file.setdefault(rel, []).append((at, h))
    for rel, items in by_file.items():
        items.sort(key=lambda x: x[0])
        for (a, ha), (b, _) in zip(items, items[1:]):
            if a + len(ha.before) > b:
                raise ValueError(f"{rel}: two hunks overlap at line {b + 1}")
        lines = tree.lines(rel)
        for at, h in reversed(items):
            lines[at:at + len(h.before)] = h.after
    tree.write()
    return sorted(by_file)


def apply(diff: pathlib.Path, root: pathlib.Path, reverse: bool = False) -> list[str]:
    try:
        return apply_text(diff.read_text(), root, reverse)
    except ValueError as e:
        name = diff.relative_to(REPO) if diff.is_relative_to(REPO) else diff
        raise ValueError(f"{name} does not apply: {e}") from None


def render(notes: str, root: pathlib.Path, located: list[tuple[str, int, Hunk]], context: int = 3) -> str:
    """The diff again, one file header per file, hunks with fresh line numbers (the same text)."""
    out = [notes] if notes else []
    if notes and not notes.endswith("\n"):
        out[-1] += "\n" if notes.strip() else ""
    current = None
    delta: dict[str, int] = {}
    tree = Tree(root)
    for rel, at, h in sorted(located, key=lambda x: (x[0], x[1])):
        lines = tree.lines(rel)
        assert lines is not None
        if rel != current:
            out += [f"--- a/{rel}", f"+++ b/{rel}"]
            current = rel
        # Recompute the body from the hunk's own lines: a difflib-free walk that keeps its order.
        body = hunk_body(h)
        old_n, new_n = len(h.before), len(h.after)
        d = delta.get(rel, 0)
        out.append(f"@@ -{at + 1},{old_n} +{at + 1 + d},{new_n} @@")
        out += body
        delta[rel] = d + new_n - old_n
    return "\n".join(out) + "\n"


def hunk_body(h: Hunk) -> list[str]:
    """The hunk's lines with their tags, from its before/after sequences (longest common subsequence)."""
    a, b = h.before, h.after
    n, m = len(a), len(b)
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            lcs[i][j] = lcs[i + 1][j + 1] + 1 if a[i] == b[j] else max(lcs[i + 1][j], lcs[i][j + 1])
    i = j = 0
    out = []
    while i < n and j < m:
        if a[i] == b[j]:
            out.append(" " + a[i])
            i += 1
            j += 1
        elif lcs[i + 1][j] >= lcs[i][j + 1]:
            out.append("-" + a[i])
            i += 1
        else:
            out.append("+" + b[j])
            j += 1
    out += ["-" + x for x in a[i:]] + ["+" + x for x in b[j:]]
    return out


def refresh(diff: pathlib.Path, root: pathlib.Path = REPO) -> bool:
    """Rewrite a diff against where its hunks are now. True if its text changed."""
    text = diff.read_text()
    notes, _ = parse(text)
    new = render(notes, root, plan(text, root))
    if new != text:
        diff.write_text(new)
        return True
    return False


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("check", "refresh"):
        print(__doc__.strip().split("\n\n")[2], file=sys.stderr)
        return 2
    bad = 0
    for name in argv[1:]:
        p = pathlib.Path(name)
        try:
            if argv[0] == "check":
                plan(p.read_text(), REPO)
            elif refresh(p):
                print(f"refreshed {name}")
        except ValueError as e:
            print(f"{name}: {e}", file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
