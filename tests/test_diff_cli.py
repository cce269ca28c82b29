"""`memlens diff [BASE [HEAD]]` on a generated git repository (issue 14): the real command
line as a subprocess, a throw-away HOME and TMPDIR, and the git CLI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memlens.protocol.context_diff import DiffResult

from .conftest import build_tree
from .test_cli import Run, memlens

AGENTS = ("--agent", "gemini@0.44+", "--agent", "claude", "--agent", "codex")

FIRST = {
    "GEMINI.md": "# Gemini rules\n@./docs/style.md\n",
    "CLAUDE.md": "# Claude rules\n@docs/style.md\n",
    "AGENTS.md": "# Codex rules\nRun the tests.\n",
    "docs/style.md": "Style v1\n",
    "api/GEMINI.md": "# API rules\n",
    "api/CLAUDE.md": "# API Claude\n",
    "web/AGENTS.md": "# Web agents\n",
    "web/index.ts": "export {};\n",
    ".gitignore": "CLAUDE.local.md\n",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "init.defaultBranch=main", *args], cwd=repo, env=env,
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(root: Path) -> Path:
    """root/home (HOME, trusting root) and root/repo: two commits, the second changing only
    docs/style.md, which GEMINI.md and CLAUDE.md import."""
    build_tree(root, {
        "home/.gemini/GEMINI.md": "Global: be brief.\n",
        "home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
        "tmp": None,
    })
    repo = root / "repo"
    build_tree(repo, FIRST)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / "docs" / "style.md").write_text("Style v2\n")
    git(repo, "commit", "-qam", "second: the imported style changes")
    return repo


def run(repo: Path, *args: str, cwd: Path | None = None) -> Run:
    home = repo.parent / "home"
    return memlens("diff", *args, cwd=cwd or repo, home=home,
                   env={"TMPDIR": str(repo.parent / "tmp"), "PYTHONWARNINGS": "error"})


def changed_pairs(result: DiffResult) -> list[tuple[str, str]]:
    return [(c.agent, c.relative_folder) for c in result.changes]


def as_result(out: Run) -> DiffResult:
    return DiffResult.model_validate(out.json())


def test_two_commits_name_exactly_the_agents_and_folders_that_change(repo: Path) -> None:
    out = run(repo, "HEAD~1", "HEAD", *AGENTS, "--json")
    assert out.code == 1, out.err
    result = as_result(out)
    # GEMINI.md imports the style: Gemini CLI reads it working anywhere below the root.
    # CLAUDE.md imports it: Claude Code expands it working in the root. Codex reads
    # AGENTS.md files only: nothing changes for it.
    assert changed_pairs(result) == [("gemini", "."), ("gemini", "api"), ("gemini", "web"),
                                     ("claude", ".")]
    assert result.agents == ["gemini@0.44+", "claude@2.1", "codex@0.169"]
    assert result.folders == [".", "api", "web"]
    assert (result.base, result.head) == ("HEAD~1", "HEAD")
    assert result.base_commit == git(repo, "rev-parse", "HEAD~1").strip()
    assert result.head_commit == git(repo, "rev-parse", "HEAD").strip()
    assert result.changed
    for change in result.changes:
        assert (change.added, change.removed) == (1, 1)
        assert "-Style v1\n+Style v2\n" in change.diff
        # The temporary trees are written as the real repository: only content changes.
        assert "memlens-diff-" not in change.diff
    claude = result.changes[3]
    assert f"Contents of {repo}/docs/style.md (project instructions" in claude.diff
    assert claude.diff.startswith("--- HEAD~1:./\n+++ HEAD:./\n@@ ")


def test_text_output_and_summary(repo: Path) -> None:
    out = run(repo, "HEAD~1", "HEAD", "--agent", "claude")
    assert out.code == 1
    lines = out.out.splitlines()
    # The summary first: the sides and counts, each agent, each changed file and its reach.
    assert lines[:3] == [
        "memlens diff HEAD~1 → HEAD: 1 file changed; 1 change in what agents send at start, "
        "for 1 of 1 agent; 3 folders compared",
        "  Claude Code (claude@2.1): 1 folder, +0 tokens",
        "  docs/style.md  modified +1 −1  Claude Code in 1 folder"]
    # Then the change once, the agents and folders it reaches under it, and its diff.
    assert lines[4:8] == ["change 1 of 1 (docs/style.md): +1 −1 line(s)",
                          "  Claude Code (claude@2.1), 1 folder, +0 tokens: ./",
                          "--- HEAD~1:./", "+++ HEAD:./"]
    assert "-Style v1" in lines and "+Style v2" in lines
    assert out.err == "memlens: HEAD~1 → HEAD changes what Claude Code reads in 1 folder\n"


def test_one_change_in_many_folders_is_said_once(repo: Path) -> None:
    """The style Gemini CLI imports in ./, api/ and web/ and Claude Code in ./: one change,
    the same lines, with every agent and folder it reaches listed under it."""
    out = run(repo, "HEAD~1", "HEAD", *AGENTS)
    assert out.code == 1
    assert out.out.count("-Style v1") == 1 and out.out.count("+Style v2") == 1
    assert [line for line in out.out.splitlines() if line.startswith("change ")] == [
        "change 1 of 1 (docs/style.md): +1 −1 line(s)"]
    assert "  Gemini CLI (gemini@0.44+), 3 folders, +0 tokens: ./ api/ web/" in out.out
    assert "  Claude Code (claude@2.1), 1 folder, +0 tokens: ./" in out.out
    assert "  Codex (codex@0.169): no change" in out.out


def test_stat_is_the_summary_alone(repo: Path) -> None:
    full = run(repo, "HEAD~1", "HEAD", *AGENTS)
    stat = run(repo, "HEAD~1", "HEAD", *AGENTS, "--stat")
    assert stat.code == 1
    assert stat.out == full.out.split("\n\n", 1)[0] + "\n"
    assert stat.out.splitlines()[-1] == ("  docs/style.md  modified +1 −1  Gemini CLI in 3 "
                                         "folders, Claude Code in 1 folder")
    assert "Style v2" not in stat.out
    assert run(repo, *AGENTS, "--stat").out == ""  # nothing changed: nothing on stdout


def test_json_adds_groups_files_and_tokens(repo: Path) -> None:
    (repo / "docs" / "style.md").write_text("Style v3, a longer rule than before\n")
    result = as_result(run(repo, "HEAD~1", *AGENTS, "--json"))
    # As before, one entry per (agent, folder)...
    assert changed_pairs(result) == [("gemini", "."), ("gemini", "api"), ("gemini", "web"),
                                     ("claude", ".")]
    # ... and now each change once, the file it comes from, and each agent's own tokens.
    assert [(g.changes, g.files, g.added, g.removed) for g in result.groups] == [
        ([0, 1, 2, 3], ["docs/style.md"], 1, 1)]
    (style,) = result.files
    assert (style.path, style.status, style.added, style.removed) == (
        "docs/style.md", "modified", 1, 1)
    assert [(h.line, h.end_line, h.added, h.removed) for h in style.hunks] == [(1, 1, 1, 1)]
    for change in result.changes:
        assert change.tokens_before is not None and change.tokens_after is not None
        assert change.tokens_after > change.tokens_before


def test_head_against_the_working_tree(repo: Path) -> None:
    clean = run(repo, *AGENTS)
    assert (clean.code, clean.out) == (0, "")
    assert clean.err.startswith("memlens: no change in what gemini@0.44+, claude@2.1, "
                                "codex@0.169 send(s) at start in 3 folder(s) between HEAD and "
                                "working tree")
    # An uncommitted edit of the root AGENTS.md, and a new (untracked) CLAUDE.md in web/.
    (repo / "AGENTS.md").write_text("# Codex rules\nRun the tests twice.\n")
    (repo / "web" / "CLAUDE.md").write_text("# Web Claude\n")
    out = run(repo, *AGENTS, "--json")
    assert out.code == 1, out.err
    result = as_result(out)
    assert (result.base, result.head, result.head_commit) == ("HEAD", "working tree", None)
    # Codex reads the AGENTS.md chain from the repository root down: every folder changes.
    assert changed_pairs(result) == [("claude", "web"), ("codex", "."), ("codex", "api"),
                                     ("codex", "web")]
    web = result.changes[0]
    assert "+# Web Claude" in web.diff
    assert web.diff.startswith("--- HEAD:web/\n+++ working tree:web/")
    # One revision: that revision against the working tree (both changes, and the style).
    since = as_result(run(repo, "HEAD~1", *AGENTS, "--json"))
    assert changed_pairs(since) == [("gemini", "."), ("gemini", "api"), ("gemini", "web"),
                                    ("claude", "."), ("claude", "web"), ("codex", "."),
                                    ("codex", "api"), ("codex", "web")]


def test_files_git_ignores_are_the_same_on_both_sides(repo: Path) -> None:
    (repo / "CLAUDE.local.md").write_text("My own notes.\n")
    assert run(repo, "--agent", "claude").code == 0
    out = run(repo, "HEAD~1", "HEAD", "--agent", "claude", "--json")
    result = as_result(out)
    assert changed_pairs(result) == [("claude", ".")]
    # It is read on both sides (a line of context), and is no change.
    assert f" Contents of {repo}/CLAUDE.local.md (user's private" in result.changes[0].diff


def test_github_annotations_sit_on_the_changed_lines(repo: Path) -> None:
    (repo / "docs" / "style.md").write_text("Intro\nStyle v1\nTabs, not spaces.\n")
    out = run(repo, "HEAD~1", "--agent", "gemini@0.44+", "--agent", "claude",
              "--format", "github")
    assert out.code == 1
    lines = out.out.splitlines()
    assert len(lines) == 2  # one notice per changed stretch of docs/style.md
    heads = [line.split("::", 2)[1] for line in lines]
    title = "title=memlens%3A this changes what Gemini CLI and Claude Code send at start"
    assert heads == [f"notice file=docs/style.md,line=1,endLine=1,{title}",
                     f"notice file=docs/style.md,line=3,endLine=3,{title}"]
    message = lines[1].split("::", 2)[2]
    assert message.startswith(
        "What the agents send at start changes (HEAD~1 → working tree):"
        "%0AGemini CLI (gemini@0.44+) in 3 folders (./, api/, web/), ")
    assert "%0AClaude Code (claude@2.1) in 1 folder (./), " in message
    assert "%0A+Tabs, not spaces.%0A" in message


def test_github_a_change_from_no_file_still_annotated(repo: Path) -> None:
    """A deleted memory file: no line to sit on; one notice on the folder's memory file."""
    (repo / "api" / "CLAUDE.md").unlink()
    out = run(repo, "HEAD", "--agent", "claude", "--format", "github")
    assert out.code == 1
    (line,) = out.out.splitlines()
    assert line.startswith("::notice file=api/GEMINI.md,title=memlens%3A what Claude Code "
                           "sends at start changes::")
    assert "%0A-# API Claude" in line


def test_json_matches_the_published_schema(repo: Path) -> None:
    schema = memlens("schema", "DiffResult", cwd=repo, home=repo.parent / "home").json()
    assert isinstance(schema, dict)
    model = schema["DiffResult"]
    data = run(repo, "HEAD~1", "HEAD", *AGENTS, "--json").json()
    assert isinstance(data, dict)
    assert set(model["required"]) <= set(data) <= set(model["properties"])
    entry = model["$defs"]["ContextChangeEntry"]
    for change in data["changes"]:
        assert set(entry["required"]) <= set(change) <= set(entry["properties"])
    DiffResult.model_validate(data)


def test_nothing_is_left_behind(repo: Path) -> None:
    worktrees = git(repo, "worktree", "list", "--porcelain")
    (repo / "GEMINI.md").write_text("# Gemini rules, edited\n@./docs/style.md\n")
    (repo / "CLAUDE.local.md").write_text("Ignored notes.\n")
    status = git(repo, "status", "--porcelain", "--ignored")
    assert run(repo, "HEAD~1", *AGENTS).code == 1
    assert run(repo, "HEAD~1", "HEAD", *AGENTS).code == 1
    assert git(repo, "status", "--porcelain", "--ignored") == status
    assert git(repo, "worktree", "list", "--porcelain") == worktrees
    assert not (repo / ".git" / "worktrees").exists()
    assert list((repo.parent / "tmp").iterdir()) == []


def test_usage_errors_are_one_line_and_exit_2(repo: Path, root: Path) -> None:
    unknown = run(repo, "no-such-rev", *AGENTS)
    assert unknown.code == 2
    assert unknown.err == (f"memlens: error: unknown revision 'no-such-rev' (not a commit in "
                           f"{repo})\n")
    assert run(repo, "HEAD", "nope", *AGENTS).code == 2
    assert run(repo, "--upload-pack=x", *AGENTS).code == 2
    outside = root / "plain"
    outside.mkdir()
    plain = run(repo, *AGENTS, cwd=outside)
    assert plain.code == 2
    assert plain.err == f"memlens: error: not a git repository (or not its work tree): {outside}\n"
    bad_agent = run(repo, "--agent", "nobody")
    assert bad_agent.code == 2 and bad_agent.err.count("\n") == 1
    assert "Traceback" not in unknown.err + plain.err + bad_agent.err
    assert list((root / "tmp").iterdir()) == []


def test_agents_from_the_environment(repo: Path) -> None:
    home = repo.parent / "home"
    out = memlens("diff", "HEAD~1", "HEAD", "--json", cwd=repo, home=home,
                  env={"TMPDIR": str(repo.parent / "tmp"), "MEMLENS_AGENTS": "claude@2.1"})
    # The pinned agent first, then every agent whose files the repository holds.
    result = as_result(out)
    assert result.agents == ["claude@2.1", "gemini@0.44+", "codex@0.169"]
    assert changed_pairs(result) == [("claude", "."), ("gemini", "."), ("gemini", "api"),
                                     ("gemini", "web")]


def test_a_subfolder_compares_that_folder(repo: Path) -> None:
    out = run(repo, "HEAD~1", "HEAD", *AGENTS, "--json", cwd=repo / "api")
    result = as_result(out)
    assert result.root == str(repo / "api") and result.repository == str(repo)
    assert result.folders == ["."]
    # Working in api/, Claude Code sends the root CLAUDE.md's import line as written.
    assert changed_pairs(result) == [("gemini", ".")]
    assert f"{repo}/GEMINI.md" in result.changes[0].diff


# --- issue 23, finding 6: the temporary copy ------------------------------------------------

def _diff_env(repo: Path, **extra: str) -> dict[str, str]:
    from .test_cli import _SCRUBBED

    environ = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    home = repo.parent / "home"
    environ.update({"HOME": str(home), "GEMINI_CLI_HOME": str(home),
                    "TMPDIR": str(repo.parent / "tmp"), **extra})
    return environ


def test_diff_copies_only_what_an_agent_can_read(repo: Path) -> None:
    """A 64 MB file that is no memory (untracked, not ignored) is never copied: under a 1 MB
    cap on the size of a file the process may write, diff still answers."""
    import resource

    with (repo / "dataset.bin").open("wb") as handle:  # sparse: costs no disk here
        handle.truncate(64 * 1024 * 1024)

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    proc = subprocess.run([str(memlens.__globals__["MEMLENS"]), "diff", "HEAD", *AGENTS,
                           "--json"], cwd=repo, env=_diff_env(repo), capture_output=True,
                          text=True, timeout=120, preexec_fn=cap, stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    json.loads(proc.stdout)
    assert list((repo.parent / "tmp").iterdir()) == []


def test_diff_still_sees_what_memory_imports_outside_the_agent_folders(repo: Path) -> None:
    """Only memory is copied, but what it imports comes with it, transitively."""
    build_tree(repo, {"docs/style.md": "Style v3 @./deeper/rule.md\n",
                      "docs/deeper/rule.md": "Deep rule v1\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "third")
    (repo / "docs" / "deeper" / "rule.md").write_text("Deep rule v2\n")
    out = run(repo, "HEAD", "--agent", "gemini@0.44+", "--json")
    assert out.code == 1, out.err
    diff = "".join(c.diff for c in as_result(out).changes)
    assert "-Deep rule v1" in diff and "+Deep rule v2" in diff


def test_a_relative_link_out_of_the_repository_keeps_its_meaning(repo: Path) -> None:
    shared = repo.parent / "shared"
    build_tree(shared, {"GEMINI.md": "Shared team memory.\n"})
    (repo / "team").mkdir()
    (repo / "team" / "GEMINI.md").symlink_to("../../shared/GEMINI.md")
    out = run(repo, "HEAD", "--agent", "gemini@0.44+", "--json")
    assert out.code == 1, out.err
    diff = "".join(c.diff for c in as_result(out).changes)
    assert "+Shared team memory." in diff


def test_sigterm_removes_the_temporary_copy(repo: Path, tmp_path: Path) -> None:
    """A cancelled CI job: SIGTERM while git runs. The copy goes, and so does git."""
    import signal
    import time

    bin_dir = tmp_path / "slow-git"
    bin_dir.mkdir()
    marker = tmp_path / "git-started"
    real_git = subprocess.run(["sh", "-c", "command -v git"], capture_output=True,
                              text=True, check=True).stdout.strip()
    slow = bin_dir / "git"
    slow.write_text(f"#!/bin/sh\ncase \"$*\" in *ls-files*) touch {marker}; sleep 60;; "
                    f"esac\nexec {real_git} \"$@\"\n")
    slow.chmod(0o755)
    env = _diff_env(repo, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.Popen([str(memlens.__globals__["MEMLENS"]), "diff", "HEAD", *AGENTS],
                            cwd=repo, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "git was never run"
            time.sleep(0.05)
        assert [p.name[:13] for p in (repo.parent / "tmp").iterdir()] == ["memlens-diff-"]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.communicate()
    assert list((repo.parent / "tmp").iterdir()) == []


def test_the_next_run_removes_a_copy_a_killed_run_left(repo: Path) -> None:
    left = repo.parent / "tmp" / "memlens-diff-killed1"
    build_tree(left, {"0/GEMINI.md": "old\n", ".memlens-diff.lock": ""})
    out = run(repo, "HEAD", *AGENTS)
    assert out.code in (0, 1), out.err
    assert list((repo.parent / "tmp").iterdir()) == []


def test_a_partial_clone_without_the_blobs_answers_one_line(repo: Path, root: Path) -> None:
    git(repo, "config", "uploadpack.allowFilter", "true")
    clone = root / "clone"
    git(root, "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{repo}",
        str(clone))
    (repo / ".git").rename(repo / ".git-away")  # the promisor remote is gone: offline
    out = run(clone, "HEAD~1", "HEAD", *AGENTS)
    assert out.code == 2, (out.code, out.err)
    assert "Traceback" not in out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "partial or shallow clone" in lines[0], out.err


def test_without_agent_a_commit_adding_agents_md_is_codexs_change(root: Path) -> None:
    """Only Gemini CLI is in use (MEMLENS_AGENTS pins it): a commit that adds an AGENTS.md
    still shows, as what Codex sends (issue 24: it said "no change")."""
    build_tree(root, {"home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
                      "tmp": None, "repo/GEMINI.md": "Gemini rules\n"})
    repo = root / "repo"
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / "AGENTS.md").write_text("Run the tests before you commit.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "second: AGENTS.md")
    out = run(repo, "HEAD~1", "HEAD", "--json")
    assert out.code == 1, out.err
    result = as_result(out)
    assert result.agents == ["gemini@0.43", "codex@0.169"]
    assert changed_pairs(result) == [("codex", ".")]
    assert "+Run the tests before you commit." in result.changes[0].diff
