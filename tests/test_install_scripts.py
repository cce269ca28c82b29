"""The install scripts a new user runs first (scripts/demo.sh and what it calls): each install
step, forced to fail (an unreachable registry or index through its environment variable, a
tool missing from PATH, an install that dies), says what failed and what to do, exits non-zero,
and leaves no process behind; a long step prints progress lines that show its own last line.

Every run carries a unique marker in its environment; what is left afterwards is found by
reading /proc/*/environ for it (every descendant inherits it, whatever its process group)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from .dist_support import ROOT, clean_env, copy_sources

pytestmark = pytest.mark.timeout(300)
UNREACHABLE = "http://127.0.0.1:9/"  # the discard port: nothing listens, refused at once


def _as_in_a_terminal() -> None:
    """In the child before it runs: Ctrl-C (SIGINT) reaches a script as in a terminal, even
    when these tests run as a background job, which starts with SIGINT ignored (and bash
    cannot trap a signal ignored on entry)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _left_behind(mark: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"MEMLENS_TEST_MARK={mark}".encode() in environ:
            found.append(f"{entry.name}: {cmdline}")
    return found


def _assert_nothing_left(mark: str) -> None:
    deadline = time.monotonic() + 10
    while (left := _left_behind(mark)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes left behind: {left}"


def _env(tmp: Path, **extra: str) -> tuple[dict[str, str], str]:
    mark = uuid.uuid4().hex
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = clean_env(HOME=str(home), XDG_CACHE_HOME=str(tmp / "cache"),
                    MEMLENS_TEST_MARK=mark, MEMLENS_PROGRESS_SECONDS="1",
                    npm_config_cache=str(tmp / "npm-cache"), npm_config_fetch_retries="0",
                    npm_config_update_notifier="false", **extra)
    return env, mark


def _run(args: list[str], env: dict[str, str], cwd: Path = ROOT,
         timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _assert_loud_failure(result: subprocess.CompletedProcess[str], prefix: str,
                         what: str) -> None:
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert f"{prefix}: FAILED: {what}" in result.stderr, out
    assert f"{prefix}: what to do: " in result.stderr, out


def _path_without(tmp: Path, *tools: str) -> str:
    """A PATH with everything of /usr/bin and /bin but `tools`."""
    folder = tmp / "bin-without"
    folder.mkdir(exist_ok=True)
    for source in (Path("/usr/bin"), Path("/bin")):
        for entry in source.iterdir():
            target = folder / entry.name
            if entry.name not in tools and not target.exists():
                target.symlink_to(entry)
    return str(folder)


def test_bootstrap_with_an_unreachable_index_says_so(tmp_path: Path) -> None:
    tree = copy_sources(tmp_path / "tree")
    env, mark = _env(tmp_path, PIP_INDEX_URL=f"{UNREACHABLE}simple", PIP_RETRIES="0",
                     PIP_TIMEOUT="3", PIP_NO_CACHE_DIR="1")
    result = _run(["scripts/bootstrap.sh"], env, cwd=tree)
    _assert_loud_failure(result, "bootstrap", "pip: install memlens")
    assert "package index" in result.stderr and ".venv/pip-install.log" in result.stderr
    _assert_nothing_left(mark)


def test_bootstrap_without_python_says_which_python(tmp_path: Path) -> None:
    env, _mark = _env(tmp_path, PYTHON=str(tmp_path / "no-such-python"))
    result = _run(["scripts/bootstrap.sh"], env)
    assert result.returncode == 1
    assert "no-such-python' on PATH" in result.stderr and "what to do" in result.stderr


def test_node_setup_without_node_says_what_to_install(tmp_path: Path) -> None:
    env, _mark = _env(tmp_path, PATH=_path_without(tmp_path, "node", "npm", "npx"))
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    shutil.copytree(ROOT / "scripts", tree / "scripts", dirs_exist_ok=True)
    result = _run(["scripts/node-setup.sh"], env, cwd=tree)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "needs Node 20+ and npm on PATH" in result.stderr
    assert "node-setup: what to do: install Node.js" in result.stderr


def test_node_setup_with_an_unreachable_registry_says_so(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "scripts", tree / "scripts")
    env, mark = _env(tmp_path, npm_config_registry=UNREACHABLE)
    result = _run(["scripts/node-setup.sh"], env, cwd=tree)
    _assert_loud_failure(result, "node-setup", "npm ci")
    assert "npm ping" in result.stderr
    _assert_nothing_left(mark)


def test_vscode_install_with_an_unreachable_registry_says_so(tmp_path: Path) -> None:
    env, mark = _env(tmp_path, npm_config_registry=UNREACHABLE, MEMLENS_SKIP_APT="1")
    result = _run(["scripts/vscode/install.sh"], env)
    _assert_loud_failure(result, "memlens/vscode", "[1/4] npm install node@")
    assert "npm ping" in result.stderr
    _assert_nothing_left(mark)


def test_agents_install_with_an_unreachable_registry_says_so(tmp_path: Path) -> None:
    env, mark = _env(tmp_path, npm_config_registry=UNREACHABLE)
    result = _run(["scripts/agents/install.sh", "codex@0.169.0"], env)
    _assert_loud_failure(result, "memlens/agents", "npm install @openai/codex@0.169.0")
    assert result.stdout == ""  # stdout is only for the NAME@VERSION<TAB>path lines
    _assert_nothing_left(mark)


def _fake_npm(tmp: Path, body: str) -> str:
    """A PATH whose `npm` is a script running `body` (the real node stays)."""
    folder = tmp / "fake-bin"
    folder.mkdir(exist_ok=True)
    npm = folder / "npm"
    npm.write_text(f"#!/bin/bash\n{body}\n")
    npm.chmod(0o755)
    return f"{folder}:/usr/bin:/bin"


def test_a_silent_step_still_reports_progress_and_goes_on(tmp_path: Path) -> None:
    # The cold-machine failure of issue 24: a progress line taken while the step had written
    # nothing killed the script without a word. Here npm writes nothing for 3 s, then succeeds
    # (without installing anything, so the check after it fails, loudly).
    env, mark = _env(tmp_path, MEMLENS_SKIP_APT="1",
                     PATH=_fake_npm(tmp_path, "sleep 3; exit 0"))
    result = _run(["scripts/vscode/install.sh"], env)
    assert "[1/4] npm install node@24.21.0: 1 s" in result.stdout, result.stdout
    assert "(last:" not in result.stdout  # nothing of an earlier step shown as this one's
    assert "[1/4] npm install node@24.21.0 done in" in result.stdout, result.stdout
    assert result.returncode == 1
    assert "installed but no bin/node" in result.stderr and "what to do" in result.stderr
    _assert_nothing_left(mark)


def test_a_failing_step_leaves_none_of_its_children(tmp_path: Path) -> None:
    # npm starts a child of its own that outlives it, then fails
    env, mark = _env(tmp_path, MEMLENS_SKIP_APT="1", PATH=_fake_npm(
        tmp_path, "sleep 600 & echo 'npm error network: fake failure'; exit 7"))
    result = _run(["scripts/vscode/install.sh"], env)
    _assert_loud_failure(result, "memlens/vscode", "[1/4] npm install node@")
    assert "exit code 7" in result.stderr and "fake failure" in result.stderr
    _assert_nothing_left(mark)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stopping_an_install_ends_every_process_it_started(tmp_path: Path,
                                                           sig: signal.Signals) -> None:
    env, mark = _env(tmp_path, MEMLENS_SKIP_APT="1", PATH=_fake_npm(
        tmp_path, "echo 'fake npm is working'; sleep 600 & sleep 600; wait"))
    log = tmp_path / "out.txt"
    with open(log, "w") as out:
        process = subprocess.Popen(["bash", "scripts/vscode/install.sh"], cwd=ROOT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, preexec_fn=_as_in_a_terminal)
        try:
            deadline = time.monotonic() + 60
            while "(last: fake npm is working)" not in log.read_text():
                assert time.monotonic() < deadline, log.read_text()
                assert process.poll() is None, log.read_text()
                time.sleep(0.2)
            process.send_signal(sig)
            code = process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert code == 128 + sig.value, log.read_text()
    assert "stopped (signal); ending what it had started" in log.read_text()
    _assert_nothing_left(mark)


def test_the_demo_names_the_step_that_failed(tmp_path: Path) -> None:
    tree = copy_sources(tmp_path / "tree")
    env, mark = _env(tmp_path, PYTHON=str(tmp_path / "no-such-python"))
    result = _run(["scripts/demo.sh"], env, cwd=tree)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "== [1/5] Python packages" in result.stdout
    assert "no-such-python' on PATH" in result.stderr
    assert "demo: step [1/5] Python packages" in result.stderr
    assert "demo: what to do: fix what it says, then run bash scripts/demo.sh again" \
        in result.stderr
    assert not (tree / ".venv").exists()
    _assert_nothing_left(mark)


def test_no_install_script_hides_a_failing_pipeline() -> None:
    # Under `set -o pipefail`, `grep ... | tail` fails when grep finds nothing: every pipeline
    # in a progress line must tolerate that (scripts/lib/steps.sh wraps each part in
    # `{ ...; || true; }`); the scripts use the one progress loop of steps.sh, no copy of it.
    for script in ("bootstrap.sh", "node-setup.sh", "package-vsix.sh", "demo.sh",
                   "vscode/install.sh", "agents/install.sh"):
        text = (ROOT / "scripts" / script).read_text()
        assert "scripts/lib/steps.sh" in text or "lib/steps.sh" in text, script
        assert "kill -0" not in text, f"{script} has a progress loop of its own"
    assert os.access(ROOT / "scripts" / "lib" / "steps.sh", os.R_OK)


def test_packaging_without_vsce_says_to_install_the_node_packages(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(ROOT / "package.json", tree / "package.json")
    shutil.copytree(ROOT / "scripts", tree / "scripts")
    env, mark = _env(tmp_path)
    result = _run(["scripts/package-vsix.sh"], env, cwd=tree)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "package-vsix: node_modules/.bin/vsce is missing" in result.stderr
    assert "package-vsix: what to do: run bash scripts/node-setup.sh first" in result.stderr
    _assert_nothing_left(mark)


_NOISY_SERVER = r"""
const http = require("http");
const port = +process.argv[process.argv.indexOf("--bind-addr") + 1].split(":")[1];
console.log("[info] a code-server line that looks like trouble: ERR something");
http.createServer((_, res) => res.end("ok")).listen(port, "127.0.0.1", () => {
  setTimeout(() => console.error("[error] a later line of code-server's own"), 300);
});
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_start_prints_the_url_and_how_to_stop_last(tmp_path: Path) -> None:
    # The demo's last step: code-server's own lines go to MEMLENS_SERVER_LOG, so what the user
    # sees last is the URL, Ctrl-C and how to open their own folder (a stand-in code-server
    # that logs before and after it is ready; Ctrl-C then ends it and removes its state).
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "scripts", tree / "scripts")
    entry = tmp_path / "fake-code-server.js"
    entry.write_text(_NOISY_SERVER)
    (tree / "scripts" / "vscode" / "install.sh").write_text(
        f"echo MEMLENS_NODE={shutil.which('node')}\n"
        f"echo MEMLENS_CODE_SERVER_ENTRY={entry}\n")
    workspace = tmp_path / "repo"
    workspace.mkdir()
    server_log = tmp_path / "server.log"
    env, mark = _env(tmp_path, MEMLENS_SERVER_LOG=str(server_log), TMPDIR=str(tmp_path))
    out = tmp_path / "out.txt"
    with open(out, "w") as sink:
        process = subprocess.Popen(["bash", "scripts/vscode/start.sh", str(workspace),
                                    str(_free_port())],
                                   cwd=tree, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, preexec_fn=_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 60
        while "Stop it: Ctrl-C" not in out.read_text():
            assert process.poll() is None, out.read_text()
            assert time.monotonic() < deadline, out.read_text()
            time.sleep(0.1)
        while "a later line" not in server_log.read_text():
            assert time.monotonic() < deadline, server_log.read_text()
            time.sleep(0.1)
        lines = [line.strip() for line in out.read_text().splitlines() if line.strip()]
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert lines[-4].startswith("http://127.0.0.1:"), lines
    assert lines[-3] == "Stop it: Ctrl-C here.", lines
    assert lines[-2].startswith("Your own folder instead: bash scripts/vscode/start.sh"), lines
    assert "ERR something" in server_log.read_text()
    assert "ERR something" not in out.read_text()
    assert not list(tmp_path.glob("memlens-vscode.*")), "the state folder was left behind"
    _assert_nothing_left(mark)
