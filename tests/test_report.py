"""`memlens report`: the agent matrix (every memory file × every agent) and each agent's
context map, as JSON, one self-contained HTML page and a Markdown job summary. The cells are
compared with what each agent's profile predicts through the CLI's own `show --agent A --json`
(a separate process), not with the matrix's own code."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "examples" / "demo"


def _memlens(*args: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "server"), "GEMINI_CLI_HOME": str(home),
           "HOME": str(home)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("MEMLENS_AGENTS", None)
    return subprocess.run([sys.executable, "-m", "memlens", *args], env=env, text=True,
                          capture_output=True, check=False, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("report") / "demo"
    shutil.copytree(DEMO, copy, symlinks=True)
    return copy


def _report(folder: Path, home: Path, *more: str) -> dict[str, Any]:
    done = _memlens("report", str(folder), "--trusted", *more, home=home)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_every_cell_is_what_that_agents_profile_predicts(demo: Path) -> None:
    home = demo / ".home"
    result = _report(demo, home)
    agents = [a["id"] for a in result["agents"]]
    # The agents every other command shows here (agents_here.agents_shown): each whose own
    # files the demo holds. Codex only reads the AGENTS.md the convention's column covers, so
    # it has no column unless it is in use.
    assert agents == ["gemini", "claude", "agents", "copilot", "vscode-chat", "cursor",
                      "antigravity"]
    for agent in agents:
        done = _memlens("show", str(demo), "--trusted", "--agent", agent, "--json", home=home)
        shown = json.loads(done.stdout)
        want = {f["path"]: f["when"] for f in shown["files"]}
        got = {row["path"]: row["cells"][agent]["state"] for row in result["rows"]
               if row["cells"][agent]["state"] in ("startup", "on-read", "on-demand")}
        if agent == "gemini":
            # Gemini CLI inlines its imports into GEMINI.md: the matrix lists them as rows of
            # their own, loaded at start-up with the file that imports them.
            imported = {p for p, s in got.items() if s == "startup" and p not in want}
            assert {Path(p).name for p in imported} == {"architecture.md", "onboarding.md",
                                                        "style.md"}
            got = {p: s for p, s in got.items() if p not in imported}
        assert got == want, agent
    # The JSON is what `memlens schema MatrixResult` says it is.
    import jsonschema

    schema = json.loads(_memlens("schema", "MatrixResult", home=home).stdout)["MatrixResult"]
    jsonschema.validate(result, schema)
    # The demo's import-not-found and its hidden text are in the report.
    assert [d["code"] for d in result["diagnostics"]] == ["import-not-found"]
    assert sorted(d["code"] for d in result["hidden"]) == ["hidden-comment", "hidden-text"]
    # Each map adds up what the agent loads at start.
    for entry in result["agents"]:
        assert len(entry["map"]["segments"]) == sum(
            row["cells"][entry["id"]]["state"] == "startup"
            and "imported" not in row["cells"][entry["id"]]["why"] for row in result["rows"])


def test_untrusted_claude_rules_codex_chain_and_a_cut(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (home / ".codex").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("claude rules\n")
    rules = repo / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "py.md").write_text("---\npaths:\n  - \"src/**/*.py\"\n---\npython rule\n")
    (repo / "AGENTS.md").write_text("root agents\n" + "x" * 40_000 + "\n")
    (repo / "src").mkdir()
    (repo / "src" / "AGENTS.md").write_text("src agents\n")
    (repo / "GEMINI.md").write_text("gemini\n")
    done = _memlens("report", str(repo), home=home)
    result = json.loads(done.stdout)
    rows = {r["relative"]: r["cells"] for r in result["rows"]}
    assert rows["GEMINI.md"]["gemini"]["state"] == "not-read"
    assert "not trusted" in rows["GEMINI.md"]["gemini"]["why"]
    assert rows[".claude/rules/py.md"]["claude"]["state"] == "on-read"
    # No src/**/*.py file is here yet: it loads on read, once one is.
    assert rows[".claude/rules/py.md"]["claude"]["why"] == "on read, but no file matches today"
    assert "src/**/*.py" in rows[".claude/rules/py.md"]["claude"]["trigger"]
    # Codex is not in use here and has no files of its own: its column when asked for.
    assert "codex" not in [a["id"] for a in result["agents"]]
    result = json.loads(_memlens("report", str(repo), "--agent", "codex", home=home).stdout)
    rows = {r["relative"]: r["cells"] for r in result["rows"]}
    assert rows["AGENTS.md"]["codex"]["state"] == "startup"
    assert rows["AGENTS.md"]["codex"]["cut"] is not None  # over Codex's 32 KiB budget
    codex = next(a for a in result["agents"] if a["id"] == "codex")
    assert codex["map"]["cuts"] and "AGENTS.md" in codex["map"]["cuts"][0]


def test_the_html_report_opens_offline_and_shows_every_file_and_agent(demo: Path,
                                                                      tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on PATH")
    page = tmp_path / "report.html"
    result = _report(demo, demo / ".home", "--html", str(page), "--json")
    html = page.read_text(encoding="utf-8")
    # Nothing to fetch: no external URL in any src, href or url().
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//|url\(""", html)
    assert "default-src 'none'" in html
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    for row in result["rows"]:
        assert f"<code>{row['relative']}</code>" in dom
    for agent in result["agents"]:
        assert f"<th scope=\"col\">{agent['label']}<br>" in dom


def test_the_markdown_summary_is_a_table_per_row(demo: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    result = _report(demo, demo / ".home", "--markdown", str(summary), "--json")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### What each agent reads in ")  # appended
    table = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(table) == len(result["rows"])
    assert all(line.count(" | ") == len(result["agents"]) for line in table)


def test_a_long_reason_many_cells_give_is_said_once_as_a_note(tmp_path: Path) -> None:
    # workers-sdk: a root CLAUDE.md and nested AGENTS.md files Claude Code never reads, each
    # cell with the same three-line reason.
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    (repo / "CLAUDE.md").write_text("claude rules\n")
    for name in ("a", "b", "c"):
        (repo / "packages" / name).mkdir(parents=True)
        (repo / "packages" / name / "AGENTS.md").write_text(f"{name} rules\n")
    page = tmp_path / "report.html"
    result = json.loads(_memlens("report", str(repo), "--agent", "claude", "--html", str(page),
                                 "--json", home=home).stdout)
    reasons = [r["cells"]["claude"]["why"] for r in result["rows"]
               if r["relative"].startswith("packages/")]
    assert len(reasons) == 3 and len(set(reasons)) == 1 and len(reasons[0]) > 60
    html = page.read_text(encoding="utf-8")
    assert html.count('<a href="#note-1">see note 1</a>') == 3
    assert '<li id="note-1">' in html
    escaped = reasons[0].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    table = html.split('id="matrix"')[1].split('id="notes"')[0]
    assert table.count(escaped) == 3  # only in each cell's tooltip
    assert f'<div class="why">{escaped}</div>' not in table
    notes = html.split('id="notes"')[1].split("</ol>")[0]
    assert notes.count(escaped) == 1
    # A short reason stays in its cell: "project memory" is no note.
    assert '<div class="why">project memory</div>' in table


def test_a_reason_that_differs_only_after_its_general_part_shares_that_part(
        tmp_path: Path) -> None:
    # The AGENTS.md convention's nested files: the same rule, then "started in packages/a/ it
    # reads this one" per file.
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    for name in ("a", "b"):
        (repo / "packages" / name).mkdir(parents=True)
        (repo / "packages" / name / "AGENTS.md").write_text(f"{name} rules\n")
    page = tmp_path / "report.html"
    result = json.loads(_memlens("report", str(repo), "--agent", "agents", "--html", str(page),
                                 "--json", home=home).stdout)
    reasons = {r["relative"]: r["cells"]["agents"]["why"] for r in result["rows"]}
    general, _, rest = reasons["packages/a/AGENTS.md"].partition("; ")
    assert rest == "started in packages/a/ it reads this one"
    assert reasons["packages/b/AGENTS.md"] == f"{general}; started in packages/b/ it reads this one"
    html = page.read_text(encoding="utf-8")
    for name in ("a", "b"):
        assert (f'<a href="#note-1">see note 1</a>; started in packages/{name}/ it reads this one'
                in html)
    assert f'<li id="note-1">{general}</li>' in html
