"""server/launch.py, the extension's entry to the bundled server: it runs the server with the
bundled libraries first on the path, and says exactly what to do when it cannot."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parent.parent / "server" / "launch.py"
VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
TARGET = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def _tree(tmp_path: Path, manifest: dict[str, object] | None) -> Path:
    """An extension folder: server/launch.py (+ the memlens sources) and bundled/libs."""
    ext = tmp_path / "ext"
    shutil.copytree(LAUNCHER.parent / "memlens", ext / "server" / "memlens",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(LAUNCHER, ext / "server" / "launch.py")
    if manifest is not None:
        (ext / "bundled" / "libs").mkdir(parents=True)
        (ext / "bundled" / "libs" / "memlens-bundle.json").write_text(json.dumps(manifest))
    return ext


def _run(ext: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ext / "server" / "launch.py"), *args],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"})


def _host_target() -> str:
    import platform

    return f"{sys.platform}-{TARGET.get(platform.machine().lower(), platform.machine())}"


def test_another_python_version_is_told_what_to_set(tmp_path: Path) -> None:
    ext = _tree(tmp_path, {"target": _host_target(), "pythons": ["3.9", "3.10"]})
    done = _run(ext, "serve")
    assert done.returncode == 3
    line = done.stderr.strip()
    assert line.startswith("memlens-cannot-start: ")
    assert f"is CPython {sys.version_info[0]}.{sys.version_info[1]}" in line
    assert "Set the setting memlens.python to the path of a CPython 3.9–3.10 interpreter" in line


def test_another_platform_is_told_so(tmp_path: Path) -> None:
    other = "win32-arm64" if sys.platform != "win32" else "linux-x64"
    ext = _tree(tmp_path, {"target": other, "pythons": [VERSION]})
    done = _run(ext, "serve")
    assert done.returncode == 3
    assert f"this build of Memory Lens is for {other}" in done.stderr


@pytest.mark.skipif(sys.platform not in ("linux", "darwin", "win32"), reason="host target")
def test_a_matching_bundle_starts_the_cli(tmp_path: Path) -> None:
    ext = _tree(tmp_path, {"target": _host_target(), "pythons": [VERSION]})
    libs = ext / "bundled" / "libs"
    # The launcher checks that pydantic_core and re2 load from the bundle: stand-ins here.
    (libs / "pydantic_core").mkdir()
    (libs / "pydantic_core" / "__init__.py").write_text("")
    (libs / "re2.py").write_text("")
    done = _run(ext, "--version")
    assert done.returncode == 0, done.stderr
    assert "memlens" in done.stdout


def test_without_a_bundle_it_uses_the_interpreters_packages(tmp_path: Path) -> None:
    done = _run(_tree(tmp_path, None), "--version")
    assert done.returncode == 0, done.stderr


def _bundle_with_stand_ins(tmp_path: Path, precompiled: list[str]) -> Path:
    """A matching bundle whose stand-in `re2` source fails to import while its shipped
    byte-code (compiled from a module that loads) is fine: which one runs tells whether the
    shipped byte-code was used."""
    import compileall

    ext = _tree(tmp_path, {"target": _host_target(), "pythons": [VERSION],
                           "precompiled": precompiled})
    libs = ext / "bundled" / "libs"
    (libs / "pydantic_core").mkdir()
    (libs / "pydantic_core" / "__init__.py").write_text("")
    (libs / "re2.py").write_text("")
    compileall.compile_dir(str(libs), quiet=1,
                           invalidation_mode=compileall.py_compile.PycInvalidationMode.UNCHECKED_HASH)
    (libs / "re2.py").write_text("raise ImportError('the source was compiled at start-up')\n")
    return ext


def _run_with_prefix(ext: Path, prefix: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ext / "server" / "launch.py"), "--version"],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(prefix)})


@pytest.mark.skipif(sys.platform not in ("linux", "darwin", "win32"), reason="host target")
def test_shipped_bytecode_is_used_and_nothing_is_written(tmp_path: Path) -> None:
    ext = _bundle_with_stand_ins(tmp_path, [sys.implementation.cache_tag])
    before = sorted(p.relative_to(ext) for p in ext.rglob("*"))
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    done = _run_with_prefix(ext, prefix)
    assert done.returncode == 0, done.stderr
    assert "memlens" in done.stdout
    assert sorted(p.relative_to(ext) for p in ext.rglob("*")) == before
    # Only what the interpreter imported before the launcher ran may be cached in the prefix
    # (its mirror of the extension folder stays empty).
    assert list(prefix.rglob(f"{str(ext).lstrip('/')}/**/*.pyc")) == []


@pytest.mark.skipif(sys.platform not in ("linux", "darwin", "win32"), reason="host target")
def test_without_bytecode_for_this_python_the_prefix_is_kept(tmp_path: Path) -> None:
    ext = _bundle_with_stand_ins(tmp_path, ["cpython-29"])
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    done = _run_with_prefix(ext, prefix)
    # The source runs (and fails, as this stand-in does), and byte-code goes to the prefix.
    assert done.returncode == 3
    assert "the source was compiled at start-up" in done.stderr
    assert list(prefix.rglob(f"{str(ext).lstrip('/')}/**/*.pyc")) != []
