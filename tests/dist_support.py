"""What the packaging tests share: a local wheelhouse of memlens's dependencies (the only step
that needs the package index, cached like scripts/bundle_python.py's bundles), the wheel and
sdist built from this checkout offline against it, and clean virtual environments that
install from it with `--no-index`.

The wheelhouse lives in $XDG_CACHE_HOME/memlens/wheelhouse-<key> (key: the dependency lists
of pyproject.toml and this interpreter's version), so a second run needs no network at all.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo"


def _pyproject() -> dict[str, object]:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)


def requirements() -> list[str]:
    """memlens's runtime dependencies, its build backend's, and a current pip (pipx upgrades
    the pip of its shared environment before it installs anything)."""
    data = _pyproject()
    project = data["project"]
    build = data["build-system"]
    assert isinstance(project, dict) and isinstance(build, dict)
    return [*project["dependencies"], *build["requires"], "pip"]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment a stranger's shell would have: no pins of ours, no virtualenv."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MEMLENS_", "PIP_", "VIRTUAL_ENV", "PYTHON", "GEMINI_"))}
    env.update(extra)
    return env


def wheelhouse() -> Path:
    """A folder of wheels for every runtime and build dependency (filled from the index once)."""
    reqs = requirements()
    key = hashlib.sha256("\n".join([*reqs, sys.version.split()[0]]).encode()).hexdigest()[:16]
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memlens"
    folder = cache_root / f"wheelhouse-{key}"
    if (folder / ".complete").is_file():
        return folder
    partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
         "--only-binary=:all:", "-d", str(partial), *reqs],
        capture_output=True, text=True, timeout=600, env=clean_env())
    if result.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        pytest.skip("the wheelhouse of memlens's dependencies could not be filled from the "
                    "package index (needed once, then cached in "
                    f"{folder}): {result.stderr.strip().splitlines()[-1:]}")
    (partial / ".complete").write_text("\n".join(reqs) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    for stale in cache_root.glob("wheelhouse-*"):
        if stale != folder and ".partial-" not in stale.name:
            shutil.rmtree(stale, ignore_errors=True)
    return folder


def offline_pip_env(house: Path, **extra: str) -> dict[str, str]:
    """pip (and tools that run pip: build, pre-commit) with no index, only `house`."""
    return clean_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(house),
                     PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)


def build_dists(house: Path, out: Path) -> tuple[Path, Path]:
    """The wheel and the sdist, built by `python -m build` in its isolated environment, offline:
    the build backend comes from `house`. The sources are copied first, so the checkout's own
    build/ and *.egg-info are never touched."""
    src = copy_sources(out / "src")
    dist = out / "dist"
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
        capture_output=True, text=True, timeout=600, env=offline_pip_env(house))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    wheels = sorted(dist.glob("memlens-*.whl"))
    sdists = sorted(dist.glob("memlens-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in dist.iterdir())
    return wheels[0], sdists[0]


def copy_sources(to: Path) -> Path:
    """The files of this checkout a fresh clone has (no caches, builds or installs)."""
    shutil.copytree(ROOT, to, ignore=shutil.ignore_patterns(
        ".git", ".venv", "node_modules", "build", "dist", "bundled", "*.vsix", "__pycache__",
        "*.egg-info", "artifacts", "tests", "bench", ".home"))
    return to


def make_venv(folder: Path) -> Path:
    """A clean virtual environment (no system site-packages, pip seeded from ensurepip)."""
    venv.EnvBuilder(with_pip=True, clear=True).create(folder)
    return folder / "bin" / "python"


def copy_demo(to: Path) -> Path:
    """A copy of the demo workspace, with its HOME, as a fresh clone would have it."""
    shutil.copytree(DEMO, to, symlinks=True)
    return to
