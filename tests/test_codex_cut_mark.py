"""Where the editor marks Codex's cut, checked against what real Codex 0.169.0 sent (the
stored goldens of the budget scenarios, captured by the conformance harness): the
`payload-budget-exceeded` warning `memlens check --agent codex` reports sits in the file the
cut falls in, at the first character Codex did not send whole, and names every later file on
the chain as not sent. Runs offline from the goldens (no agent, no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.scenarios import build_tree, read_golden, scenario_by_id

SCENARIOS = ["codex-budget-one-file", "codex-budget-chain", "codex-budget-multibyte",
             "codex-budget-chain-cut-lost", "codex-budget-chain-cut-three-byte"]
HEAD_END, TAIL = "<INSTRUCTIONS>\n", "\n</INSTRUCTIONS>"
PROJECT_DOCS = "\n\n--- project-doc ---\n\n"


def _chain(ws: Path, cwd: str) -> list[Path]:
    """The AGENTS.md files from the workspace (the git root) down to `cwd`."""
    folders = [ws]
    for part in Path(cwd).parts:
        if part != ".":
            folders.append(folders[-1] / part)
    return [f / "AGENTS.md" for f in folders if (f / "AGENTS.md").is_file()]


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_the_cut_is_marked_where_real_codex_cut(scenario_id: str, tmp_path: Path) -> None:
    golden = read_golden("codex", "0.169.0", scenario_id)
    assert golden is not None, f"no golden for {scenario_id}"
    (sent,) = [p["text"] for p in golden["startup"]]
    instructions = sent[sent.index(HEAD_END) + len(HEAD_END):sent.rindex(TAIL)]
    instructions = instructions.partition(PROJECT_DOCS)[2] or instructions  # after the global
    scenario = scenario_by_id(scenario_id)
    ws, home = tmp_path / "ws", tmp_path / "home"
    build_tree(ws, scenario.tree)
    build_tree(home, scenario.home or {})
    chain = _chain(ws, scenario.cwd)
    # Walk what Codex sent: whole files joined by a blank line, until one is not whole.
    rest, cut_file = instructions, None
    for index, doc in enumerate(chain):
        text = doc.read_text(encoding="utf-8")
        if rest == text or rest.startswith(text + "\n\n"):
            rest = rest[len(text) + 2:]
            continue
        cut_file, lost = doc, chain[index + 1:]
        break
    assert cut_file is not None, "the golden shows no cut"
    kept = rest.removesuffix("\ufffd")
    content = cut_file.read_text(encoding="utf-8")
    assert content.startswith(kept) and kept != content
    line, col = kept.count("\n") + 1, len(kept) - (kept.rfind("\n") + 1) + 1

    env = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME", "MEMLENS_AGENTS")}
    run = subprocess.run([sys.executable, "-m", "memlens", "check", str(ws), "--home", str(home),
                          "--agent", "codex", "--format", "json"],
                         capture_output=True, text=True, env=env, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    (mark,) = [d for d in json.loads(run.stdout) if d["code"] == "payload-budget-exceeded"]
    assert (mark["path"], mark["line"], mark["col"]) == (str(cut_file), line, col)
    # The bytes: the budget (32 KiB) less the whole files before it were sent of this one.
    size = len(content.encode())
    sent_bytes = 32 * 1024 - sum(len(d.read_bytes()) for d in chain[:chain.index(cut_file)])
    assert len(kept.encode()) <= sent_bytes < len(kept.encode()) + 4
    assert f"the last {size - sent_bytes:,} of this file's {size:,} bytes" in mark["message"]
    for path in lost:
        assert str(path) in mark["detail"]
    if lost:
        assert f"{len(lost)} later file" in mark["message"]
        for path in lost:  # each file dropped, by name, in the message itself
            assert os.path.relpath(path, cut_file.parent) in mark["message"]
