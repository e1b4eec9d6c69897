"""Every notebook executes headless without error and draws its figures, on
a machine with no GPU (they read recorded data only). The committed copies
carry their outputs, so they render on the repository website as they are;
their text outputs must be what a fresh run prints today, so a committed
notebook never shows numbers the recordings no longer hold."""

import pathlib
import re
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def images(nb):
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def texts(nb):
    """The text each code cell prints or returns (figures are compared by count only)."""
    out = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream":
                out.append(o.get("text", ""))
            elif "text/plain" in o.get("data", {}) and "image/png" not in o.get("data", {}):
                out.append(o["data"]["text/plain"])
    return out


def test_the_notebooks_exist():
    assert {p.name for p in NOTEBOOKS} >= {"bank_conflicts.ipynb", "swizzle.ipynb"}
    listed = set(re.findall(r"\]\((\w+\.ipynb)\)", (REPO / "notebooks" / "README.md").read_text()))
    assert listed == {p.name for p in NOTEBOOKS}, f"notebooks/README.md lists {sorted(listed)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_and_draws(path: pathlib.Path):
    nb = nbformat.read(path, as_version=4)
    assert images(nb) > 0, f"{path.name} is committed without its figures"
    committed = texts(nb)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors[0].get("evalue")
    assert images(nb) > 0, f"{path.name} drew no figure"
    assert texts(nb) == committed, (
        f"{path.name}: its committed outputs are stale; refresh them with "
        f"`cd notebooks && ../.venv/bin/python -m jupyter nbconvert --to notebook --execute --inplace {path.name}`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_figure_carries_its_description(path: pathlib.Path, tmp_path):
    # Each figure is shown with its alt text in the output's metadata, and `make notebooks`' HTML template
    # writes it: nbconvert's own writes none and warns "Alternative text is missing".
    nb = nbformat.read(path, as_version=4)
    figures = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert figures and all(len(o.get("metadata", {}).get("image/png", {}).get("alt", "")) > 30 for o in figures), path.name
    p = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", *NB_HTML, "--output-dir",
                        str(tmp_path), str(path)], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0 and "Alternative text is missing" not in p.stderr, p.stderr
    html = (tmp_path / path.with_suffix(".html").name).read_text()
    assert html.count("<img ") == len(figures) and 'alt=""' not in html


NB_HTML = re.search(r"^NB_HTML := (.+)$", (REPO / "Makefile").read_text(), re.M)[1].split()
