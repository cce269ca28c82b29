"""Fills bundled/libs with every Python dependency of the memlens server, as wheels for one
VS Code platform target, so the packaged extension runs offline with no pip at run time.

    python3 scripts/bundle_python.py [--target linux-x64] [--pythons 3.11,3.12,3.13,3.14]

Compiled dependencies (pydantic-core, google-re2, PyYAML, cffi, ...) ship one extension module
per CPython version; their file names carry the ABI tag (`_pydantic_core.cpython-311-...so`),
so the wheels of every supported version are unpacked into the same folder side by side and
each interpreter loads its own. Pure-Python files are identical across versions. abi3 wheels
(cryptography, watchfiles) serve every version from one file.

The result is cached in $XDG_CACHE_HOME/memlens/bundle-<target>-<key> (key: the dependency
list in pyproject.toml, the versions, this script), so CI and repeated packaging reuse it; pip
needs the network only to fill the cache. bundled/libs/memlens-bundle.json records the target
and the Python versions, which server/launch.py checks before it starts the server.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PYTHONS = ["3.11", "3.12", "3.13", "3.14"]

MACOS = ("10_9", "10_12", "10_13", "10_15", "11_0", "12_0", "13_0", "14_0")
# pip --platform tags per VS Code target (vsce package --target ...). pip accepts a wheel
# tagged with any of them.
PLATFORMS: dict[str, list[str]] = {
    "linux-x64": ["manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_27_x86_64",
                  "manylinux_2_28_x86_64", "manylinux1_x86_64", "manylinux_2_5_x86_64"],
    "linux-arm64": ["manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_27_aarch64",
                    "manylinux_2_28_aarch64"],
    "alpine-x64": ["musllinux_1_1_x86_64", "musllinux_1_2_x86_64"],
    "alpine-arm64": ["musllinux_1_1_aarch64", "musllinux_1_2_aarch64"],
    # google-re2 has x86_64 wheels for macOS 13+ only: that bundle needs macOS 13.
    "darwin-x64": [f"macosx_{v}_x86_64" for v in MACOS]
    + [f"macosx_{v}_universal2" for v in MACOS],
    "darwin-arm64": [f"macosx_{v}_arm64" for v in MACOS if v >= "11"]
    + [f"macosx_{v}_universal2" for v in MACOS],
    "win32-x64": ["win_amd64"],
    "win32-arm64": ["win_arm64"],
}


def host_target() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform, sys.platform)
    return f"{system}-{arch}"


def dependencies() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def say(message: str) -> None:
    print(f"bundle-python: {message}", flush=True)


def cache_key(target: str, pythons: list[str], deps: list[str]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([target, pythons, deps]).encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]


def build(target: str, pythons: list[str], deps: list[str], out: Path, python: str) -> None:
    staging = Path(tempfile.mkdtemp(prefix="memlens-bundle-"))
    try:
        merged = staging / "libs"
        merged.mkdir()
        for i, version in enumerate(pythons, 1):
            t0 = time.monotonic()
            say(f"[{i}/{len(pythons)}] wheels for CPython {version} on {target} ...")
            one = staging / version
            command = [python, "-m", "pip", "install", "--disable-pip-version-check",
                       "--no-input", "-qq", "--no-compile", "--only-binary=:all:",
                       "--target", str(one), "--implementation", "cp",
                       "--python-version", version]
            for tag in PLATFORMS[target]:
                command += ["--platform", tag]
            subprocess.run(command + deps, check=True)
            # Side by side: pure files are the same for every version; compiled modules
            # differ by name. A file already there (same path) is kept.
            for src in one.rglob("*"):
                dst = merged / src.relative_to(one)
                if src.is_dir():
                    dst.mkdir(exist_ok=True)
                elif not dst.exists():
                    shutil.copy2(src, dst)
            say(f"[{i}/{len(pythons)}] CPython {version} done in {time.monotonic() - t0:.1f} s")
        for junk in list(merged.rglob("__pycache__")):
            shutil.rmtree(junk, ignore_errors=True)
        shutil.rmtree(merged / "bin", ignore_errors=True)  # console scripts: not used
        # PyYAML's optional libyaml binding (2.6 MB per version): memlens only calls
        # yaml.safe_load, which is the pure-Python loader.
        for accel in merged.glob("yaml/_yaml.*"):
            accel.unlink()
        # google-genai ships its own test suite (2+ MB, with fake tokens vsce flags as secrets).
        shutil.rmtree(merged / "google" / "genai" / "tests", ignore_errors=True)
        manifest = {"target": target, "pythons": pythons, "dependencies": deps}
        (merged / "memlens-bundle.json").write_text(json.dumps(manifest, indent=2) + "\n")
        tmp = out.with_name(out.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.move(str(merged), tmp)
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=host_target(), choices=sorted(PLATFORMS))
    parser.add_argument("--pythons", default=",".join(DEFAULT_PYTHONS),
                        help="CPython versions to bundle (comma-separated)")
    parser.add_argument("--out", default=str(ROOT / "bundled" / "libs"))
    parser.add_argument("--python", default=sys.executable, help="the Python that runs pip")
    args = parser.parse_args()
    pythons = [v.strip() for v in args.pythons.split(",") if v.strip()]
    deps = dependencies()
    cache_root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memlens"
    cached = cache_root / f"bundle-{args.target}-{cache_key(args.target, pythons, deps)}"
    t0 = time.monotonic()
    if (cached / "memlens-bundle.json").is_file():
        say(f"reusing {cached}")
    else:
        say(f"downloading the server's dependencies for {args.target}, CPython "
            f"{', '.join(pythons)} into {cached}")
        cache_root.mkdir(parents=True, exist_ok=True)
        build(args.target, pythons, deps, cached, args.python)
        for stale in cache_root.glob(f"bundle-{args.target}-*"):  # earlier keys: not needed
            if stale != cached:
                shutil.rmtree(stale, ignore_errors=True)
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(cached, out)
    say(f"{out}: {size_of(out) / 1e6:.1f} MB for {args.target}, CPython {', '.join(pythons)} "
        f"({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
