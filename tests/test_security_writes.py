"""Issue 15, hostile repositories and hostile models: writes, secrets, output, streams.

Every test reproduces the attack for real: the `memlens` command line as a subprocess (several
at once where the finding is a race), a writer killed with SIGKILL, a pseudo-terminal answering
the approval prompt, or the chat against the fake Gemini server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memlens.agent.chat import ChatSession
from memlens.agent.config import ChatSettings
from memlens.agent.context import AgentContext
from memlens.agent.records import chats_dir
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.model import MemorySettings
from memlens.protocol.chat import ApprovalRequest, ApprovalResponse, ChatEvent

from .conftest import build_tree
from .fake_gemini import FakeGemini, error, function_call, hang, text

MEMLENS = Path(sys.executable).parent / "memlens"
_SCRUBBED = ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
             "GEMINI_API_KEY", "GOOGLE_API_KEY", "MEMLENS_GEMINI_BASE_URL")


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """A scrubbed environment with a throw-away HOME; the workspace is trusted explicitly."""
    environ = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    environ.update({"HOME": str(home), "GEMINI_CLI_HOME": str(home),
                    "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    environ.update(extra)
    return environ


# --- 15: the project registry is created and updated under its lock ----------------------

def test_concurrent_project_adds_on_a_fresh_home_all_land(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    env = cli_env(home)
    procs = [subprocess.Popen([str(MEMLENS), "add", f"fact number {n}", "--scope", "project"],
                              cwd=project, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(6)]
    results = [(p.wait(timeout=100), p.stderr.read() if p.stderr else "") for p in procs]
    for proc in procs:
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert [code for code, _ in results] == [0] * 6, results
    registry = json.loads((home / ".gemini" / "projects.json").read_text())
    assert registry == {"projects": {str(project.resolve()): "proj"}}
    memory = home / ".gemini" / "tmp" / "proj" / "memory" / "MEMORY.md"
    assert sorted(memory.read_text().splitlines()) == sorted(
        f"- fact number {n}" for n in range(6))
    # No temp file or lock of the registry is left behind.
    assert sorted(p.name for p in (home / ".gemini").iterdir()) == ["history", "projects.json",
                                                                 "tmp"]


# --- 20: a writer killed mid-write leaves nothing behind for long ------------------------

SLOW_WRITER = """
import sys
import threading
from memlens.agents.gemini.writing import atomic_write
while True:
    atomic_write(sys.argv[1], "## Gemini Added Memories\\n- killed\\n" + "x" * 60_000_000)
"""


def test_a_killed_writers_temp_file_is_removed_by_the_next_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    gemini = home / ".gemini"
    gemini.mkdir(parents=True)
    (tmp_path / "proj").mkdir()
    target = gemini / "GEMINI.md"
    target.write_text("# Mine\n")
    writer = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(target)],
                              env=cli_env(home))
    try:
        deadline = time.monotonic() + 60
        while not [n for n in os.listdir(gemini) if n != "GEMINI.md" and "lock" not in n]:
            assert time.monotonic() < deadline, "the writer never created its temp file"
            assert writer.poll() is None
            time.sleep(0.005)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert len(os.listdir(gemini)) > 1  # the killed writer's temp file (and lock) remain
    run = subprocess.run([str(MEMLENS), "add", "after the crash"], cwd=tmp_path / "proj",
                         env=cli_env(home), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert os.listdir(gemini) == ["GEMINI.md"]  # no temp file, no lock sidecar
    text = target.read_text()
    assert text.endswith("## Gemini Added Memories\n- after the crash\n")
    assert text.startswith("# Mine\n") or text.startswith("## Gemini Added Memories\n- killed")


def test_threads_of_one_process_writing_one_file_lose_nothing(tmp_path: Path) -> None:
    # The LSP server writes from worker threads (chat tools, Add Memory) at once.
    from memlens.agents.gemini.writing import save_memory

    target = tmp_path / "GEMINI.md"

    def write(who: int) -> None:
        for i in range(15):
            assert save_memory(f"thread {who} fact {i}", str(target)).success

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    facts = [line for line in target.read_text().splitlines() if line.startswith("- ")]
    assert sorted(facts) == sorted(f"- thread {n} fact {i}" for n in range(4) for i in range(15))
    assert os.listdir(tmp_path) == ["GEMINI.md"]


# --- 17: manual approval in a terminal -----------------------------------------------------

KEY = "AIzaWRITESTESTKEY-0123456789abcdefghijkl"


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


@pytest.fixture
def chat_ws(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    build_tree(root, {"ws/.git": None, "ws/GEMINI.md": "# Rules\n", "home/.gemini": None})
    return root / "ws"


def chat_env(ws: Path, fake: FakeGemini, **extra: str) -> dict[str, str]:
    return cli_env(ws.parent / "home", GEMINI_API_KEY=KEY, MEMLENS_GEMINI_BASE_URL=fake.base_url,
                   MEMLENS_RETRY_INITIAL_DELAY_MS="5", MEMLENS_RETRY_MAX_ATTEMPTS="3", **extra)


def _read_until(fd: int, needle: bytes, seen: bytearray, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return needle in seen
        if not data:
            return needle in seen
        seen += data
    return True


def _chat_in_a_pty(ws: Path, env: dict[str, str], prompt: str,
                   answer: bytes) -> tuple[int, str]:
    """`memlens chat --approval-mode manual` with a pseudo-terminal as its controlling
    terminal (and stdin/stdout/stderr); `answer` is typed at the approval prompt."""
    pid, master = pty.fork()
    if pid == 0:  # the child: exec at once
        os.chdir(ws)
        os.execve(str(MEMLENS), [str(MEMLENS), "chat", prompt, "--approval-mode", "manual"],
                  env)
    seen = bytearray()
    try:
        asked = _read_until(master, b"Apply?", seen, 60)
        if asked:
            os.write(master, answer)
        _read_until(master, b"\x00never", seen, 60 if asked else 5)
    finally:
        try:
            _, status = os.waitpid(pid, os.WNOHANG)
            if _ == 0:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
        finally:
            os.close(master)
    return os.waitstatus_to_exitcode(status), seen.decode("utf-8", "replace")


@pytest.mark.parametrize(("answer", "written"), [(b"y\n", True), (b"n\n", False)])
def test_manual_approval_is_asked_and_answered_on_the_terminal(
        chat_ws: Path, fake: FakeGemini, answer: bytes, written: bool) -> None:
    target = chat_ws / "approved.md"
    # The model's content tries to repaint the line above the question (ESC [1A ESC [2K).
    content = "ok\n\x1b[1A\x1b[2Kharmless\n"
    fake.enqueue(function_call("write_file", {"file_path": str(target), "content": content}),
                 text("Finished.\x1b]0;retitled by the model\x07"))
    code, screen = _chat_in_a_pty(chat_ws, chat_env(chat_ws, fake), "write it", answer)
    assert "Apply? [y]es, [a]lways for this tool, [N]o: " in screen, screen
    assert "+ok" in screen  # the diff was shown before the question, escapes made visible
    assert "+\\e[1A\\e[2Kharmless" in screen and "\x1b[1A" not in screen
    assert code == 0, screen
    assert target.exists() is written, screen
    assert not written or target.read_text() == content
    # The model's own text cannot drive the terminal either.
    assert "Finished.\\e]0;retitled by the model\\x07" in screen and "\x1b]0" not in screen


def test_manual_approval_falls_back_to_stdin_when_it_is_a_terminal(
        chat_ws: Path, fake: FakeGemini) -> None:
    # No controlling terminal (a new session), but standard input is one.
    target = chat_ws / "stdin.md"
    fake.enqueue(function_call("write_file", {"file_path": str(target), "content": "ok\n"}),
                 text("Finished."))
    master, slave = pty.openpty()
    os.write(master, b"y\n")  # typed ahead: the terminal keeps it until it is read
    try:
        run = subprocess.run([str(MEMLENS), "chat", "write it", "--approval-mode", "manual"],
                             cwd=chat_ws, env=chat_env(chat_ws, fake), stdin=slave,
                             capture_output=True, text=True, timeout=60,
                             start_new_session=True)
    finally:
        os.close(slave)
        os.close(master)
    assert run.returncode == 0, run.stderr
    assert "Apply? [y]es" in run.stderr
    assert target.read_text() == "ok\n"


def test_manual_approval_without_any_terminal_says_so_and_denies(
        chat_ws: Path, fake: FakeGemini) -> None:
    target = chat_ws / "never.md"
    fake.enqueue(function_call("write_file", {"file_path": str(target), "content": "x\n"}),
                 text("Not written."))
    run = subprocess.run([str(MEMLENS), "chat", "write it", "--approval-mode", "manual"],
                         cwd=chat_ws, env=chat_env(chat_ws, fake), stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=60, start_new_session=True)
    assert run.returncode == 0, run.stderr
    assert "manual approval needs a terminal" in run.stderr
    assert "[write_file] refused" in run.stderr
    assert not target.exists()


# --- 13: a model stream that stalls ---------------------------------------------------------

def chat_context(ws: Path, fake: FakeGemini, **chat: Any) -> AgentContext:
    home = str(ws.parent / "home")
    settings = MemorySettings(home=home, discover_gemini_extensions=False, trusted=True)
    engine = MemoryEngine(settings)
    startup = engine.load(str(ws))
    chat_settings = ChatSettings(base_url=fake.base_url, initial_delay_ms=5, max_attempts=3,
                                 **chat)
    return AgentContext(settings=settings, chat=chat_settings, startup=startup, jit=None,
                        skills=[], transcripts=chats_dir(home, str(ws)), api_key=KEY)


class Events:
    def __init__(self) -> None:
        self.events: list[ChatEvent] = []

    async def emit(self, event: ChatEvent) -> None:
        self.events.append(event)

    async def approve(self, request: ApprovalRequest) -> ApprovalResponse:
        return ApprovalResponse(outcome="deny")

    def of(self, kind: str) -> list[ChatEvent]:
        return [e for e in self.events if e.kind == kind]


def send_within(session: ChatSession, prompt: str, events: Events, seconds: float) -> str:
    """One turn; a turn still running after `seconds` fails the test (never blocks CI)."""
    async def turn() -> str:
        return await asyncio.wait_for(session.send(prompt, events.emit, events.approve), seconds)

    return asyncio.run(turn())


def test_a_stream_that_sends_headers_then_nothing_ends_the_turn(chat_ws: Path,
                                                                fake: FakeGemini) -> None:
    for _ in range(3):  # every attempt stalls after the headers
        fake.enqueue(hang(60) + text("never"))
    session = ChatSession(chat_context(chat_ws, fake, stall_timeout_ms=300))
    events = Events()
    started = time.monotonic()
    assert send_within(session, "hi", events, 30) == "error"
    assert time.monotonic() - started < 20
    errors = events.of("error")
    assert [e.retryable for e in errors] == [True, True, False]  # retried as network errors
    assert "stalled" in (errors[-1].message or "") and "0.3 s" in (errors[-1].message or "")
    assert events.events[-1].kind == "done" and events.events[-1].reason == "error"
    assert len(fake.requests) == 3
    # The stalled connections were closed, and the session survives.
    deadline = time.monotonic() + 10
    while not all(r.disconnected for r in fake.requests):
        assert time.monotonic() < deadline, [r.outcome for r in fake.requests]
        time.sleep(0.05)
    fake.enqueue(text("Back."))
    again = Events()
    assert send_within(session, "again", again, 30) == "done"
    assert "".join(e.text or "" for e in again.of("text")) == "Back."


def test_a_stream_that_stalls_midway_is_not_resumed(chat_ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(text("Partial") + hang(60) + text("never"))
    session = ChatSession(chat_context(chat_ws, fake, stall_timeout_ms=300))
    events = Events()
    assert send_within(session, "hi", events, 30) == "error"
    assert [e.kind for e in events.events] == ["text", "error", "done"]
    assert len(fake.requests) == 1


def test_memlens_chat_gives_up_on_a_stalled_stream(chat_ws: Path, fake: FakeGemini) -> None:
    for _ in range(3):
        fake.enqueue(hang(60) + text("never"))
    env = chat_env(chat_ws, fake, MEMLENS_STALL_TIMEOUT_MS="300")
    run = subprocess.run([str(MEMLENS), "chat", "hello", "--approval-mode", "deny"],
                         cwd=chat_ws, env=env, capture_output=True, text=True, timeout=30)
    assert run.returncode == 1, run.stderr
    assert "stalled" in run.stderr.splitlines()[-1]


# --- 16: every key the process knows is redacted everywhere ---------------------------------

# No Google shape: only knowing the key (from the environment) can keep it out of output.
ENV_KEY = "env-secret-not-a-google-shape-7f3a9c2e"


def _files_under(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("variable", ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
def test_a_key_from_the_environment_never_reaches_output_or_transcripts(
        chat_ws: Path, variable: str) -> None:
    home = chat_ws.parent / "home"
    with FakeGemini(expect_key=ENV_KEY) as fake:
        fake.enqueue(
            error(429, f"Quota exceeded for API key {ENV_KEY}"),  # the endpoint echoes it
            function_call("write_file", {"file_path": str(chat_ws / "k.md"),
                                         "content": f"key={ENV_KEY}\n"}),
            # The model repeats it, split across chunks as a real stream splits text.
            text("Your key is ", ENV_KEY[:9], ENV_KEY[9:21], ENV_KEY[21:] + ", done."),
            error(400, f"API key not valid: {ENV_KEY}"))
        env = chat_env(chat_ws, fake)
        del env["GEMINI_API_KEY"]
        env[variable] = ENV_KEY
        first = subprocess.run([str(MEMLENS), "chat", "write k.md", "--approval-mode", "deny"],
                               cwd=chat_ws, env=env, capture_output=True, text=True,
                               timeout=60)
        second = subprocess.run([str(MEMLENS), "chat", "--json", "again"], cwd=chat_ws,
                                env=env, capture_output=True, text=True, timeout=60)
        assert all(r.api_key_matches for r in fake.requests)
    assert first.returncode == 0, first.stderr
    assert "Quota exceeded for API key [REDACTED]" in first.stderr
    assert first.stdout == "Your key is [REDACTED], done.\n"
    assert second.returncode == 1
    assert "API key not valid: [REDACTED]" in second.stdout
    assert "[write_file]" in first.stderr and "[REDACTED]" in first.stderr
    everything = first.stdout + first.stderr + second.stdout + second.stderr
    assert ENV_KEY not in everything
    transcripts = _files_under(home / ".gemini" / "tmp")
    assert "Your key is [REDACTED]" in transcripts and ENV_KEY not in transcripts


def test_a_key_split_across_streamed_chunks_is_redacted_in_events(chat_ws: Path,
                                                                  fake: FakeGemini) -> None:
    fake.enqueue(text("key: ", KEY[:4], KEY[4:30], KEY[30:], " (", KEY[:3], ") end"))
    session = ChatSession(chat_context(chat_ws, fake))
    events = Events()
    assert send_within(session, "hi", events, 30) == "done"
    shown = "".join(e.text or "" for e in events.of("text"))
    assert shown == "key: [REDACTED] (AIz) end"


# --- 20: text output cannot be forged by a name; JSON output is valid UTF-8 ----------------

EVIL = "evil\n::error file=x.py,line=1::forged"


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    build_tree(root, {
        "home/.gemini": None,
        "proj/.git": None,
        "proj/GEMINI.md": "Rules\n",
        f"proj/{EVIL}/GEMINI.md": "Broken @./missing.md\n",
        "proj/.gemini/skills/demo/SKILL.md": "---\nname: demo\ndescription: |\n  Fine.\n"
                                             "  ::warning::forged by a description\n---\nBody\n",
    })
    bad = os.path.join(os.fsencode(root / "proj"), b"bad\xff")
    os.mkdir(bad)
    with open(os.path.join(bad, b"GEMINI.md"), "wb") as handle:
        handle.write(b"Not UTF-8 folder\n")
    return root / "proj"


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(MEMLENS), *args], cwd=project, env=cli_env(project.parent / "home"),
                          capture_output=True, timeout=60)


def test_text_output_quotes_paths_that_would_forge_lines(hostile_tree: Path) -> None:
    listed = _run(hostile_tree, "list", ".", "--mode", "classic")
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.decode("utf-8").splitlines()  # valid UTF-8
    assert header.split() == ["tier", "chars", "tokens", "path"]
    assert len(lines) == 3 and all(line.startswith("project ") for line in lines), lines
    assert f'"{hostile_tree}/evil\\n::error file=x.py,line=1::forged/GEMINI.md"' in lines[2]
    assert f'"{hostile_tree}/bad\\xff/GEMINI.md"' in lines[1]

    checked = _run(hostile_tree, "check", ".", "--mode", "classic")
    assert checked.returncode == 1
    (line,) = checked.stdout.decode("utf-8").splitlines()
    assert line.startswith('"evil\\n::error file=x.py,line=1::forged/GEMINI.md":1:8: error[')

    github = _run(hostile_tree, "check", ".", "--mode", "classic", "--format", "github")
    (annotation,) = github.stdout.decode("utf-8").splitlines()
    # GitHub's own escaping of a property (%, CR, LF, ':' and ','): one annotation, one file.
    assert annotation.startswith("::error file=evil%0A%3A%3Aerror file=x.py%2Cline=1%3A%3A"
                                 "forged/GEMINI.md,line=1,col=8,")

    skills = _run(hostile_tree, "skills", "list")
    shown = skills.stdout.decode("utf-8").splitlines()
    # (a block scalar ending the frontmatter keeps its line break, as js-yaml reads it)
    assert shown[0] == "demo (workspace) — Fine.\\n::warning::forged by a description\\n", shown
    assert not any(line.startswith("::") for line in shown)


def test_json_output_is_utf8_and_encodes_undecodable_names_reversibly(
        hostile_tree: Path) -> None:
    from urllib.parse import unquote_to_bytes

    listed = _run(hostile_tree, "list", ".", "--mode", "classic", "--json")
    assert listed.returncode == 0, listed.stderr
    files = [f["path"] for f in json.loads(listed.stdout.decode("utf-8"))["files"]]
    assert files[2] == f"{hostile_tree}/{EVIL}/GEMINI.md"  # JSON escapes the newline itself
    uri = files[1]
    assert uri == f"file://{hostile_tree}/bad%FF/GEMINI.md"
    raw = unquote_to_bytes(uri.removeprefix("file://"))
    assert raw == os.fsencode(hostile_tree) + b"/bad\xff/GEMINI.md" and os.path.exists(raw)
    shown = _run(hostile_tree, "show", ".", "--mode", "classic", "--json")
    data = json.loads(shown.stdout.decode("utf-8"))
    assert f"file://{hostile_tree}/bad%FF/GEMINI.md" in data["files"]
    assert f"--- Context from: {hostile_tree}/bad\ufffd/GEMINI.md ---" in data["content"]


def test_concurrent_sessions_updating_the_transcript_index_lose_nothing(tmp_path: Path) -> None:
    # Two chats (the editor's and a terminal's, or two panels of the server) end turns at once.
    from memlens.agent.records import Redactor, Transcript, list_sessions

    folder = str(tmp_path / "chats")
    os.makedirs(folder)  # a session's first record creates it
    failures: list[BaseException] = []

    def finish_turns(n: int) -> None:
        transcript = Transcript(folder, f"session{n}", Redactor())
        try:
            for turn in range(10):
                transcript.update_index(f"chat {n}", f"turn {turn}", turn + 1)
        except BaseException as err:
            failures.append(err)

    threads = [threading.Thread(target=finish_turns, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    sessions = {s.session_id: s.message_count for s in list_sessions(folder)}
    assert sessions == {f"session{n}": 10 for n in range(6)}


def test_a_key_cut_by_truncation_is_still_hidden(chat_ws: Path, fake: FakeGemini,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # read_file of a long .env: the tool output is cut at 4,000 characters, inside the key.
    monkeypatch.setenv("GEMINI_API_KEY", ENV_KEY)
    env_file = chat_ws / "settings.env"
    env_file.write_text("#" * 3980 + f"\nKEY={ENV_KEY}\n")
    fake.enqueue(function_call("read_file", {"absolute_path": str(env_file)}), text("Read."))
    session = ChatSession(chat_context(chat_ws, fake))
    events = Events()
    assert send_within(session, "read it", events, 30) == "done"
    (result,) = events.of("toolResult")
    assert (result.output or "").endswith("\nKEY=[REDACTED]")
    stored = _files_under(chat_ws.parent / "home" / ".gemini" / "tmp")
    assert ENV_KEY[:6] not in stored
