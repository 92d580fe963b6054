"""The documentation runs as written: every ```python block of README.md and
docs/*.md, each page's blocks in order in one fresh interpreter (later blocks
use earlier names, as a reader running them would), and every relative link
points to a file that exists."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)\n(.*?)^```$", re.S | re.M)
# Fenced code is either run (python) or declared as not Python: shell
# commands and their output are text or console.
LANGUAGES = {"python", "text", "console"}
# Pages whose examples need a CUDA device: they run on the emulated one
# where there is no GPU (arrayx/_gpu/emulation).
ON_EMULATED_GPU = {"docs/gpu.md"}
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")

# Runs in the fresh interpreter: each block compiled under its page's name,
# at its own line, so a failure's traceback points into the page.
RUNNER = """
import json, sys
namespace = {"__name__": "__main__"}
for page, line, source in json.load(sys.stdin):
    exec(compile("\\n" * line + source, page, "exec"), namespace)
"""


def name(page):
    return page.relative_to(ROOT).as_posix()


def fences(page):
    """(language, line of the first code line - 1, code) of each fenced block."""
    text = page.read_text()
    return [(m.group(1), text.count("\n", 0, m.start(2)), m.group(2)) for m in FENCE.finditer(text)]


def python_blocks(page):
    return [(line, code) for language, line, code in fences(page) if language == "python"]


PAGES_WITH_EXAMPLES = [page for page in PAGES if python_blocks(page)]


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_code_block_is_python_or_declared_text(page):
    languages = {language for language, _, _ in fences(page)}
    assert languages <= LANGUAGES, f"{name(page)}: fences {sorted(languages - LANGUAGES)}; use python, text or console"


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES, ids=name)
def test_python_blocks_run_in_order_in_a_fresh_interpreter(page, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    if name(page) in ON_EMULATED_GPU:
        env["ARRAYX_GPU_EMULATION"] = "1"
    blocks = [(name(page), line, code) for line, code in python_blocks(page)]
    result = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(blocks), cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{name(page)}'s examples failed:\n{result.stderr}"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_relative_links_point_to_existing_files(page):
    targets = [t.split("#")[0] for t in LINK.findall(page.read_text())
               if "://" not in t and not t.startswith(("#", "mailto:"))]
    missing = [t for t in targets if not (page.parent / t).exists()]
    assert not missing, f"{name(page)} links to missing files: {missing}"


def test_readme_links_every_docs_page():
    readme = ROOT / "README.md"
    linked = {(readme.parent / t.split("#")[0]).resolve() for t in LINK.findall(readme.read_text())}
    unlinked = [name(page) for page in PAGES[1:] if page.resolve() not in linked]
    assert not unlinked, f"README.md does not link {unlinked}"


# File names a page mentions as a command's argument that stand for the
# reader's own script, not a file of the repository.
READERS_SCRIPTS = {"script.py", "my_script.py", "my_neon_script.py", "my_ngraph_script.py", "train.py"}
FILE_NAME = re.compile(r"[\w./-]*\w\.(?:md|py|toml|cfg|txt|ipynb|cuh|cpp|h)\b")


@pytest.mark.parametrize("page", PAGES + [ROOT / "pyproject.toml"], ids=name)
def test_every_file_a_page_names_is_in_the_repository(page):
    """A path (docs/design.md, graph/primitives.py) or file name (DESIGN.md) a
    page or pyproject.toml names exists here: relative to the page, or as the
    end of a path in the repository."""
    files = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if ".git" not in p.parts]
    missing = [m for m in sorted(set(FILE_NAME.findall(page.read_text())))
               if m not in READERS_SCRIPTS and not (page.parent / m).exists()
               and not any(f == m or f.endswith("/" + m) for f in files)]
    assert not missing, f"{name(page)} names files the repository does not have: {missing}"


SKLEARN_ON_ARRAYX = """
import numpy as np, sklearn, arrayx as xp
from sklearn.preprocessing import StandardScaler
sklearn.set_config(array_api_dispatch=True)
data = np.random.default_rng(0).random((100, 3))
scaled = StandardScaler().fit_transform(xp.asarray(data))
np.testing.assert_allclose(np.asarray(scaled), StandardScaler().fit_transform(data), rtol=1e-12)
print(type(scaled).__name__)
"""


def test_scikit_learn_runs_on_arrayx_with_the_setting_the_readme_gives():
    """The README says scikit-learn's array_api_dispatch needs SCIPY_ARRAY_API=1:
    without it scikit-learn refuses, with it StandardScaler returns arrayx arrays."""
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (it comes with the bench extra)")
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"`array_api_dispatch`\s+and\s+`SCIPY_ARRAY_API=1`", readme)
    assert "SCIPY_ARRAY_API=1 python my_script.py" in readme
    env = {k: v for k, v in os.environ.items() if k != "SCIPY_ARRAY_API"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    refused = subprocess.run([sys.executable, "-c", SKLEARN_ON_ARRAYX], env=env, capture_output=True, text=True,
                             timeout=300)
    assert refused.returncode != 0 and "SCIPY_ARRAY_API" in refused.stderr
    ran = subprocess.run([sys.executable, "-c", SKLEARN_ON_ARRAYX], env=dict(env, SCIPY_ARRAY_API="1"),
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["Array"]


def test_readme_says_how_long_the_test_command_takes():
    """The Quick start gives the test command and how long it took, and on what machine."""
    readme = (ROOT / "README.md").read_text()
    quick_start = readme[readme.index("## Quick start"):readme.index("## A tour")]
    assert re.search(r"`python -m pytest tests` took \d+ minutes .* on a\s+2-vCPU", quick_start, re.S)
