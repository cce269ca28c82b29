"""The extension's manifest is ready for the Visual Studio Marketplace and Open VSX: an icon
(PNG, 128x128), a gallery banner, valid categories, repository, license, a changelog that goes
into the package; and the built .vsix (npm run package; scripts/test.sh builds it before
pytest) carries them."""

from __future__ import annotations

import json
import secrets
import string
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = json.loads((ROOT / "package.json").read_text())
# The categories the Marketplace accepts (vsce rejects others)
CATEGORIES = {"AI", "Azure", "Chat", "Data Science", "Debuggers", "Education",
              "Extension Packs", "Formatters", "Keymaps", "Language Packs", "Linters",
              "Machine Learning", "Notebooks", "Other", "Programming Languages",
              "SCM Providers", "Snippets", "Testing", "Themes", "Visualization"}


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_manifest_has_what_a_listing_shows() -> None:
    icon = ROOT / MANIFEST["icon"]
    assert icon.suffix == ".png"  # the Marketplace refuses an SVG icon
    assert _png_size(icon.read_bytes()) == (128, 128)
    assert MANIFEST["galleryBanner"]["theme"] in {"dark", "light"}
    assert MANIFEST["galleryBanner"]["color"].startswith("#")
    assert set(MANIFEST["categories"]) <= CATEGORIES
    assert MANIFEST["repository"]["url"] and MANIFEST["license"] == "MIT"
    assert MANIFEST["bugs"]["url"] and MANIFEST["homepage"]
    assert MANIFEST["publisher"] and MANIFEST["displayName"] and MANIFEST["description"]
    assert 0 < len(MANIFEST["keywords"]) <= 30
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{MANIFEST['version']}]" in changelog


def test_the_packaging_keeps_the_changelog_and_the_icon() -> None:
    ignore = (ROOT / ".vscodeignore").read_text().splitlines()
    assert "!CHANGELOG.md" in ignore and "!media/**" in ignore
    assert "CHANGELOG.md" in (ROOT / "scripts" / "package-vsix.sh").read_text()


def test_the_built_vsix_carries_them() -> None:
    vsix = ROOT / f"memlens-{MANIFEST['version']}.vsix"
    if not vsix.is_file():
        pytest.skip(f"{vsix.name} is not built: npm run package (scripts/test.sh builds it)")
    if vsix.stat().st_mtime < (ROOT / "package.json").stat().st_mtime:
        pytest.skip(f"{vsix.name} is older than package.json: npm run package rebuilds it")
    with zipfile.ZipFile(vsix) as archive:
        names = {name.lower() for name in archive.namelist()}  # vsce lower-cases changelog.md
        assert {"extension/changelog.md", "extension/media/icon.png",
                "extension/package.json"} <= names
        xml = archive.read("extension.vsixmanifest").decode()
    assert "extension/media/icon.png" in xml  # <Icon> of the listing
    assert 'Microsoft.VisualStudio.Services.Branding.Color" Value="#1e3a8a"' in xml
    assert "Microsoft.VisualStudio.Services.Content.Changelog" in xml


def _scan(folder: Path) -> subprocess.CompletedProcess[str]:
    if not (ROOT / "node_modules" / "@vscode" / "vsce").is_dir():
        pytest.skip("node_modules is not installed: bash scripts/node-setup.sh")
    return subprocess.run(["node", str(ROOT / "scripts" / "vsix-secret-scan.mjs"), str(folder)],
                          capture_output=True, text=True, timeout=300)


def test_the_secret_scan_finds_what_vsce_would_refuse(tmp_path: Path) -> None:
    # package-vsix.sh turns vsce's own scan off and runs this one, in batches: it must refuse
    # what vsce refuses (a token, a .env file), wherever it sits among many clean files
    for index in range(600):  # more than two batches
        (tmp_path / f"module_{index}.py").write_text(f"VALUE = {index}\n")
    clean = _scan(tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert "601 files" not in clean.stdout and "600 files, no secrets" in clean.stdout
    token = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits)
                             for _ in range(36))
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "config.js").write_text(f'const token = "{token}";\n')
    (tmp_path / ".env").write_text("API_KEY=1\n")
    found = _scan(tmp_path)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "[github]" in found.stderr and "deep/er/config.js" in found.stderr
    assert "[no-dotenv]" in found.stderr
