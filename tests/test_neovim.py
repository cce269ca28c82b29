"""A real Neovim, headless, with the setup docs/editors.md gives: it starts `memlens serve`
over stdio on a copy of the demo, opens GEMINI.md, and gets the server's diagnostics and
hovers (tests/editors/nvim_init.lua writes what Neovim received to a file read here).

Neovim comes from Debian's package `neovim` (scripts/editors/install-neovim.sh; 0.7 on
Debian 12, so the init file uses vim.lsp.start where it exists, else vim.lsp.start_client)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .dist_support import ROOT, clean_env, copy_demo

INIT = Path(__file__).resolve().parent / "editors" / "nvim_init.lua"
MEMLENS = ROOT / ".venv" / "bin" / "memlens"


def test_neovim_shows_the_servers_diagnostics_and_hovers(tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed: bash scripts/editors/install-neovim.sh "
                    "(Debian's package neovim) installs it")
    demo = copy_demo(tmp_path / "demo")
    out = tmp_path / "nvim-report.json"
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                    XDG_DATA_HOME=str(home / ".local/share"),
                    XDG_STATE_HOME=str(home / ".local/state"),
                    MEMLENS_NVIM_ROOT=str(demo), MEMLENS_NVIM_OUT=str(out),
                    MEMLENS_NVIM_CMD=json.dumps([str(MEMLENS), "serve"]))
    result = subprocess.run([nvim, "--headless", "--clean", "-u", str(INIT)], env=env,
                            capture_output=True, text=True, timeout=150, cwd=demo)
    assert out.is_file(), f"Neovim wrote no report: {result.returncode} {result.stderr[-2000:]}"
    report = json.loads(out.read_text())
    assert "error" not in report, report
    assert report["client"] and report["waited_for_diagnostics"], report
    by_code = {d["code"]: d for d in report["diagnostics"]}
    missing = by_code["import-not-found"]
    assert (missing["lnum"], missing["col"]) == (9, 25)  # line 10, column 26, 0-based
    assert missing["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert "./docs/deploy.md" in missing["message"]
    # hover on `@./docs/style.md`: the imported text as Gemini CLI includes it
    style = (demo / "docs" / "style.md").read_text().strip().splitlines()[0]
    assert style in report["hover_import"], report["hover_import"]
    # hover on line 1: the merged context of the folder
    assert "GEMINI.md" in report["hover_first_line"], report["hover_first_line"]
