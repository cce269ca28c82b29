"""Generated trees for Gemini CLI 0.61.0 (the ``gemini@0.44+`` profile: memory at start and just
in time): ``generate(seed, index)`` is a pure function of its arguments
(``random.Random(f"gemini61-{seed}-{index}")``), so tree ``index`` of ``seed`` is always the same.

What real repositories hold, and what breaks a loader, in Gemini CLI's terms:

* ``GEMINI.md`` at the root, in folders between the root and the working folder, in subfolders
  (loaded just in time when a file there is read), in HOME's ``.gemini``; ``context.fileName``
  as a string or a list (padded, repeated, ``AGENTS.md``) which 0.44+ adds to ``GEMINI.md``;
* ``@imports``: relative, bare, absolute, ``~``, with a ``#fragment``, an escaped space,
  trailing punctuation, in both kinds of fence, in indented code, in inline code (single and
  double backticks), HTML comments, cycles, chains, missing files, outside the project (by
  ``..``, by an absolute path, by a symbolic link), a folder;
* ``.gitignore`` / ``.geminiignore`` (root and nested, negations, folder patterns), some of
  them ignoring the file that is read (Gemini CLI's ``read_file`` refuses it, so nothing loads
  just in time) or the folder holding memory, ``context.fileFiltering`` switches;
* ``context.includeDirectories`` with ``loadMemoryFromIncludeDirectories``, ``importFormat``,
  ``memoryBoundaryMarkers``; settings in HOME and in the workspace's ``.gemini``;
* unicode names and text, CRLF, a byte-order mark, blank files, a folder named ``GEMINI.md``;
* a working folder below the root; a read of a file in a subfolder (or of the memory file
  itself, a file in an ignored folder). Never of a folder or a missing file: the scripted call
  is read_file, which fails on both, while ``memlens jit`` on a folder answers for
  list_directory and on a missing file for write_file creating it (both load the folder's
  memory).

``<WS>``, ``<HOME>`` and ``<ROOT>`` in file texts are replaced by the staged paths when the
tree is built (scenarios.substitute). The workspace is trusted (the harness's environment).
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.conformance.agents import Capture
from tests.conformance.differential.core import HERE, AgentSpec
from tests.conformance.predict import gemini_044
from tests.conformance.scenarios import Scenario, TreeValue

AGENT = "gemini"
VERSION = "0.61.0"
CI_SEED = 61
CI_CASES = 15
FOLDERS = (
    "src", "src/core", "docs", "pkg/api", "pkg/web", "über", "日本/語", "a b", "v1.2",
    ".hidden", ".github/wf", "node_modules/lib", "build/out", "tests/unit", "deep/er/est",
    "emoji🚀", "#hash", "Upper/Case", "ign",
)
TEXT = (
    "Use tabs.", "Prefer small functions.", "Überall ✓ — “quotes”", "こんにちは 🌍", "# Heading",
    "- bullet", "", "   ", "Tabs\tinside", "trailing spaces   ", "Mail me@example.com later.",
    "<!-- an html comment -->", "<!--\n@./notes1.md\n-->", "\u200bzero width", "@", "a@b.c",
    "1. step", "> quote", "| a | b |",
)


def _finish(rng: random.Random, lines: list[str]) -> str:
    newline = "\r\n" if rng.random() < 0.15 else "\n"
    text = newline.join(line.replace("\n", newline) for line in lines)
    text += newline if rng.random() < 0.85 else ""
    roll = rng.random()
    if roll < 0.05:
        text = "\ufeff" + text
    elif roll < 0.08:
        text = " \n\t\n"
    elif roll < 0.10:
        text = ""
    return text


def _lines(rng: random.Random, low: int, high: int) -> list[str]:
    return [rng.choice(TEXT) for _ in range(rng.randint(low, high))]


def _import(rng: random.Random, folder: str, tree: dict[str, TreeValue], depth: int = 0) -> str:
    """One import line in a file of ``folder``, creating what it points at (mostly)."""
    prefix = f"{folder}/" if folder else ""
    roll = rng.random()
    name = rng.choice(("notes1.md", "notes2.md", "ü.md", "style.md", "deep.md", "x.txt"))
    if roll < 0.45:
        if f"{prefix}{name}" not in tree and depth < 5:
            tree[f"{prefix}{name}"] = ""  # reserved before recursing: a cycle ends here
            body = _lines(rng, 0, 2)
            if rng.random() < 0.4:
                body.append(_import(rng, folder, tree, depth + 1))
            tree[f"{prefix}{name}"] = _finish(rng, body)
        form = rng.choice((
            "@./{n}", "@{n}", "@./{n},", "@./{n}.", "(@./{n})", "@./{n}#section",
            "@./{n}#", "@<WS>/{p}{n}", "@./sub/../{n}", "- @./{n}", "> @./{n}",
        ))
        return "see " + form.format(n=name, p=prefix)
    if roll < 0.52:
        tree[f"{prefix}my notes.md"] = "spaced name\n"
        return rng.choice(("@./my\\ notes.md", "@my\\ notes.md", "@./my notes.md"))
    if roll < 0.58:
        tree[f"{prefix}docs/style.md"] = "## naming\nsnake_case\n"
        return rng.choice(("@docs/style.md#naming", "@./docs/style.md#naming",
                           "@./docs/style.md"))
    if roll < 0.64:  # a cycle with the importing file's own name
        return rng.choice(("@./GEMINI.md", "@GEMINI.md"))
    if roll < 0.70:
        tree[f"{prefix}link.md"] = {"symlink": rng.choice(("notes-real.md", "../../outside.md",
                                                           "missing.md"))}
        tree.setdefault(f"{prefix}notes-real.md", "through a link\n")
        return "@./link.md"
    code = rng.choice((
        "```\n@./notes1.md\n```", "~~~\n@./notes1.md\n~~~", "```md\nx @./notes1.md\n```",
        "    @./notes1.md", "\t@./notes1.md", "`@./notes1.md`", "``@./notes1.md``",
        "`` `@./notes1.md` ``", "unclosed ` @./notes1.md", "```\nunclosed @./notes1.md",
        "missing @./missing.md", "abs @/etc/hostname", "home @~/inc/h.md",
        "outside @../outside.md", "outside @<HOME>/inc/h.md", "folder @./",
        "url @https://example.com/x.md", "ask @someone", "@./notes1.md@./notes2.md",
        "<!-- @./notes1.md -->", "   ```\n@./notes1.md\n   ```", "````\n```\n@./notes1.md\n````",
    ))
    tree.setdefault(f"{prefix}notes1.md", "notes one\n")
    return code


def _ignore(rng: random.Random, folders: list[str], read: str | None) -> str:
    patterns = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(folders).split("/")[rng.choice((0, -1))]
        choices = [name, f"{name}/", f"/{name}", f"**/{name}", f"!{name}", "*.md", "!GEMINI.md",
                   "GEMINI.md", "notes*.md", f"{name}/*", "# comment", "", "*.txt", "*.log"]
        if read:
            base = read.rsplit("/", 1)[-1]
            choices += [base, read, f"/{read}", f"*{base[-4:]}", read.rsplit("/", 1)[0] + "/"]
        patterns.append(rng.choice(choices))
    return "\n".join(patterns) + rng.choice(("\n", "", "\r\n"))


def _settings(rng: random.Random, folders: list[str], tree: dict[str, TreeValue],
              home: dict[str, TreeValue]) -> dict[str, Any]:
    context: dict[str, Any] = {}
    if rng.random() < 0.3:
        context["fileName"] = rng.choice((
            "AGENTS.md", " AGENTS.md ", ["AGENTS.md", "GEMINI.md"], ["CONTEXT.md"],
            ["GEMINI.md", "GEMINI.md"], [" AGENTS.md", "CONTEXT.md "], "CONTEXT.md", [],
        ))
    if rng.random() < 0.12:
        context["importFormat"] = rng.choice(("flat", "tree"))
    if rng.random() < 0.1:
        context["memoryBoundaryMarkers"] = rng.choice(([], ["package.json"], [".git", "pkg"]))
        tree.setdefault(f"{rng.choice(folders)}/package.json", "{}\n")
    if rng.random() < 0.15:
        # (folders that exist wherever Gemini CLI starts: a missing one stops it at start)
        dirs = rng.sample(("~/inc", "$HOME/inc", "${HOME}/inc2", "<WS>/src", "<WS>/docs/",
                           "<WS>/pkg", "~/inc2"), rng.randint(1, 2))
        context["includeDirectories"] = dirs
        context["loadMemoryFromIncludeDirectories"] = rng.random() < 0.8
        home["inc/GEMINI.md"] = "included from home\n"
        home["inc2/GEMINI.md"] = "second include\n"
        for d in ("src", "docs", "pkg"):
            tree.setdefault(d, None)
        if rng.random() < 0.5:
            tree.setdefault("pkg/GEMINI.md", "pkg memory\n")
    if rng.random() < 0.2:
        context["fileFiltering"] = {
            key: rng.choice((True, False))
            for key in rng.sample(("respectGitIgnore", "respectGeminiIgnore"), rng.randint(1, 2))
        }
    return {"context": context} if context else {}


def generate(seed: int, index: int) -> Scenario:
    rng = random.Random(f"gemini61-{seed}-{index}")
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = sorted(rng.sample(FOLDERS, rng.randint(2, 5)))
    if rng.random() < 0.8:
        tree[".git"] = None
    settings = _settings(rng, folders, tree, home)
    names = ["GEMINI.md"]
    context: dict[str, Any] = settings.get("context", {})
    configured = context.get("fileName")
    for name in [configured] if isinstance(configured, str) else configured or []:
        if isinstance(name, str) and name.strip() and name.strip() not in names:
            names.append(name.strip())
    if rng.random() < 0.2:
        names.append("AGENTS.md")  # present but not configured: not read
    for folder in ["", *folders]:
        prefix = f"{folder}/" if folder else ""
        if folder:
            tree.setdefault(folder, None)
        for name in names:
            if rng.random() < (0.75 if not folder else 0.45):
                lines = _lines(rng, 1, 3)
                for _ in range(rng.choice((0, 0, 1, 1, 2))):
                    lines.insert(rng.randint(0, len(lines)), _import(rng, folder, tree))
                tree[f"{prefix}{name}"] = _finish(rng, lines)
    if rng.random() < 0.06:
        tree[f"{rng.choice(folders)}/GEMINI.md/x.txt"] = "a folder named GEMINI.md\n"
    if rng.random() < 0.05:
        folder = rng.choice(folders)
        tree[f"{folder}/GEMINI.md"] = {"symlink": "/".join([".."] * (folder.count("/") + 1))
                                       + "/GEMINI.md"}
    if rng.random() < 0.6:
        home[".gemini/GEMINI.md"] = _finish(rng, _lines(rng, 1, 2))
    if rng.random() < 0.1:
        home[".gemini/GEMINI.md"] = _finish(rng, ["global", _import(rng, ".gemini", home)])
    home["inc/h.md"] = "home import\n"  # outside the project: imported by an absolute path

    cwd = "." if rng.random() < 0.65 else rng.choice(folders)
    read = None
    if rng.random() < 0.9:
        folder = rng.choice(folders)
        read = rng.choice((f"{folder}/x.txt", f"{folder}/x.txt", f"{folder}/x.txt",
                           f"{folder}/main.py", f"{folder}/deep/y.md", f"{folder}/GEMINI.md",
                           "GEMINI.md"))
        if not read.endswith("GEMINI.md"):
            tree[read] = "content\n"
    if rng.random() < 0.3:
        tree[".gitignore"] = _ignore(rng, folders, read)
    if rng.random() < 0.1:
        tree[f"{rng.choice(folders)}/.gitignore"] = _ignore(rng, folders, read)
    if rng.random() < 0.25:
        tree[".geminiignore"] = _ignore(rng, folders, read)
    if settings or rng.random() < 0.3:
        where = rng.random()
        text = json.dumps(settings, ensure_ascii=False)
        if where < 0.75:
            home[".gemini/settings.json"] = text
        else:
            tree[".gemini/settings.json"] = text
    if cwd != ".":
        tree.setdefault(cwd, None)
    return Scenario(id=f"diff-gemini61-{seed}-{index:04d}", agents=[AGENT], about="generated",
                    tree=_buildable(tree), home=_buildable(home), cwd=cwd, read=read,
                    generated=True)


def _buildable(tree: dict[str, TreeValue]) -> dict[str, TreeValue]:
    """Drop a file that another entry needs as a folder (a path both a file and a parent)."""
    parents = {"/".join(k.split("/")[:i]) for k in tree for i in range(1, k.count("/") + 1)}
    return {k: v for k, v in tree.items() if v is None or k not in parents}


def _sent(capture: Capture, where: str) -> str | None:
    texts = [p.text for p in capture.startup if p.where == where]
    return texts[0] if texts else None


def compare(scenario: Scenario, capture: Capture, predicted: dict[str, Any]) -> list[str]:
    """test_gemini.py's checks: the system instruction's memory, the first user message's,
    the `payloads` list, and after the read, what the read_file output gained."""
    found = []
    system, session = _sent(capture, "systemInstruction"), _sent(capture, "session_context")
    if predicted["show"]["prompt"] != system:
        found.append("system")
    if predicted["show"]["sessionMemory"] != session:
        found.append("session")
    if predicted["payloads"] != [t for t in (system, session) if t]:
        found.append("payloads")
    if scenario.read:
        appended = "".join(p.text for p in capture.on_read)
        if predicted["jit"] != appended:
            found.append("jit")
        if predicted["jit_payloads"] != ([appended] if appended else []):
            found.append("jit-payloads")
    return found


def spec(version: str | None = None) -> AgentSpec:
    """Gemini CLI 0.61.0 against the ``gemini@0.44+`` profile (``--agent gemini61``)."""
    return AgentSpec(agent=AGENT, version=version or VERSION, generate=generate,
                     predict=gemini_044, compare=compare, ci_seed=CI_SEED, ci_cases=CI_CASES,
                     regressions=HERE / "regressions_gemini61.yaml")
