"""Starts the Memory Lens server bundled in the VS Code extension.

    <python> <extension>/server/launch.py serve

The extension runs this file with the interpreter the user chose. Its folder (server/, which
holds the memlens package) is first on sys.path; this puts the bundled dependencies
(<extension>/bundled/libs, filled by scripts/bundle_python.py) second, ahead of the
interpreter's own site-packages, so nothing needs installing. When the interpreter cannot load
the bundle (another CPython version or platform than it was built for, an old glibc), it prints
one line starting with "memlens-cannot-start:" that says what to do, and exits with status 3.
Nothing is written here: the extension points PYTHONPYCACHEPREFIX at its own storage. When the
package ships byte-code for this interpreter (scripts/package-vsix.sh compiles the bundle and the
server with every bundled CPython it finds, recorded as "precompiled" in the manifest), that
prefix is dropped so the shipped byte-code is used from the first start: a first start otherwise
compiles some 300 modules, a second or more on a busy machine.
"""

from __future__ import annotations  # this file must run (to say what is wrong) on Python 3.7+

import json
import os
import platform
import sys
import time

# When the interpreter got here (wall clock, ms): the server reports it in memlens/ready, so
# the extension can tell interpreter start-up from imports and indexing.
os.environ["MEMLENS_LAUNCHED_AT"] = str(round(time.time() * 1000))

CANNOT_START = 3
HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(os.path.dirname(HERE), "bundled", "libs")


def fail(reason: str, versions: list[str] | None = None) -> None:
    span = f"{versions[0]}–{versions[-1]}" if versions else "3.11 or newer"
    example = f"python{versions[0]}" if versions else "python3.11"
    sys.stderr.write(
        f"memlens-cannot-start: {reason} Set the setting memlens.python to the path of a "
        f"CPython {span} interpreter (for example /usr/bin/{example}) and restart the server.\n")
    sys.stderr.flush()
    sys.exit(CANNOT_START)


def platform_matches(target: str) -> bool:
    system, _, arch = target.partition("-")
    machine = platform.machine().lower()
    arch_ok = {"x64": ("x86_64", "amd64"), "arm64": ("aarch64", "arm64")}.get(arch, (arch,))
    system_ok = {"linux": "linux", "alpine": "linux", "darwin": "darwin", "win32": "win32"}
    return sys.platform == system_ok.get(system, system) and machine in arch_ok


def use_shipped_bytecode() -> None:
    """Read byte-code from the __pycache__ folders shipped beside the sources (compiled with
    unchecked hashes: an installed extension never changes) and from the interpreter's own
    standard library; write none (the extension folder may be read-only)."""
    sys.pycache_prefix = None
    sys.dont_write_bytecode = True


def main() -> None:
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    where = f"{sys.executable} is {platform.python_implementation()} {platform.python_version()}"
    manifest_file = os.path.join(LIBS, "memlens-bundle.json")
    manifest = None
    if os.path.isfile(manifest_file):
        with open(manifest_file, encoding="utf-8") as f:
            manifest = json.load(f)
    versions: list[str] = list(manifest.get("pythons", [])) if manifest else []
    if sys.version_info < (3, 11):  # noqa: UP036 (run by any python3)
        fail(f"Memory Lens's server needs Python 3.11 or newer; {where}.", versions or None)
    if manifest:
        target = str(manifest.get("target", ""))
        if platform.python_implementation() != "CPython" or version not in versions:
            fail(f"this build of Memory Lens bundles its server's libraries for CPython "
                 f"{', '.join(versions)} on {target}; {where}.", versions)
        if not platform_matches(target):
            fail(f"this build of Memory Lens is for {target}, but this machine is "
                 f"{sys.platform} {platform.machine()}: install the extension built for it.",
                 versions)
        sys.path.insert(1, LIBS)
        if sys.implementation.cache_tag in manifest.get("precompiled", []):
            use_shipped_bytecode()
        try:  # the compiled dependencies the server needs at once
            import pydantic_core  # noqa: F401
            import re2  # noqa: F401
        except ImportError as error:
            fail(f"{sys.executable} cannot load the bundled libraries ({error}).", versions)
    # else: a source checkout without a bundle: the interpreter's own packages are used.
    from memlens.cli import main as memlens_main

    sys.argv[0] = "memlens"
    sys.exit(memlens_main())


if __name__ == "__main__":
    main()
