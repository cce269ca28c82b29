"""`memlens conflicts --model`: the model's pass over the pairs of files one agent receives
together, against the local fake Gemini API (agent/conflict_review.py) — asked only about
those pairs, answers cached by content, quotes checked against the files, its findings kept
apart from the rule set's."""

from __future__ import annotations

import json
from pathlib import Path

from memlens.agent.config import ChatSettings
from memlens.agent.conflict_review import review
from memlens.agents import agent_by_id
from memlens.model import MemorySettings
from memlens.protocol.conflicts import ConflictsResult
from memlens.workspace.conflicts import folder_readings

from .conftest import build_tree
from .fake_gemini import FakeGemini, text
from .test_cli import memlens

KEY = "test-key-conflicts"


def _tree(root: Path) -> Path:
    build_tree(root, {"home": None, "proj/.git": None,
                      "proj/CLAUDE.md": "# Rules\nKeep functions short.\n",
                      "proj/.claude/rules/style.md": "Long functions are fine here.\n",
                      "proj/web/CLAUDE.md": "Prefer classes.\n", "proj/web/a.ts": "",
                      "proj/api/CLAUDE.md": "Avoid classes.\n", "proj/api/b.ts": ""})
    return root / "proj"


def _answer(quote_a: str, quote_b: str) -> str:
    return json.dumps({"contradictions": [{"quote_a": quote_a, "quote_b": quote_b,
                                           "explanation": "short against long"}]})


def test_the_model_is_asked_about_files_one_agent_receives_together(root: Path) -> None:
    proj = _tree(root)
    settings = MemorySettings(home=str(root / "home"), trusted=True)
    readings = folder_readings(str(proj), settings, [agent_by_id("claude")])
    cache = str(root / "cache.json")
    none = json.dumps({"contradictions": []})
    with FakeGemini(expect_key=KEY) as fake:
        # CLAUDE.md + the rule at start-up; each of them with web/ and with api/ on read;
        # never web/ with api/ (no read brings both).
        fake.enqueue(text(_answer("Keep functions short.", "Long functions are fine here.")),
                     text(none), text(none), text(none), text(none))
        chat = ChatSettings(base_url=fake.base_url, model="gemini-test", max_attempts=1)
        found, notes = review(readings, chat, KEY, cache=cache)
        asked = [json.dumps(r.contents) for r in fake.requests]
    assert notes == []
    assert len(asked) == 5
    assert not any("Prefer classes" in a and "Avoid classes" in a for a in asked)
    [finding] = found
    assert finding.judgement == "model" and finding.model == "gemini-test"
    assert [(r.path, r.line) for r in finding.rules] == [
        (str(proj / "CLAUDE.md"), 2), (str(proj / ".claude/rules/style.md"), 1)]
    assert finding.agents == ["Claude Code at start-up"] and not finding.cached
    # The same texts again: answered from the cache, no request.
    with FakeGemini(expect_key=KEY) as fake:
        chat = ChatSettings(base_url=fake.base_url, model="gemini-test", max_attempts=1)
        again, _ = review(readings, chat, KEY, cache=cache)
        assert fake.requests == []
    assert [f.cached for f in again] == [True]


def test_a_quote_not_in_the_files_is_dropped(root: Path) -> None:
    proj = _tree(root)
    (proj / "web/CLAUDE.md").unlink()
    (proj / "api/CLAUDE.md").unlink()
    settings = MemorySettings(home=str(root / "home"), trusted=True)
    readings = folder_readings(str(proj), settings, [agent_by_id("claude")])
    with FakeGemini(expect_key=KEY) as fake:
        fake.enqueue(text(_answer("Keep functions short.", "Functions may be long.")))
        chat = ChatSettings(base_url=fake.base_url, model="gemini-test", max_attempts=1)
        found, notes = review(readings, chat, KEY, cache=str(root / "cache.json"))
    assert found == []
    assert notes == ["a contradiction the model quoted between CLAUDE.md and style.md is not "
                     "in the files: dropped"]


def test_the_command_keeps_the_models_findings_apart(root: Path) -> None:
    proj = _tree(root)
    (proj / "web/CLAUDE.md").unlink()
    (proj / "api/CLAUDE.md").unlink()
    env = {"XDG_CACHE_HOME": str(root / "cache"), "GEMINI_API_KEY": KEY}
    plain = ConflictsResult.model_validate(memlens(
        "conflicts", "--agent", "claude", "--json", cwd=proj, home=root / "home",
        env=env).json())
    assert plain.model_findings is None  # off unless asked
    with FakeGemini(expect_key=KEY) as fake:
        fake.enqueue(text(_answer("Keep functions short.", "Long functions are fine here.")))
        env["MEMLENS_GEMINI_BASE_URL"] = fake.base_url
        run = memlens("conflicts", "--agent", "claude", "--model", cwd=proj,
                      home=root / "home", env=env)
    assert run.code == 0, run.err
    assert "The model's judgement" in run.out
    assert "model[contradiction] CLAUDE.md:2 'Keep functions short.' vs " \
           ".claude/rules/style.md:1 'Long functions are fine here.'" in run.out
    # Without a key (and nothing cached): one line, exit 2.
    refused = memlens("conflicts", "--agent", "claude", "--model", cwd=proj,
                      home=root / "home", env={**env, "GEMINI_API_KEY": "",
                                               "GOOGLE_API_KEY": "",
                                               "XDG_CACHE_HOME": str(root / "empty")})
    assert refused.code == 2 and "--model" in refused.err
