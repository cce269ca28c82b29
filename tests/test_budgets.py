"""Budgets (issue 14): the figures and each agent's token estimate, computed by hand from the
rule its source gives (docs/reference.md "Budgets"); the cut diagnostics naming what is lost;
the CLI's tokens column and --count-exact against the local fake Gemini server (never the
network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlens.agent.config import ChatSettings
from memlens.agent.count_tokens import CountFailed, count_exact
from memlens.agents.claude.startup import ClaudeLoader
from memlens.agents.codex.load import load_codex
from memlens.files.fsread import FileReader
from memlens.protocol.memory import ListResult
from memlens.reports.budgets import (
    OVER_BUDGET,
    context_budget,
    estimate_tokens,
    measure,
    over_budget,
    summary,
    table,
)

from .conftest import build_tree
from .fake_gemini import FakeGemini
from .test_cli import memlens

KEY = "budget-key-0123456789"


# --- the estimators, by hand ------------------------------------------------------------------

def test_gemini_cli_quarter_token_per_ascii_unit_and_one_and_a_half_per_other_unit() -> None:
    # tokenCalculation.ts: <= 127 → 1/4, else 1.5 per UTF-16 unit; floored at the end.
    assert estimate_tokens("gemini", "") == 0
    assert estimate_tokens("gemini", "abc") == 0  # 0.75 floored
    assert estimate_tokens("gemini", "abcd") == 1
    assert estimate_tokens("gemini", "abcdefg") == 1  # 1.75
    assert estimate_tokens("gemini", "é") == 1  # 1.5
    assert estimate_tokens("gemini", "日本語") == 4  # 4.5
    assert estimate_tokens("gemini", "ab😀") == 3  # 0.5 + two surrogates × 1.5 = 3.5
    assert estimate_tokens("gemini", "x" * 100_000) == 25_000
    # Past 100,000 UTF-16 units: units / 4, whatever the characters.
    assert estimate_tokens("gemini", "é" * 100_004) == 25_001


def test_claude_code_rounds_utf16_units_over_four_half_up() -> None:
    assert estimate_tokens("claude", "") == 0
    assert estimate_tokens("claude", "a") == 0  # 0.25
    assert estimate_tokens("claude", "ab") == 1  # 0.5: Math.round goes up (Python's to even)
    assert estimate_tokens("claude", "abcdef") == 2  # 1.5 → 2
    assert estimate_tokens("claude", "abcdefghij") == 3  # 2.5 → 3 (Python's round: 2)
    assert estimate_tokens("claude", "😀😀") == 1  # 4 units


def test_codex_ceils_utf8_bytes_over_four() -> None:
    assert estimate_tokens("codex", "") == 0
    assert estimate_tokens("codex", "a") == 1
    assert estimate_tokens("codex", "abcd") == 1
    assert estimate_tokens("codex", "abcde") == 2
    assert estimate_tokens("codex", "日本") == 2  # 6 bytes
    assert estimate_tokens("codex", "😀") == 1  # 4 bytes


def test_the_convention_is_memory_lens_own_estimate() -> None:
    assert estimate_tokens("agents", "abcde") == 2  # code points / 4, rounded up
    assert context_budget("agents", []).estimator.label == "Memory Lens's estimate"


def test_figures_chars_are_code_points_bytes_utf8() -> None:
    figures = measure("gemini", "a日😀\n")
    assert (figures.chars, figures.bytes) == (4, 1 + 3 + 4 + 1)


def test_folder_total_measures_the_files_together() -> None:
    budget = context_budget("gemini", [("/a", "project", "abc"), ("/b", "project", "abc"),
                                       ("/c", "project", None)])
    assert [f.figures.tokens for f in budget.files] == [0, 0]  # each 0.75 floored
    assert budget.total == measure("gemini", "abcabc")
    assert budget.total.tokens == 1
    assert summary(2, 6, 1) == "2 memory files · 6 chars · ~1 tokens"
    assert summary(1, 1_234, None) == "1 memory file · 1,234 chars"
    rendered = table(budget, {"/a": "a.md"})
    assert "| `a.md` | 3 | 3 | ~0 |" in rendered and "**Folder total**" in rendered
    assert "Gemini CLI's estimate" in rendered and "an estimate" in rendered


def test_over_budget_names_the_figure_and_the_budget() -> None:
    budget = context_budget("claude", [("/p/CLAUDE.md", "project", "x" * 4_000)])
    assert over_budget(budget, 0, "/p/CLAUDE.md", "Claude Code") is None
    assert over_budget(budget, 1_000, "/p/CLAUDE.md", "Claude Code") is None  # not past it
    found = over_budget(budget, 999, "/p/CLAUDE.md", "Claude Code")
    assert found is not None
    assert (found.code, found.line, found.severity) == (OVER_BUDGET, 1, "warning")
    assert "~1,000 tokens for Claude Code" in found.message
    assert "budget of 999 (memlens.budget)" in found.message


# --- the cuts, naming what is lost ------------------------------------------------------------

def test_codex_cut_names_the_bytes_and_files_lost_on_the_line_where_it_falls(
        root: Path) -> None:
    # 32 KiB budget: the root doc takes 30,001 bytes, the next is cut after 2,767 bytes
    # (inside its line 3, inside a two-byte character), the deepest is lost whole.
    line = "y" * 99 + "\n"
    build_tree(root, {
        "home": None, "repo/.git": None,
        "repo/AGENTS.md": "r" * 30_000 + "\n",
        "repo/a/AGENTS.md": line * 2 + "é" * 2_000 + "\n",
        "repo/a/b/AGENTS.md": "deep\n",
    })
    load = load_codex(str(root / "repo/a/b"), str(root / "home"), FileReader())
    cut = load.docs[1]
    assert (cut.sent_bytes, cut.size) == (2_767, 4_201)
    assert load.lost == [str(root / "repo/a/b/AGENTS.md")]
    from memlens.agents.codex.budget import cut_diagnostics

    (diag,) = cut_diagnostics(load, FileReader())
    assert diag.code == "payload-budget-exceeded" and diag.path == str(root / "repo/a/AGENTS.md")
    # 200 bytes of lines 1-2, then 1,283 whole two-byte characters and one byte of the next
    # (sent as U+FFFD): the cut falls on line 3, in the 1,284th character.
    assert cut.text.endswith("é\ufffd")
    assert (diag.line, diag.col) == (3, 1_284)
    assert "1,439 bytes are not sent" in diag.message
    assert "the last 1,434 of this file's 4,201 bytes" in diag.message
    # The file dropped is named (relative to the cut file's folder), not only counted.
    assert diag.message.endswith("1 later file (5 bytes): b/AGENTS.md")
    assert diag.detail == f"cut here; not sent: {root}/repo/a/b/AGENTS.md (5 bytes)"


def test_memory_index_cut_names_what_is_lost(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None})
    from memlens.agents.claude.memory_folder import auto_memory_folder

    index = Path(auto_memory_folder(str(root / "home"), str(root / "repo"), env={}).index or "")
    index.parent.mkdir(parents=True)
    index.write_text("".join(f"- line {n}\n" for n in range(210)))
    load = ClaudeLoader(str(root / "home")).load(str(root / "repo"))
    (diag,) = [d for d in load.diagnostics if d.code == "memory-index-truncated"]
    assert (diag.line, diag.col) == (201, 1)
    # Claude Code's own warning, which replaces lines 201-210, says what is lost.
    assert ("10 of 210 lines were cut off, starting at line 201 (\"- line 200\")"
            in diag.message)


# --- count exactly, against the local fake ----------------------------------------------------

def test_count_exact_uses_the_models_count_tokens(caplog: pytest.LogCaptureFixture) -> None:
    with FakeGemini(expect_key=KEY) as fake:
        result = count_exact("alpha beta\ngamma", ChatSettings(base_url=fake.base_url,
                                                               model="gemini-test"), KEY)
        (request,) = fake.count_requests
    assert (result.tokens, result.model) == (3, "gemini-test")
    assert request.model == "gemini-test" and request.api_key_matches
    assert KEY not in caplog.text


def test_count_exact_failure_never_names_the_key() -> None:
    with FakeGemini(expect_key="another-key") as fake, pytest.raises(CountFailed) as error:
        count_exact("x", ChatSettings(base_url=fake.base_url), KEY)
    assert "400" in str(error.value) and KEY not in str(error.value)


# --- the CLI ----------------------------------------------------------------------------------

@pytest.fixture
def proj(root: Path) -> Path:
    build_tree(root, {
        "home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
        "proj/.git": None,
        "proj/GEMINI.md": "Project rules here\n",  # 19 ASCII chars: 4.75 → 4 tokens
        "proj/sub/GEMINI.md": "日本語\n",  # 3 × 1.5 + 0.25 = 4.75 → 4
    })
    return root


def test_list_text_has_a_tokens_column(proj: Path) -> None:
    run = memlens("list", "proj", "--mode", "classic", cwd=proj, home=proj / "home")
    assert run.code == 0, run.err
    rows = [line.split() for line in run.out.splitlines()]
    assert [row[:3] for row in rows] == [["tier", "chars", "tokens"], ["project", "19", "~4"],
                                         ["project", "4", "~4"]]


def test_list_json_carries_bytes_tokens_and_the_total(proj: Path) -> None:
    run = memlens("list", "proj", "--mode", "classic", "--json", cwd=proj, home=proj / "home")
    data = ListResult.model_validate(run.json())
    assert [(f.chars, f.bytes, f.tokens) for f in data.files] == [(19, 19, 4), (4, 10, 4)]
    # Together: 20 ASCII units × 0.25 + 3 × 1.5 = 9.5 → 9.
    assert (data.chars, data.bytes, data.tokens) == (23, 29, 9)
    assert data.estimator == "Gemini CLI's estimate" and data.exact_tokens is None


def test_show_json_carries_the_folder_figures(proj: Path) -> None:
    run = memlens("show", "proj", "--mode", "classic", "--json", cwd=proj, home=proj / "home")
    data = run.json()
    assert (data["chars"], data["bytes"], data["tokens"]) == (23, 29, 9)
    assert data["estimator"] == "Gemini CLI's estimate"


def test_list_count_exact_against_the_fake(proj: Path) -> None:
    with FakeGemini(expect_key=KEY) as fake:
        run = memlens("list", "proj", "--mode", "classic", "--json", "--count-exact",
                      cwd=proj, home=proj / "home",
                      env={"GEMINI_API_KEY": KEY, "MEMLENS_GEMINI_BASE_URL": fake.base_url})
        assert run.code == 0, run.err
        assert len(fake.count_requests) == 1
    data = run.json()
    assert data["exactTokens"] == 4  # "Project", "rules", "here", "日本語"
    assert KEY not in run.out + run.err


def test_show_json_count_exact_against_the_fake(proj: Path) -> None:
    with FakeGemini(expect_key=KEY) as fake:
        run = memlens("show", "proj", "--mode", "classic", "--json", "--count-exact",
                      cwd=proj, home=proj / "home",
                      env={"GEMINI_API_KEY": KEY, "MEMLENS_GEMINI_BASE_URL": fake.base_url})
        assert run.code == 0, run.err
        (request,) = fake.count_requests
    assert request.body["contents"][0]["parts"][0]["text"] == "Project rules here\n日本語\n"
    assert (run.json()["exactTokens"], run.json()["tokens"]) == (4, 9)


def test_list_count_exact_without_a_key_is_a_usage_error(proj: Path) -> None:
    run = memlens("list", "proj", "--count-exact", cwd=proj, home=proj / "home",
                  env={"GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""})
    assert run.code == 2 and "GEMINI_API_KEY" in run.err


def test_show_agent_json_carries_the_agents_own_figures(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/AGENTS.md": "abcde\n"})
    run = memlens("show", "repo", "--agent", "codex", "--json", cwd=root, home=root / "home")
    assert run.code == 0, run.err
    data = run.json()
    assert (data["chars"], data["bytes"], data["tokens"]) == (6, 6, 2)
    assert data["estimator"] == "Codex's estimate"
    assert [(f["bytes"], f["tokens"]) for f in data["files"]] == [(6, 2)]
