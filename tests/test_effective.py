"""The effective-context engine (memlens.workspace.effective): folders of interest, payload
texts per agent and folder, diffs in a stable order, temporary roots mapped back, the
server's state."""

from __future__ import annotations

import json
from pathlib import Path

from memlens.agents import agent_by_id
from memlens.agents.gemini.settings import load_settings
from memlens.workspace.effective import (
    ChosenAgent,
    EffectiveState,
    chosen,
    diff,
    effective_context,
    folders_of_interest,
    map_context,
    summary,
    unified,
)

from .conftest import build_tree


def test_folders_of_interest_roots_first_then_memory_folders_sorted() -> None:
    found = ["/w/b/CLAUDE.md", "/w/a/GEMINI.md", "/w/GEMINI.md", "/w/c/.claude/CLAUDE.md",
             "/w/a/AGENTS.md", "/elsewhere/GEMINI.md"]
    assert folders_of_interest(["/w"], found) == ["/w", "/w/a", "/w/b", "/w/c"]


def test_unified_counts_lines_and_marks_a_missing_final_newline() -> None:
    text, added, removed = unified("a\nb\nc", "a\nB\nc", "x", "y")
    assert (added, removed) == (1, 1)
    assert text == ("--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
                    "\\ No newline at end of file\n")


def test_diff_orders_by_agent_then_folder_and_skips_equal_texts() -> None:
    before = {("gemini", "/w/b"): "1\n", ("claude", "/w"): "x\n", ("gemini", "/w"): "same\n",
              ("codex", "/w"): "c\n"}
    after = {("gemini", "/w/b"): "2\n", ("claude", "/w"): "y\n", ("gemini", "/w"): "same\n",
             ("gemini", "/w/a"): "new\n"}
    changes = diff(before, after, ["claude", "gemini", "codex"])
    assert [(c.agent, c.folder) for c in changes] == [
        ("claude", "/w"), ("gemini", "/w/a"), ("gemini", "/w/b"), ("codex", "/w")]
    assert changes[1].before == "" and changes[1].diff.endswith("+new\n")
    assert changes[3].after == "" and (changes[3].added, changes[3].removed) == (0, 1)
    assert changes[0].agent_label == "Claude Code"
    assert changes[0].diff.startswith("--- a//w\n+++ b//w\n")


def test_summary_names_each_agent_and_its_folder_count() -> None:
    before = {("claude", "/w"): "a", ("claude", "/w/x"): "a", ("gemini", "/w"): "a"}
    after = {k: "b" for k in before}
    changes = diff(before, after, ["claude", "gemini"])
    assert summary(changes, "GEMINI.md") == ("GEMINI.md changes what Claude Code reads in 2 "
                                             "folders and what Gemini CLI reads in 1 folder")
    assert summary(changes[:1]) == "Changes what Claude Code reads in 1 folder"
    assert summary([]) == ""


def test_map_context_writes_the_temporary_root_as_the_real_one() -> None:
    context = {("claude", "/tmp/memlens-diff-x/1/api"):
               "Contents of /tmp/memlens-diff-x/1/CLAUDE.md:\n"}
    assert map_context(context, "/tmp/memlens-diff-x/1", "/home/u/repo") == {
        ("claude", "/home/u/repo/api"): "Contents of /home/u/repo/CLAUDE.md:\n"}


def test_effective_context_is_what_each_agent_sends(root: Path) -> None:
    build_tree(root, {
        "home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
        "repo/.git": None,
        "repo/GEMINI.md": "Gemini root\n",
        "repo/CLAUDE.md": "Claude root\n",
        "repo/api/CLAUDE.md": "Claude api\n",
    })
    repo = root / "repo"
    settings = load_settings(str(repo), home=str(root / "home"))
    agents = chosen([("gemini", "gemini@0.44+", "0.44+"), ("claude", "claude@2.1", "2.1"),
                     ("gemini", "gemini@0.43", "0.43")])
    assert [a.name for a in agents] == ["gemini@0.44+", "claude@2.1"]  # each agent once
    folders = [str(repo), str(repo / "api"), str(repo / "gone")]
    context = effective_context(agents, folders, lambda _folder: settings)
    claude = agent_by_id("claude")
    expected = "\n".join(claude.load(str(repo / "api"), settings).payloads)
    assert context[("claude", str(repo / "api"))] == expected
    assert "Claude api" in expected and "Claude root" in expected
    assert "Gemini root" in context[("gemini", str(repo))]
    assert context[("gemini", str(repo / "gone"))] == ""  # no such folder: nothing is sent
    # The Gemini CLI profile follows the chosen version.
    old = ChosenAgent(agent_by_id("gemini"), "gemini@0.43", "0.43")
    assert old.settings(settings).gemini_profile == "0.43"
    assert agents[0].settings(settings).gemini_profile == "0.44+"


def test_state_remembers_the_baseline_and_the_last_change_per_pair() -> None:
    state = EffectiveState(agents=chosen([("claude", "claude@2.1", None)]))
    assert state.advance({("claude", "/w"): "a\n"}, "/w/CLAUDE.md") == []  # the first baseline
    changes = state.advance({("claude", "/w"): "b\n"}, "/w/CLAUDE.md")
    assert [(c.before, c.after) for c in changes] == [("a\n", "b\n")]
    assert state.last is not None and state.last[("claude", "/w")].trigger == "/w/CLAUDE.md"
    assert state.advance({("claude", "/w"): "b\n"}, "/w/x.md") == []
    assert state.last[("claude", "/w")].change.after == "b\n"  # kept until the next change


def test_an_agent_that_joins_the_comparison_has_no_change_until_its_baseline() -> None:
    # The editor compares the agents it shows; OpenCode is shown once its first file appears.
    # What it read before is not known: its first text is its baseline, not a change from "".
    state = EffectiveState(agents=chosen([("claude", "claude@2.1", None)]))
    state.advance({("claude", "/w"): "a\n"}, "/w/CLAUDE.md")
    state.agents = chosen([("claude", "claude@2.1", None), ("opencode", "opencode@1.18", None)])
    joined = {("claude", "/w"): "b\n", ("opencode", "/w"): "x\n"}
    assert [c.agent for c in state.advance(joined, "/w/AGENTS.md")] == ["claude"]
    changes = state.advance({("claude", "/w"): "b\n", ("opencode", "/w"): "y\n"}, "/w/AGENTS.md")
    assert [(c.agent, c.before, c.after) for c in changes] == [("opencode", "x\n", "y\n")]
