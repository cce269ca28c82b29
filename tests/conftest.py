"""Shared fixtures: trees built on disk from the compact dict form the goldens use."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

TreeSpec = dict[str, str | None]

# The suites below were written for Gemini CLI 0.43's model
# (docs/reference.md "Which agent, which version": classic mode, a context.fileName that replaces
# GEMINI.md): they pin that profile, as a user pins a version. Without a pin the default follows the
# Gemini CLI on PATH, else gemini@0.44+ (tests/test_agent_choice.py clears the pin to test exactly
# that).
os.environ.setdefault("MEMLENS_AGENTS", "gemini@0.43")
# Versions `memlens verify` remembers as verified on this machine: the tests' own (empty) file,
# so what a developer verified by hand cannot change which versions count as verified.
os.environ.setdefault("MEMLENS_VERIFICATIONS", os.path.join(
    os.environ.get("TMPDIR", "/tmp"), f"memlens-tests-verified-{os.getpid()}.json"))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("memlens conformance")
    group.addoption("--cases", type=int, default=None, metavar="N",
                    help="generated trees for the Gemini CLI 0.43 loader fuzzer "
                         "(tests/conformance/test_loader.py; default MEMLENS_CONFORMANCE_FUZZ "
                         "or the CI count)")
    group.addoption("--fuzz-seed", type=int, default=None, metavar="S",
                    help="the loader fuzzer's seed (default MEMLENS_CONFORMANCE_FUZZ_SEED or "
                         "the fixed CI seed)")
    group.addoption("--diff-cases", type=int, default=None, metavar="N",
                    help="generated trees per agent for the differential runner "
                         "(tests/conformance/test_differential.py; default MEMLENS_DIFF_CASES "
                         "or the agent's CI count)")
    group.addoption("--diff-seed", type=int, default=None, metavar="S",
                    help="the differential runner's seed (default MEMLENS_DIFF_SEED or the "
                         "agent's fixed CI seed)")


def build_tree(root: Path, tree: TreeSpec) -> None:
    """Keys are paths under root; None makes a folder, a string a file with that text."""
    for rel, content in tree.items():
        path = root / rel
        if content is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode("utf-8"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A fresh, realpath'd folder (Gemini CLI's paths are physical)."""
    real = Path(os.path.realpath(tmp_path)) / "root"
    real.mkdir()
    return real


@pytest.fixture
def make_tree(root: Path) -> Callable[[TreeSpec], Path]:
    def make(tree: TreeSpec) -> Path:
        build_tree(root, tree)
        return root

    return make
