"""Issue 30 (hostile input, round three), items 6, 8 and 11, against the real command line:

- 6: an output path (`report --html/--markdown/--json-file`) that is not a regular file — a
  FIFO a CI step reads, a character device, a symbolic link a repository placed, a folder —
  is written in place or refused, never replaced (`files.output.write_output`); `-` is stdout.
  The real /dev/null is never used: a FIFO and a device node made in tmp stand in for it.
- 8: file names in `report --markdown` (the GitHub job summary) render no link, image,
  heading, HTML, mention or line break, and never add a cell or a row (checked by rendering
  with markdown-it, GFM tables on); SARIF messages make no embedded link of them.
- 11: `memlens diff` runs no command a repository's `.git/config` names: core.fsmonitor,
  hooks, textconv and diff drivers, clean/smudge filters, credential helpers, a promisor
  remote's uploadpack on a lazy fetch; GIT_DIR from the environment is not followed
  (`files.git.run_git`).

Each test failed on the code before the fix (docs/security.md, issue 30 round three)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from .conftest import build_tree
from .test_cli import Run, memlens


def _home(root: Path) -> Path:
    home = root / "home"
    home.mkdir(exist_ok=True)
    return home


def _report(root: Path, folder: Path, *args: str, cwd: Path | None = None) -> Run:
    return memlens("report", str(folder), "--trusted", *args, cwd=cwd or root, home=_home(root),
                   env={"MEMLENS_AGENTS": "gemini@0.44+"})


@pytest.fixture
def project(root: Path) -> Path:
    build_tree(root, {"proj/GEMINI.md": "# Rules\nBe brief.\n"})
    return root / "proj"


# --- 6: output paths ---------------------------------------------------------------------------
OUTPUTS = {"--html": "<html", "--json-file": '"rows"', "--markdown": "| File |"}


@pytest.mark.parametrize("option", ["--html", "--json-file"])
def test_a_fifo_output_is_written_in_place_never_replaced(root: Path, project: Path,
                                                          option: str) -> None:
    """A FIFO a CI step reads: the report goes into it, and it is still a FIFO after (the old
    atomic write renamed a regular file over it, and its reader never saw a byte)."""
    fifo = root / "out.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        run = _report(root, project, option, str(fifo))
    finally:
        try:
            received, _ = reader.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # nothing ever opened the FIFO for writing
            reader.kill()
            received, _ = reader.communicate()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert run.code == 0, run.err
    assert OUTPUTS[option] in received.decode("utf-8")


def test_a_character_device_output_is_written_in_place(root: Path, project: Path) -> None:
    """`--html` on a character device (a node for the null device, made in tmp: the real
    /dev/null is never put at risk) stays a device; before, it became a regular file."""
    node = root / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as err:
        pytest.skip(f"cannot make a device node here: {err}")
    run = _report(root, project, "--html", str(node))
    assert stat.S_ISCHR(os.lstat(node).st_mode), "the device node was replaced by a file"
    assert run.code == 0, run.err


def test_any_other_device_node_is_refused_never_replaced(root: Path, project: Path) -> None:
    """A device node an archive extracted as root could leave where the report goes (here
    one for the harmless zero device): neither opened nor replaced, one line (exit 2)."""
    node = root / "device"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 5))
    except (PermissionError, OSError) as err:
        pytest.skip(f"cannot make a device node here: {err}")
    for option in sorted(OUTPUTS):
        run = _report(root, project, option, str(node))
        assert stat.S_ISCHR(os.lstat(node).st_mode), f"{option} replaced the device node"
        assert run.code == 2
        assert run.err == (f"memlens: error: {option}: {node} is a device: not written (only "
                           "a file, a FIFO or /dev/null is)\n")


def test_dev_stdout_is_our_standard_output(root: Path, project: Path) -> None:
    """`--html /dev/stdout` (a link to our stdout, a pipe here) writes to stdout; before, the
    link was resolved and a temp file created beside the pipe's /proc entry (an error)."""
    run = _report(root, project, "--html", "/dev/stdout")
    assert run.code == 0, run.err
    assert run.out.lstrip().startswith("<!doctype html>")


@pytest.mark.parametrize("option", ["--html", "--json-file"])
def test_dash_is_standard_output_for_every_output_option(root: Path, project: Path,
                                                         option: str) -> None:
    """`-` is stdout (as `--markdown -` already was); before, a file named `-` was written."""
    run = _report(root, project, option, "-")
    assert run.code == 0, run.err
    assert OUTPUTS[option] in run.out
    assert not (root / "-").exists()


@pytest.mark.parametrize("option", sorted(OUTPUTS))
def test_a_symlink_a_repository_placed_is_never_followed(root: Path, project: Path,
                                                         option: str) -> None:
    """The repository holds `report.out -> ../victim` where the report is written: the
    victim keeps its content, the link stays a link, and one line says why (exit 2). Before,
    the victim was replaced (`--html`, `--json-file`) or appended to (`--markdown`)."""
    victim = root / "victim"
    victim.write_text("precious\n")
    (project / "report.out").symlink_to("../victim")
    run = _report(root, project, option, "report.out", cwd=project)
    assert victim.read_text() == "precious\n"
    assert (project / "report.out").is_symlink()
    assert run.code == 2
    assert run.err.startswith(f"memlens: error: {option}: report.out is a symbolic link to a "
                              "file: not written through"), run.err
    assert run.err.count("\n") == 1


def test_a_folder_output_is_refused_in_one_line(root: Path, project: Path) -> None:
    folder = root / "reports"
    folder.mkdir()
    run = _report(root, project, "--html", str(folder))
    assert run.code == 2
    assert run.err == f"memlens: error: --html: {folder} is a folder: give a file name (or - " \
                      "for standard output)\n"
    assert folder.is_dir() and not os.listdir(folder)


def test_a_regular_output_file_is_still_replaced_and_the_summary_appended(
        root: Path, project: Path) -> None:
    """What must keep working: a regular file is replaced (its mode kept), a job summary
    file is appended to."""
    page, summary = root / "page.html", root / "summary.md"
    page.write_text("old")
    page.chmod(0o640)
    summary.write_text("earlier step\n")
    run = _report(root, project, "--html", str(page), "--markdown", str(summary))
    assert run.code == 0, run.err
    assert page.read_text().lstrip().startswith("<!doctype html>")
    assert stat.S_IMODE(page.stat().st_mode) == 0o640
    assert summary.read_text().startswith("earlier step\n### What each agent reads in ")


# --- 8: Markdown from names on disk --------------------------------------------------------------
HOSTILE_NAMES = [
    "x`[Review and approve](https:evil.example",  # continues with "/go)" below
    "![x](https:evil.example",  # an image, continued with "/i.png)"
    "@octocat",
    "a\r# ALL CHECKS APPROVED\rb",
    "a\n# Heading\nb",
    "<img src=x onerror=alert(1)>",
    "<b>bold</b",  # continued with ">" below
    "p|q|r",
    "a\\|b",
    "``two`` ` one",
    " space `",
    "&lt;entity&gt; &#124;",
    "*em* _em_ ~~del~~",
    "line\u2028sep\u2029para",
    "bidi\u202eevil",
    "[ref]: https:evil.example",
]


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.rows: list[list[str]] = []
        self.code: list[str] = []
        self._stack: list[str] = []
        self._cell: list[str] | None = None
        self._in_code = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "code":
            self._in_code = True
            self.code.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "code":
            self._in_code = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._in_code:
            self.code[-1] += data


def _render(markdown: str) -> _Html:
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    parsed = _Html()
    parsed.feed(html)
    return parsed


def test_markdown_summary_renders_no_markup_from_file_names(root: Path) -> None:
    tree: dict[str, str | None] = {"proj/GEMINI.md": "# Rules\n"}
    tails = {0: "/go)", 1: "/i.png)", 6: ">"}
    for number, name in enumerate(HOSTILE_NAMES):
        tree[f"proj/{name}{tails.get(number, '')}/GEMINI.md"] = "Sub rules\n"
    build_tree(root, tree)
    summary = root / "summary.md"
    run = _report(root, root / "proj", "--markdown", str(summary), "--json")
    assert run.code == 0, run.err
    rows = json.loads(run.out)["rows"]
    agents = json.loads(run.out)["agents"]
    assert len(rows) == len(HOSTILE_NAMES) + 1
    text = summary.read_text(encoding="utf-8")
    parsed = _render(text)
    # No link, image, heading (but our own h3), HTML from a name, emphasis, line break.
    assert not {"a", "img", "h1", "h2", "h4", "h5", "h6", "b", "em", "del", "br"} \
        & set(parsed.tags), parsed.tags
    assert parsed.tags.count("h3") == 1
    # The first table: a header and one row per file, each exactly 1 + agents cells wide.
    table = parsed.rows[:len(rows) + 1]
    assert all(len(cells) == 1 + len(agents) for cells in table), table
    shown = [cells[0] for cells in table[1:]]
    assert len(parsed.rows) == len(rows) + 1 + 1 + len(agents)  # and the agents' table
    for row in rows:
        relative = row["relative"]
        if any(c in relative for c in "\r\n\u2028\u2029\u202e"):
            escaped = (relative.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n")
                       .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
                       .replace("\u202e", "\\u202e"))
            assert f'"{escaped}"' in shown, (relative, shown)
        elif "\\" in relative:
            assert '"' + relative.replace("\\", "\\\\") + '"' in shown, (relative, shown)
        else:
            assert relative in shown, (relative, shown)
    # The mention is inert: inside code only (GitHub links mentions outside code).
    assert not re.search(r"(?<![`\w])@octocat", text.replace("`@octocat", ""))
    assert any("@octocat" in code for code in parsed.code)
    # No raw line break or bidi control reaches the file.
    assert not re.search("[\r\u2028\u2029\u202e]", text)


def test_sarif_messages_make_no_embedded_link_of_an_import_path(root: Path) -> None:
    build_tree(root, {"proj/GEMINI.md": "# Rules\n@./[Approve](https:evil.example).md\n"})
    run = memlens("check", str(root / "proj"), "--trusted", "--format", "sarif", cwd=root,
                  home=_home(root), env={"MEMLENS_AGENTS": "gemini@0.44+"})
    results = json.loads(run.out)["runs"][0]["results"]
    texts = [r["message"]["text"] for r in results]
    assert any("Approve" in t for t in texts), texts
    for message in texts:
        assert not re.search(r"(?<!\\)[\[\]]", message), message


def test_a_name_that_is_not_utf8_fails_no_output_file(root: Path) -> None:
    """A folder whose name is not UTF-8: every output file is written, valid UTF-8 (before,
    each of the three failed on the name: 'surrogates not allowed')."""
    build_tree(root, {"proj/GEMINI.md": "# Rules\n"})
    odd = os.path.join(os.fsencode(root / "proj"), b"n\xffo")
    os.mkdir(odd)
    with open(os.path.join(odd, b"GEMINI.md"), "wb") as handle:
        handle.write(b"Sub rules\n")
    page, summary, data = root / "page.html", root / "summary.md", root / "data.json"
    run = _report(root, root / "proj", "--html", str(page), "--markdown", str(summary),
                  "--json-file", str(data))
    assert run.code == 0, run.err
    assert "n\ufffdo/GEMINI.md" in page.read_bytes().decode("utf-8")
    assert '`"n\\xffo/GEMINI.md"`' in summary.read_bytes().decode("utf-8")
    rows = json.loads(data.read_bytes().decode("utf-8"))["rows"]
    assert "n\ufffdo/GEMINI.md" in [row["relative"] for row in rows]


def test_hover_markdown_from_every_agent_renders_no_markup_from_names(root: Path) -> None:
    """The editor's hovers are Markdown too (VS Code renders links and remote images there):
    every agent's headline, the budget table and the rule notes show a hostile folder name,
    rule path, glob and description as text."""
    from memlens.agents import AGENT_IDS, agent_by_id
    from memlens.model import MemorySettings
    from memlens.reports.budgets import context_budget, table

    link = "[Approve](https:evil.example)"
    folder = root / "x`![t](https:evil.example" / "p.png)" / "a\r# APPROVED\rb"
    rule = "---\ndescription: " + link + " <b>x</b>\nglobs: '*.py'\n---\nRule.\n"
    build_tree(folder, {
        "GEMINI.md": "g\n", "CLAUDE.md": "c\n", "AGENTS.md": "a\n",
        ".claude/rules/r.md": "---\npaths: ['" + link + "/**']\n---\nr\n",
        ".github/copilot-instructions.md": "i\n",
        ".github/instructions/x.instructions.md": "---\napplyTo: '" + link + "'\n---\nx\n",
        ".cursor/rules/" + link.replace("/", "_") + ".mdc": rule,
        ".agents/rules/r.md": "---\ntrigger: model_decision\ndescription: " + link
                              + "\n---\nr\n",
    })
    settings = MemorySettings(home=str(_home(root)))
    for agent_id in AGENT_IDS:
        memory = agent_by_id(agent_id).load(str(folder), settings)
        parsed = _render(memory.headline)
        assert not {"a", "img", "h1", "h2", "b"} & set(parsed.tags), (agent_id, memory.headline)
    budget = context_budget("claude", [(str(folder / "CLAUDE.md"), "CLAUDE.md", "c\n")])
    parsed = _render(table(budget, {str(folder / "CLAUDE.md"): str(folder / "CLAUDE.md")}))
    assert not {"a", "img"} & set(parsed.tags)
    assert all(len(cells) == 4 for cells in parsed.rows), parsed.rows


# --- 11: git runs no command the repository configures --------------------------------------------
def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                    "-c", "init.defaultBranch=main", *args], cwd=repo, env=env, check=True,
                   capture_output=True)


def _repository(root: Path) -> Path:
    build_tree(root, {"repo/GEMINI.md": "# Rules v1\n", "repo/api/GEMINI.md": "# API\n",
                      "tmp": None})
    repo = root / "repo"
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    (repo / "GEMINI.md").write_text("# Rules v2\n")
    _git(repo, "commit", "-qam", "two")
    return repo


def _arm(repo: Path, markers: Path) -> None:
    """Every configuration that runs a command, each touching its own marker — set after the
    commits, so only what memlens runs could touch one."""
    markers.mkdir()
    hooks = repo / ".git" / "evil-hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "reference-transaction", "post-checkout",
                 "pre-auto-gc", "post-rewrite"):
        script = hooks / hook
        script.write_text(f"#!/bin/sh\ntouch '{markers}/hook-{hook}'\n")
        script.chmod(0o755)
    (repo / ".gitattributes").write_text("* diff=evil filter=evil merge=evil\n")

    def touch(what: str, then: str = "false") -> str:
        return f"touch '{markers}/{what}'; {then}"

    config = {
        "core.fsmonitor": touch("fsmonitor"),
        "core.hooksPath": str(hooks),
        "core.pager": touch("pager", "cat"),
        "core.sshCommand": touch("ssh"),
        "core.askPass": touch("askpass"),
        "credential.helper": "!" + touch("credential"),
        "diff.external": touch("external"),
        "diff.evil.textconv": touch("textconv", "cat"),
        "diff.evil.command": touch("diffcommand"),
        "filter.evil.clean": touch("clean", "cat"),
        "filter.evil.smudge": touch("smudge", "cat"),
        "filter.evil.process": touch("process"),
        "merge.evil.driver": touch("merge"),
        "gpg.program": touch("gpg"),
        "log.showSignature": "true",
        "core.untrackedCache": "true",
    }
    for key, value in config.items():
        _git(repo, "config", key, value)


def _diff(repo: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    home = _home(repo.parent)
    return memlens("diff", *args, "--agent", "gemini@0.44+", "--trusted", cwd=repo, home=home,
                   env={"TMPDIR": str(repo.parent / "tmp"), **(env or {})})


def test_diff_runs_no_command_the_repository_configures(root: Path) -> None:
    repo = _repository(root)
    markers = root / "markers"
    _arm(repo, markers)
    (repo / "api" / "GEMINI.md").write_text("# API v2\n")  # a change in the working tree
    (repo / "new.md").write_text("untracked\n")
    for args in ((), ("HEAD~1",), ("HEAD~1", "HEAD")):
        run = _diff(repo, *args)
        assert run.code == 1, run.err  # it ran, and found the changes
    assert sorted(os.listdir(markers)) == []


def test_diff_never_fetches_a_missing_object_from_a_promisor_remote(root: Path) -> None:
    """A partial clone whose `remote.origin.uploadpack` is a command: reading a missing blob
    made git fetch it lazily, running that command. Now one line says to fetch (exit 2)."""
    repo = _repository(root)
    markers = root / "markers"
    markers.mkdir()
    blob = subprocess.run(["git", "rev-parse", "HEAD~1:GEMINI.md"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    for key, value in {"core.repositoryformatversion": "1",
                       "extensions.partialClone": "origin",
                       "remote.origin.url": str(root / "nowhere"),
                       "remote.origin.promisor": "true",
                       "remote.origin.uploadpack": f"touch '{markers}/uploadpack'; false",
                       "protocol.file.allow": "always"}.items():
        _git(repo, "config", key, value)
    run = _diff(repo, "HEAD~1", "HEAD")
    assert os.listdir(markers) == []
    assert run.code == 2
    assert "this clone does not have the contents of its memory files" in run.err


def test_diff_reads_the_repository_it_is_run_in_not_git_dir_from_the_environment(
        root: Path) -> None:
    """GIT_DIR (or GIT_WORK_TREE, GIT_INDEX_FILE, GIT_CONFIG_*) in the environment does not
    send git to another repository and its configuration."""
    repo = _repository(root)
    other = root / "other"
    other.mkdir()
    _git(other, "init", "-q")
    markers = root / "markers"
    markers.mkdir()
    _git(other, "config", "core.fsmonitor", f"touch '{markers}/other'; false")
    run = _diff(repo, "HEAD~1", "HEAD", "--json", env={
        "GIT_DIR": str(other / ".git"), "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": f"touch '{markers}/env'; false"})
    assert os.listdir(markers) == []
    assert run.code == 1, run.err
    assert json.loads(run.out)["repository"] == str(repo)


def test_diff_never_runs_a_git_the_repository_holds(root: Path) -> None:
    """PATH with a relative entry (`bin`, or the empty one that means "."): git runs in the
    repository, so such an entry found the repository's own `bin/git` before."""
    repo = _repository(root)
    markers = root / "markers"
    markers.mkdir()
    fake = repo / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\ntouch '{markers}/fake-git'\nexit 1\n")
    fake.chmod(0o755)
    run = _diff(repo, "HEAD~1", "HEAD", env={"PATH": f"bin::{os.environ['PATH']}"})
    assert os.listdir(markers) == []
    assert run.code == 1, run.err


def _diff_with_git_deadline(repo: Path, seconds: float, *args: str) -> Run:
    """`memlens diff` as its own process, with git rev-parse's deadline (`TIMEOUTS`, 30 s: a
    guard against a hang, never a measure of speed) shortened to `seconds`: what is tested is
    that git is stopped at its deadline, not how long the deadline is."""
    home = _home(repo.parent)
    shortened = ("import sys\n"
                 "from memlens.files import git\n"
                 f"git.TIMEOUTS['rev-parse'] = {seconds!r}\n"
                 "from memlens.cli.main import main\n"
                 "sys.exit(main())\n")
    env = {**os.environ, "HOME": str(home), "GEMINI_CLI_HOME": str(home),
           "TMPDIR": str(repo.parent / "tmp")}
    proc = subprocess.run(
        [sys.executable, "-c", shortened, "diff", *args, "--agent", "gemini@0.44+", "--trusted"],
        cwd=repo, env=env, capture_output=True, stdin=subprocess.DEVNULL, text=True, timeout=60)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def test_diff_stops_a_git_that_waits_on_a_fifo_the_config_includes(root: Path) -> None:
    """`include.path` naming a FIFO (an archive can carry one) kept git, and so `memlens
    diff`, waiting for ever; now git is stopped at its deadline and one line says so."""
    repo = _repository(root)
    fifo = root / "config.fifo"
    os.mkfifo(fifo)
    _git(repo, "config", "include.path", str(fifo))
    try:
        run = _diff_with_git_deadline(repo, 1.0, "HEAD~1", "HEAD")
    finally:
        with contextlib.suppress(OSError):  # let a git still waiting (the old code's) go
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert run.code == 2
    assert run.err == ("memlens: error: git rev-parse did not finish in time and was stopped "
                       "(is one of the repository's git files a FIFO?)\n")


def test_only_read_only_plumbing_goes_through_the_git_runner() -> None:
    from memlens.files.git import git_argv

    argv = git_argv(["ls-files", "-z"])
    assert argv[:2] == ["git", "--no-pager"] and argv[-2:] == ["ls-files", "-z"]
    assert "core.fsmonitor=false" in argv
    for refused in (["show", "HEAD:GEMINI.md"], ["diff"], ["cat-file", "--filters", "x"],
                    ["cat-file", "--textconv", "x"], ["checkout", "."], []):
        with pytest.raises(ValueError):
            git_argv(refused)
