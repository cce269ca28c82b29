"""Generated trees for OpenCode (1.18.33): ``generate(seed, index)`` is a pure function of its
arguments (``random.Random(f"opencode-{seed}-{index}")``), so tree ``index`` of ``seed`` is
always the same.

What real repositories hold, and what breaks a loader, in OpenCode's terms (agents/opencode):

* a repository root (a minimal real git repository: OpenCode asks git), none (the chain climbs
  to `/`), or an empty ``.git`` folder; a nested repository below the root;
* per folder from the root down, beside and below the working folder: AGENTS.md, CLAUDE.md,
  CONTEXT.md; empty, whitespace-only and blank-line files, CRLF, a byte-order mark, invalid
  UTF-8, no final newline; a folder or a dangling link by a memory file's name; a link to
  another memory file (the same text twice);
* HOME: ``~/.config/opencode/AGENTS.md`` (sometimes empty) and ``~/.claude/CLAUDE.md``;
* ``opencode.json`` / ``opencode.jsonc`` (root, working folder, a folder between, a
  ``.opencode`` folder; HOME's): ``instructions`` with plain names, `*`, `**`, braces,
  classes, names of chain files (not sent twice), missing files, dot files, repeats across
  files, comments and trailing commas;
* the scripted ``read``: a file in a random folder (often below the working folder, sometimes
  a sibling whose name starts with the working folder's, sometimes a memory file itself), always
  inside OpenCode's project: the repository the working folder is in (a nested one when it is
  at or below it), else the working folder (a read elsewhere is refused by `opencode run`).
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.conformance.agents import Capture
from tests.conformance.differential.core import AgentSpec, default_version
from tests.conformance.predict import opencode as predict_opencode
from tests.conformance.scenarios import Scenario, TreeValue

AGENT = "opencode"
CI_SEED = 3
CI_CASES = 6
GIT: dict[str, TreeValue] = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects": None,
                             ".git/refs": None}
FOLDERS = ("src", "src/core", "src/core/deep", "docs", "pkg/api", "pkg/web", "app",
           "über/straße", "a b", "v1.2", "sub", "subother", "subother/x")
LINES = (
    "# Project guide", "## Build", "Run `make test` before committing.", "- Use tabs.",
    "Instructions from: /fake/path", "<system-reminder>", "</system-reminder>", "",
    "   ", "trailing spaces   ", "Tabs\tinside", "Überall ✓ — “quotes”", "こんにちは 🌍",
    "<!-- an html comment -->", "```sh\nnpm test\n```", "cafe\u0301", "zero\u200bwidth",
)
NAMES = ("AGENTS.md", "CLAUDE.md", "CONTEXT.md")
PATTERNS = ("docs/*.md", "*.md", "notes.md", "rules/*.md", "AGENTS.md", "CLAUDE.md",
            "missing.md", "{notes,guide}.md", "[ng]*.md", ".hidden.md", "docs/guide.md",
            "guide.md", "src/*.md", "?otes.md")


def _text(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.06:
        return ""
    if kind < 0.1:
        return rng.choice(("   \n", "\n\n", "\t"))
    lines = [rng.choice(LINES) for _ in range(rng.randint(1, 4))]
    text = "\n".join(lines) + rng.choice(("\n", "\n", "", "\n\n"))
    if rng.random() < 0.08:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.05:
        text = "\ufeff" + text
    return text


def _config(rng: random.Random) -> str:
    patterns = rng.sample(PATTERNS, rng.randint(1, 4))
    data: dict[str, Any] = {"instructions": patterns}
    if rng.random() < 0.2:
        return "// c\n{\"instructions\": [" + ", ".join(json.dumps(p) for p in patterns) + ",],}\n"
    return json.dumps(data)


def _chain(folders: list[str]) -> list[str]:
    out = [""]
    for folder in folders:
        parts = folder.split("/")
        out += ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return list(dict.fromkeys(out))


def generate(seed: int, index: int) -> Scenario:
    rng = random.Random(f"{AGENT}-{seed}-{index}")
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = sorted(rng.sample(FOLDERS, rng.randint(1, 4)))
    chain = _chain(folders)
    cwd = "." if rng.random() < 0.4 else rng.choice(chain[1:])
    root = rng.random()
    if root < 0.85:
        tree.update(GIT)
    elif root < 0.9:
        tree[".git"] = None
    nested = None
    if rng.random() < 0.05 and len(chain) > 1:
        nested = rng.choice(chain[1:])
        tree.update({f"{nested}/{k}": v for k, v in GIT.items()})
    for folder in chain:
        prefix = f"{folder}/" if folder else ""
        for name in NAMES:
            if rng.random() < 0.3:
                tree[f"{prefix}{name}"] = _text(rng)
        if rng.random() < (0.3 if folder in ("", cwd) else 0.1):
            name = rng.choice(("opencode.json", "opencode.json", "opencode.jsonc",
                               ".opencode/opencode.json"))
            tree[f"{prefix}{name}"] = _config(rng)
        if rng.random() < 0.25:
            for name in rng.sample(("notes.md", "guide.md", "docs/guide.md", "docs/a.md",
                                    "rules/r.md", ".hidden.md", "src/s.md"), rng.randint(1, 3)):
                tree[f"{prefix}{name}"] = _text(rng)
        odd = rng.random()
        if odd < 0.03:
            tree.pop(f"{prefix}AGENTS.md", None)
            tree[f"{prefix}AGENTS.md/inner.txt"] = "a folder named like a memory file\n"
        elif odd < 0.05:
            tree[f"{prefix}CLAUDE.md"] = {"symlink": "nowhere.md"}
        elif odd < 0.08 and folder:
            tree[f"{prefix}AGENTS.md"] = {"symlink": "../" * (folder.count("/") + 1)
                                          + "AGENTS.md"}
            tree.setdefault("AGENTS.md", _text(rng))
        if rng.random() < 0.5:
            tree[f"{prefix}x.txt"] = "x\n"
    if rng.random() < 0.4:
        home[".config/opencode/AGENTS.md"] = _text(rng)
    if rng.random() < 0.4:
        home[".claude/CLAUDE.md"] = _text(rng)
    if rng.random() < 0.15:
        home[".config/opencode/opencode.json"] = _config(rng)
    files = [k for k, v in tree.items() if v is not None and not k.startswith(".git/")
             and not isinstance(v, dict) and ".git/" not in k]
    # A read outside OpenCode's project asks for the external_directory permission, which
    # `opencode run` refuses (no read at all). The project is the repository the working
    # folder is in: a nested one when the working folder is at or below it, else the root's;
    # outside a repository, the working folder itself.
    if nested is not None and (cwd == nested or cwd.startswith(nested + "/")):
        project = nested
    else:
        project = "." if root < 0.85 else cwd
    if project != ".":
        files = [f for f in files if f.startswith(project + "/")]
    read = None
    if files and rng.random() < 0.9:
        plain = [f for f in files if f.endswith("x.txt")]
        read = rng.choice(plain if plain and rng.random() < 0.8 else files)
    if cwd != ".":
        tree.setdefault(cwd, None)
    return Scenario(id=f"diff-{AGENT}-{seed}-{index:04d}", agents=[AGENT], about="generated",
                    tree=_buildable(tree), home=_buildable(home), cwd=cwd, read=read,
                    generated=True)


def _buildable(tree: dict[str, TreeValue]) -> dict[str, TreeValue]:
    """Drop a file that another entry needs as a folder (a path both a file and a parent)."""
    parents = {"/".join(k.split("/")[:i]) for k in tree for i in range(1, k.count("/") + 1)}
    return {k: v for k, v in tree.items() if v is None or k not in parents}


def compare(scenario: Scenario, capture: Capture, predicted: dict[str, Any]) -> list[str]:
    """test_opencode.py's checks: the system message's instructions and, after the read, the
    reminder, byte for byte."""
    found = []
    if not capture.requests:
        found.append("no-request")
    if predicted["payloads"] != [p.text for p in capture.startup]:
        found.append("payloads")
    if scenario.read is not None and predicted["jit_payloads"] != [
            p.text for p in capture.on_read]:
        found.append("on-read")
    return found


def spec(version: str | None = None) -> AgentSpec:
    return AgentSpec(agent=AGENT, version=version or default_version(AGENT), generate=generate,
                     predict=predict_opencode, compare=compare, ci_seed=CI_SEED,
                     ci_cases=CI_CASES)
