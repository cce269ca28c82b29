"""The wheel and sdist a stranger installs (`pipx install memlens`, `pip install memlens`):
complete metadata, built by the project's backend, and a wheel that installs into a clean
virtual environment offline and runs `memlens check` on a copy of the demo in a clean HOME."""

from __future__ import annotations

import email.parser
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from .dist_support import (
    build_dists,
    clean_env,
    copy_demo,
    make_venv,
    offline_pip_env,
    wheelhouse,
)

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def house() -> Path:
    return wheelhouse()


@pytest.fixture(scope="module")
def dists(house: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_dists(house, tmp_path_factory.mktemp("dists"))


def _wheel_file(wheel: Path, suffix: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.endswith(suffix)]
        assert len(names) == 1, names
        return archive.read(names[0]).decode()


def test_the_wheel_carries_complete_metadata(dists: tuple[Path, Path]) -> None:
    wheel, _ = dists
    meta = email.parser.Parser().parsestr(_wheel_file(wheel, ".dist-info/METADATA"))
    assert meta["Name"] == "memlens"
    assert meta["Version"] == "0.1.0"
    assert "Memory Lens" in meta["Summary"]
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["License-Expression"] == "MIT"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert "# Memory Lens" in (meta.get_payload() or "")  # the README is the long description
    urls = {u.split(",")[0].strip() for u in meta.get_all("Project-URL") or []}
    assert {"Homepage", "Repository", "Issues", "Changelog", "Documentation"} <= urls
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert any(c.startswith("Development Status") for c in classifiers)
    requires = meta.get_all("Requires-Dist") or []
    assert any(r.startswith("pygls") for r in requires)
    assert not any("extra ==" not in r and r.startswith("pytest") for r in requires)
    entry_points = _wheel_file(wheel, ".dist-info/entry_points.txt")
    assert "memlens = memlens.cli:main" in entry_points
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "memlens/data/verified-agents.json" in names  # package data the engine reads
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith(("tests/", "extension/", "bundled/")) for n in names)


def test_the_sdist_rebuilds_from_what_it_holds(dists: tuple[Path, Path]) -> None:
    _, sdist = dists
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "LICENSE", "server/memlens/cli/main.py",
            "server/memlens/data/verified-agents.json"} <= names
    assert not any(n.startswith(("node_modules/", ".venv/", "bundled/")) for n in names)


def test_the_wheel_installs_offline_into_a_clean_venv_and_checks_the_demo(
        dists: tuple[Path, Path], house: Path, tmp_path: Path) -> None:
    wheel, _ = dists
    python = make_venv(tmp_path / "venv")
    install = subprocess.run(
        [str(python), "-m", "pip", "install", str(wheel)],
        capture_output=True, text=True, timeout=600, env=offline_pip_env(house))
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    memlens = tmp_path / "venv" / "bin" / "memlens"
    assert memlens.is_file()
    demo = copy_demo(tmp_path / "demo")
    home = tmp_path / "home"  # a clean HOME: nobody's trustedFolders.json, no global memory
    home.mkdir()
    env = clean_env(HOME=str(home))
    env["PATH"] = f"{python.parent}:/usr/bin:/bin"
    version = subprocess.run([str(memlens), "--version"], capture_output=True, text=True,
                             env=env, timeout=60)
    assert version.returncode == 0 and "0.1.0" in version.stdout + version.stderr
    check = subprocess.run(
        [str(memlens), "check", ".", "--trusted", "--format", "json"], cwd=demo,
        capture_output=True, text=True, env=env, timeout=120)
    assert check.returncode == 1, check.stderr  # the demo has errors: the exit code says so
    found = json.loads(check.stdout)
    codes = {(d["code"], Path(d["path"]).name) for d in _diagnostics(found)}
    assert ("import-not-found", "GEMINI.md") in codes
    assert ("hidden-text", "onboarding.md") in codes
    # the installed package, not this checkout, answered
    where = subprocess.run([str(python), "-c", "import memlens; print(memlens.__file__)"],
                           capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert str(tmp_path / "venv") in where.stdout


def _check_demo(command: list[str], tmp_path: Path, env: dict[str, str]) -> None:
    """`command` (a memlens) checks a copy of the demo: exit 1 and the demo's two errors."""
    demo = copy_demo(tmp_path / "demo")
    check = subprocess.run([*command, "check", ".", "--trusted", "--format", "json"], cwd=demo,
                           capture_output=True, text=True, env=env, timeout=300)
    assert check.returncode == 1, check.stdout[-2000:] + check.stderr[-2000:]
    codes = {(d["code"], Path(d["path"]).name) for d in _diagnostics(json.loads(check.stdout))}
    assert {("import-not-found", "GEMINI.md"), ("hidden-text", "onboarding.md")} <= codes


def test_pipx_installs_the_wheel_offline(dists: tuple[Path, Path], house: Path,
                                         tmp_path: Path) -> None:
    wheel, _ = dists
    pipx = Path(sys.executable).parent / "pipx"
    home = tmp_path / "home"
    home.mkdir()
    env = offline_pip_env(house, HOME=str(home), PIPX_HOME=str(tmp_path / "pipx"),
                          PIPX_BIN_DIR=str(tmp_path / "bin"), PIPX_MAN_DIR=str(tmp_path / "man"),
                          PATH="/usr/local/bin:/usr/bin:/bin")
    install = subprocess.run([str(pipx), "install", str(wheel)], capture_output=True,
                             text=True, env=env, timeout=600)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    _check_demo([str(tmp_path / "bin" / "memlens")], tmp_path, clean_env(HOME=str(home)))


def test_uvx_runs_the_wheel_offline(dists: tuple[Path, Path], house: Path,
                                    tmp_path: Path) -> None:
    wheel, _ = dists
    uvx = Path(sys.executable).parent / "uvx"
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(HOME=str(home), UV_CACHE_DIR=str(tmp_path / "uv-cache"),
                    UV_TOOL_DIR=str(tmp_path / "uv-tools"), PATH="/usr/local/bin:/usr/bin:/bin")
    _check_demo([str(uvx), "--offline", "--no-index", "--find-links", str(house),
                 "--from", str(wheel), "memlens"], tmp_path, env)


def _diagnostics(report: object) -> list[dict[str, str]]:
    """The diagnostics of `memlens check --format json` (a list, or an object holding one)."""
    if isinstance(report, dict):
        for key in ("diagnostics", "results", "problems"):
            if isinstance(report.get(key), list):
                return list(report[key])
    assert isinstance(report, list), report
    return list(report)
