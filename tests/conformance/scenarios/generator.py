"""Seeded random scenarios: the same (agent, seed, index) always gives the same tree.

Each agent gets ``COUNT`` trees built from its own file names, mixing what the hand-written
scenarios test one at a time: nested folders (unicode names included), imports that resolve,
fail or sit in code spans, CRLF, empty files, frontmatter and comments (Claude), override
files and large files (Codex), a starting folder below the root and a file read in a random
folder. ``MEMLENS_CONFORMANCE_SEED`` picks another family of trees for a local hunt; the
goldens under captured/ belong to the default seed.

``fuzz_gemini(seed, count)`` / ``adversarial(seed, index)``: the loader fuzzer's trees (run
against Gemini CLI 0.43.0's own loader only, fuzz.py), adversarial in names, imports, ignore
files, settings (odd types, $VARS, user and workspace files) and trust; tree ``index`` of
``seed`` is always the same.
"""

from __future__ import annotations

import functools
import json
import os
import random
from typing import Any

from tests.conformance.scenarios import Scenario, TreeValue

SEED = int(os.environ.get("MEMLENS_CONFORMANCE_SEED", "12"))
COUNT = int(os.environ.get("MEMLENS_CONFORMANCE_GENERATED", "28"))

FOLDERS = (
    "src", "src/core", "docs", "pkg/api", "pkg/web", "app/deep/er", "über", "日本",
    "a b", "node_modules/lib", ".hidden", "tests/unit",
)
LINES = (
    "Use tabs for indentation.", "Prefer small functions.", "Überall ✓ — “quotes”",
    "こんにちは 🌍", "# Heading", "- bullet item", "Inline `@./x.md` code span.",
    "Mail me@example.com later.", "trailing spaces   ", "", "```\n@./fenced.md\n```",
    "Tabs\tinside", "1. numbered",
)


def _lines(rng: random.Random, low: int = 1, high: int = 4) -> list[str]:
    return [rng.choice(LINES) for _ in range(rng.randint(low, high))]


def _finish(rng: random.Random, lines: list[str]) -> str:
    """Join with LF or (one time in five) CRLF; the last newline is sometimes missing."""
    newline = "\r\n" if rng.random() < 0.2 else "\n"
    text = newline.join(line.replace("\n", newline) for line in lines)
    return text + (newline if rng.random() < 0.85 else "")


def _folders(rng: random.Random) -> list[str]:
    return sorted(rng.sample(FOLDERS, rng.randint(2, 5)))


def _import_line(rng: random.Random, folder: str, tree: dict[str, TreeValue]) -> str:
    """An import of a notes file that exists (usually), or a failing one."""
    kind = rng.random()
    prefix = f"{folder}/" if folder else ""
    if kind < 0.6:
        name = f"notes{rng.randint(1, 3)}.md"
        tree[f"{prefix}{name}"] = _finish(rng, [*_lines(rng, 1, 2), f"from {name}"])
        return f"See @./{name} for more."
    if kind < 0.75:
        return "Missing: @./missing.md"
    if kind < 0.85:
        return "Ask @someone first."
    return "Parent: @../up.md"


def _read_target(rng: random.Random, folders: list[str], tree: dict[str, TreeValue]) -> str:
    folder = rng.choice(folders)
    name = rng.choice(("x.txt", "main.py", "app.ts", "README.md"))
    path = f"{folder}/{name}"
    tree[path] = "content\n"
    return path


def _cwd(rng: random.Random, folders: list[str], tree: dict[str, TreeValue]) -> str:
    cwd = "." if rng.random() < 0.6 else rng.choice(folders).split("/")[0]
    if cwd != ".":
        tree.setdefault(cwd, None)  # the folder exists even when no file landed in it
    return cwd


def _gemini(rng: random.Random, scenario_id: str, *, settings: bool = False) -> Scenario:
    """With ``settings``, a second random stream also varies Gemini CLI's memory settings
    (classic mode and its folder budget, file names, import format, boundary markers,
    .geminiignore): the loader fuzzer's trees. The tree itself is the same either way."""
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = _folders(rng)
    if rng.random() < 0.75:
        tree[".git"] = None
    for folder in ["", *folders]:
        if rng.random() < (0.8 if not folder else 0.55):
            lines = _lines(rng)
            if rng.random() < 0.45:
                lines.insert(rng.randint(0, len(lines)), _import_line(rng, folder, tree))
            tree[f"{folder}/GEMINI.md".lstrip("/")] = _finish(rng, lines)
    if rng.random() < 0.15:
        tree["empty/GEMINI.md"] = ""
    if rng.random() < 0.6:
        home[".gemini/GEMINI.md"] = _finish(rng, _lines(rng))
    read = _read_target(rng, folders, tree) if rng.random() < 0.85 else None
    cwd = _cwd(rng, folders, tree)
    if settings:
        _vary_settings(random.Random(f"settings-{scenario_id}"), folders, tree, home)
    return Scenario(
        id=scenario_id, agents=["gemini"], about="generated",
        tree=tree, home=home, cwd=cwd, read=read, generated=True,
    )


def _vary_settings(
    rng: random.Random, folders: list[str], tree: dict[str, TreeValue],
    home: dict[str, TreeValue],
) -> None:
    context: dict[str, object] = {}
    config: dict[str, object] = {"context": context}
    if rng.random() < 0.35:
        config["experimental"] = {"jitContext": False}
        if rng.random() < 0.4:
            context["discoveryMaxDirs"] = rng.randint(1, 6)
    if rng.random() < 0.2:
        context["fileName"] = rng.choice((["AGENTS.md", "GEMINI.md"], "AGENTS.md", ["CONTEXT.md"]))
        for folder in ["", *rng.sample(folders, min(2, len(folders)))]:
            name = rng.choice(("AGENTS.md", "CONTEXT.md"))
            tree[f"{folder}/{name}".lstrip("/")] = _finish(rng, _lines(rng))
    if rng.random() < 0.15:
        context["importFormat"] = "flat"
    if rng.random() < 0.1:
        context["memoryBoundaryMarkers"] = rng.choice(([], ["package.json"], [".git", "pkg"]))
    if rng.random() < 0.2:
        tree[".geminiignore"] = rng.choice(
            (f"{folders[0]}\n", f"{folders[0]}/\n", "GEMINI.md\n", "*.md\n!GEMINI.md\n")
        )
    if rng.random() < 0.1:
        context["fileFiltering"] = {"respectGitIgnore": True}
        tree[".gitignore"] = f"{folders[-1]}\n"
    home[".gemini/settings.json"] = json.dumps(config)


def _rule(rng: random.Random, folders: list[str]) -> str:
    body = _lines(rng, 1, 2)
    if rng.random() < 0.5:
        return _finish(rng, body)
    glob = rng.choice([f"{rng.choice(folders)}/**", "**/*.py", "**/*.ts", "*.md"])
    return _finish(rng, ["---", "paths:", f'  - "{glob}"', "---", *body])


def _claude_memory(rng: random.Random, folder: str, tree: dict[str, TreeValue]) -> str:
    lines = _lines(rng)
    if rng.random() < 0.4:
        lines.insert(rng.randint(0, len(lines)), _import_line(rng, folder, tree))
    if rng.random() < 0.2:
        lines.insert(rng.randint(0, len(lines)), "<!-- a comment -->")
    if rng.random() < 0.2:
        lines = ["---", "description: generated", "---", *lines]
    return _finish(rng, lines)


def _claude(rng: random.Random, scenario_id: str) -> Scenario:
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = _folders(rng)
    if rng.random() < 0.75:
        tree[".git"] = None
    where = rng.random()
    if where < 0.65:
        tree["CLAUDE.md"] = _claude_memory(rng, "", tree)
    elif where < 0.8:
        tree[".claude/CLAUDE.md"] = _finish(rng, _lines(rng))
    elif where < 0.9:
        tree["AGENTS.md"] = _finish(rng, _lines(rng))
    if rng.random() < 0.3:
        tree["CLAUDE.local.md"] = _finish(rng, _lines(rng, 1, 2))
    for n in range(rng.randint(0, 3)):
        tree[f".claude/rules/r{n}.md"] = _rule(rng, folders)
    for folder in folders:
        if rng.random() < 0.45:
            tree[f"{folder}/CLAUDE.md"] = _claude_memory(rng, folder, tree)
        elif rng.random() < 0.15:
            tree[f"{folder}/AGENTS.md"] = _finish(rng, _lines(rng))
    if rng.random() < 0.5:
        home[".claude/CLAUDE.md"] = _finish(rng, _lines(rng))
    if rng.random() < 0.2:
        home[".claude/rules/home.md"] = _rule(rng, folders)
    read = _read_target(rng, folders, tree) if rng.random() < 0.85 else None
    return Scenario(
        id=scenario_id, agents=["claude"], about="generated",
        tree=tree, home=home, cwd=_cwd(rng, folders, tree), read=read, generated=True,
    )


def _codex_text(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return "z" * rng.choice((9000, 17000, 33000)) + "\n"
    if rng.random() < 0.08:
        return ""
    return _finish(rng, _lines(rng))


def _codex(rng: random.Random, scenario_id: str) -> Scenario:
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = _folders(rng)
    if rng.random() < 0.75:
        tree[".git"] = None
    chain = [""]
    for folder in folders:
        parts = folder.split("/")
        chain += ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for folder in sorted(set(chain)):
        prefix = f"{folder}/" if folder else ""
        if rng.random() < 0.55:
            tree[f"{prefix}AGENTS.md"] = _codex_text(rng)
        if rng.random() < 0.15:
            tree[f"{prefix}AGENTS.override.md"] = _codex_text(rng)
        if not folder or rng.random() < 0.3:
            tree.setdefault(f"{prefix}keep.txt", "x\n")  # the folder exists even if empty
    if rng.random() < 0.5:
        home[".codex/AGENTS.md"] = _codex_text(rng)
    if rng.random() < 0.1:
        home[".codex/AGENTS.override.md"] = _codex_text(rng)
    cwd = "." if rng.random() < 0.3 else rng.choice(sorted(set(chain) - {""}))
    tree.setdefault(f"{cwd}/keep.txt" if cwd != "." else "keep.txt", "x\n")
    return Scenario(
        id=scenario_id, agents=["codex"], about="generated",
        tree=tree, home=home, cwd=cwd, generated=True,
    )


_BUILDERS = {"gemini": _gemini, "claude": _claude, "codex": _codex}


def generate(agent: str, seed: int = SEED, count: int = COUNT) -> list[Scenario]:
    builder = _BUILDERS[agent]
    return [
        builder(random.Random(f"{agent}-{seed}-{i}"), f"gen-{agent}-{seed}-{i:02d}")
        for i in range(count)
    ]


def fuzz_gemini(seed: int, count: int, start: int = 0) -> list[Scenario]:
    """Adversarial Gemini trees for the loader fuzzer (test_loader.py): tree ``i`` of ``seed``
    is always the same (``random.Random(f"fuzz-{seed}-{i}")``)."""
    return [adversarial(seed, i) for i in range(start, start + count)]


# --- the loader fuzzer's adversarial trees ---------------------------------------------------
# Paths that depend on where a tree is built are written as placeholders, replaced when it is
# built (scenarios.substitute): <WS> the workspace, <HOME> HOME, <ROOT> the folder holding both.

FUZZ_FOLDERS = (
    "src", "src/core", "docs", "pkg/api", "pkg/web", "über", "日本/語", "a b", "a\\b",
    "v1.2", "x.", "..dots", ".hidden", ".github/wf", "node_modules/lib", "build/out",
    "tests/unit", "deep/er/est/most", "emoji🚀", "-dash", "#hash", "$dollar", "ign", "keep",
    "sp ace/in ner", "Upper/Case", "tab\tname", "e\u0301",
)
FUZZ_TEXT = (
    "Use tabs.", "Prefer small functions.", "Überall ✓ — “quotes”", "こんにちは 🌍", "# Heading",
    "- bullet", "", "   ", "Tabs\tinside", "trailing spaces   ", "Mail me@example.com later.",
    "<!-- an html comment -->", "\u200bzero width", "@", "@ alone", "a@b.c", "@1abc", "@_x",
)


def _fuzz_name(rng: random.Random) -> str:
    return rng.choice(("notes1.md", "notes2.md", "ü.md", "a b.md", "x.txt", "n.md.", ".dot.md",
                       "GEMINI.md", "deep.md"))


def _fuzz_import(rng: random.Random, folder: str, tree: dict[str, TreeValue],
                 depth: int = 0) -> str:
    """One import in a file of ``folder``, creating what it points at (most of the time)."""
    prefix = f"{folder}/" if folder else ""
    roll = rng.random()
    name = _fuzz_name(rng)
    if roll < 0.45:
        if f"{prefix}{name}" not in tree and depth < 7:
            tree[f"{prefix}{name}"] = ""  # reserved before recursing: cycles end here
            body = _fuzz_lines(rng, 0, 2)
            if rng.random() < 0.5:
                body.append(_fuzz_import(rng, folder, tree, depth + 1))
            tree[f"{prefix}{name}"] = _fuzz_finish(rng, body)
        form = rng.choice(("@./{n}", "@{n}", "@./{n},", "@./{n}.", "(@./{n})", "@./{n}:",
                           "@./sub/../{n}", "@<WS>/{p}{n}", "@./{n}\u00a0x", "@.//{n}"))
        return "see " + form.format(n=name, p=prefix)
    if roll < 0.55:
        up = rng.choice(("up.md", "GEMINI.md"))
        if folder and rng.random() < 0.7:
            parent = folder.rsplit("/", 1)[0] if "/" in folder else ""
            tree.setdefault(f"{parent}/{up}".lstrip("/"), "from above\n")
        return f"parent @../{up}"
    return rng.choice((
        "missing @./missing.md", "ask @someone", "abs @/etc/hostname", "home @~/x.md",
        "url @https://example.com/x.md", "file @file:///etc/passwd", "folder @./",
        "folder @../", "root @<ROOT>/outside.md", "home @<HOME>/.gemini/GEMINI.md",
        "code `@./notes1.md` span", "``@./notes1.md``", "```\n@./notes1.md\n```",
        "unclosed ` @./notes1.md", "~~~\n@./notes1.md\n~~~", "@./notes1.md@./notes2.md",
        "\t@./notes1.md", "@./missing dir/x.md", "@.\\notes1.md", "@./%C3%BC.md",
    ))


def _fuzz_lines(rng: random.Random, low: int, high: int) -> list[str]:
    return [rng.choice(FUZZ_TEXT) for _ in range(rng.randint(low, high))]


def _fuzz_finish(rng: random.Random, lines: list[str]) -> str:
    text = _finish(rng, lines)
    roll = rng.random()
    if roll < 0.06:
        text = "\ufeff" + text
    elif roll < 0.09:
        text = text + "\n\n\n"
    elif roll < 0.11:
        text = " \n\t\n"
    return text


def _fuzz_ignore(rng: random.Random, folders: list[str]) -> str:
    patterns = []
    for _ in range(rng.randint(1, 4)):
        # (no backslash: the ignore package reads one in a pattern as a regex escape, G4)
        name = rng.choice(folders).split("/")[rng.choice((0, -1))].replace("\\", "")
        patterns.append(rng.choice((
            name, f"{name}/", f"/{name}", f"**/{name}", f"!{name}", f"!{name}/", "*.md",
            "!GEMINI.md", "GEMINI.md", "notes*.md", f"{name}/*", "# comment", "", f"{name}   ",
            "\\#hash", ".git", "*", "!*/", f"{name}/**/GEMINI.md", "*.txt",
        )))
    return "\n".join(patterns) + rng.choice(("\n", "", "\r\n"))


def _odd(rng: random.Random, *values: object) -> object:
    return rng.choice(values)


def _fuzz_settings(rng: random.Random, folders: list[str]) -> dict[str, object]:
    context: dict[str, object] = {}
    config: dict[str, object] = {}
    if rng.random() < 0.45:
        config["experimental"] = {"jitContext": _odd(rng, False, False, False, True, "false", 0)}
    if rng.random() < 0.35:
        context["discoveryMaxDirs"] = _odd(rng, 1, 2, 3, 5, 0, -1, -5, 2.5, 1.5, "3", None,
                                           True, 1000)
    if rng.random() < 0.3:
        context["fileName"] = _odd(
            rng, "AGENTS.md", " GEMINI.md ", ["AGENTS.md", "GEMINI.md"], [" AGENTS.md"],
            ["CONTEXT.md", "GEMINI.md"], "", [], ["GEMINI.md", "GEMINI.md"], "\tAGENTS.md\n",
            ["AGENTS.md  ", "CONTEXT.md"], "Gemini.md", "$CTX_NAME", "${NOPE:-AGENTS.md}")
    if rng.random() < 0.2:
        context["importFormat"] = _odd(rng, "flat", "tree", "FLAT", 1, "")
    if rng.random() < 0.2:
        context["memoryBoundaryMarkers"] = _odd(
            rng, [], ["package.json"], [".git", "pkg"], [".hidden"], ["../x"], ["/abs"],
            ["src", ".git"], [".git/"])
    if rng.random() < 0.3:
        dirs = [rng.choice((
            "~/inc", "$HOME/inc", "${HOME}/inc", "~", "~/.gemini", "${NOPE:-src}", "src",
            "./docs/", "../ws", "<WS>/pkg", "~/", "src/../docs", folders[0], "$dollar",
            "missing", "~/missing", "inc\\x", "über",
        )) for _ in range(rng.randint(1, 2))]
        context["includeDirectories"] = dirs
        context["loadMemoryFromIncludeDirectories"] = _odd(rng, True, True, False, "true")
    if rng.random() < 0.3:
        context["fileFiltering"] = {
            key: _odd(rng, True, False, "false")
            for key in rng.sample(("respectGitIgnore", "respectGeminiIgnore"), rng.randint(1, 2))
        }
    if context:
        config["context"] = context
    return config


def _fuzz_trust(rng: random.Random, cwd: str, folders: list[str]) -> str:
    """HOME/.gemini/trustedFolders.json: rules on the workspace, its parent, a child, cwd."""
    rules: dict[str, str] = {}
    here = "<WS>" if cwd == "." else "<ROOT>" if cwd == ".." else f"<WS>/{cwd}"
    for _ in range(rng.randint(0, 3)):
        key = rng.choice(("<WS>", "<ROOT>", here, f"<WS>/{rng.choice(folders)}", "<HOME>",
                          "<WS>/", here + "/..", "~/x", "/"))
        rules[key] = rng.choice(("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"))
    return json.dumps(rules, ensure_ascii=False, indent=1)


def adversarial(seed: int, index: int) -> Scenario:
    rng = random.Random(f"fuzz-{seed}-{index}")
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = sorted(rng.sample(FUZZ_FOLDERS, rng.randint(2, 6)))
    if rng.random() < 0.75:
        tree[".git"] = None
        if rng.random() < 0.2:
            tree[".git/GEMINI.md"] = "inside .git\n"
    names = ["GEMINI.md"]
    settings = _fuzz_settings(rng, folders)
    configured = settings.get("context", {}).get("fileName")  # type: ignore[union-attr]
    if isinstance(configured, str) and configured.strip() and "$" not in configured:
        names = [configured.strip()]
    elif isinstance(configured, list) and configured:
        names = [n.strip() for n in configured if isinstance(n, str) and n.strip()] or names
    if rng.random() < 0.3:
        names = [*names, "AGENTS.md"]
    for folder in ["", *folders]:
        prefix = f"{folder}/" if folder else ""
        if folder:
            tree.setdefault(folder, None)
        for name in names:
            if rng.random() < (0.75 if not folder else 0.5):
                lines = _fuzz_lines(rng, 1, 3)
                for _ in range(rng.choice((0, 0, 1, 1, 2))):
                    lines.insert(rng.randint(0, len(lines)), _fuzz_import(rng, folder, tree))
                tree[f"{prefix}{name}"] = _fuzz_finish(rng, lines)
    if rng.random() < 0.1:
        tree[f"{rng.choice(folders)}/GEMINI.md/x.txt"] = "a folder named GEMINI.md\n"
    if rng.random() < 0.3:
        tree[".gitignore"] = _fuzz_ignore(rng, folders)
    if rng.random() < 0.15:
        tree[f"{rng.choice(folders)}/.gitignore"] = _fuzz_ignore(rng, folders)
    if rng.random() < 0.25:
        tree[".geminiignore"] = _fuzz_ignore(rng, folders)
    if rng.random() < 0.05 and ".git" in tree:
        tree[".git/info/exclude"] = _fuzz_ignore(rng, folders)
    if rng.random() < 0.6:
        home[".gemini/GEMINI.md"] = _fuzz_finish(rng, _fuzz_lines(rng, 1, 2))
    if rng.random() < 0.2:
        home[".gemini/AGENTS.md"] = "global agents\n"
    if rng.random() < 0.3:
        home["inc/GEMINI.md"] = "included from home\n"
        home["inc/AGENTS.md"] = "agents from home\n"
    if rng.random() < 0.1:
        tree["../outside.md"] = "outside the workspace\n"  # placed in <ROOT> by the builder
    roll = rng.random()
    cwd = ("." if roll < 0.55 else ".." if roll < 0.64 else "../home" if roll < 0.67
           else rng.choice(folders))
    markers = settings.get("context", {}).get("memoryBoundaryMarkers")  # type: ignore[union-attr]
    if isinstance(markers, list) and "package.json" in markers:
        tree[f"{rng.choice(['', *folders])}/package.json".lstrip("/")] = "{}\n"
    if rng.random() < 0.15:
        where = "." if cwd == ".." else cwd
        tree[f"{where}/.gemini/settings.json"] = json.dumps(_fuzz_settings(rng, folders))
    if settings or rng.random() < 0.5:
        text = json.dumps(settings, ensure_ascii=False)
        if rng.random() < 0.1:
            text = "// a comment\n" + text
        home[".gemini/settings.json"] = text
    for config in (settings, _json_or_empty(tree.get(f"{'.' if cwd == '..' else cwd}/"
                                                     ".gemini/settings.json"))):
        for written in config.get("context", {}).get("includeDirectories", []):
            if rng.random() < 0.85:  # most include directories exist: Gemini CLI stops if not
                _make_folder(written, cwd, tree, home)
    folder_trust = rng.random() < 0.3
    if folder_trust and rng.random() < 0.85:
        home[".gemini/trustedFolders.json"] = _fuzz_trust(rng, cwd, folders)
    if folder_trust and rng.random() < 0.2:
        security = {"folderTrust": {"enabled": _odd(rng, False, "false", True, 0)}}
        where = rng.choice(("home", "workspace"))
        if where == "home":
            merged = json.loads(str(home.get(".gemini/settings.json", "{}")).split("\n", 1)[-1]
                                if str(home.get(".gemini/settings.json", "")).startswith("//")
                                else str(home.get(".gemini/settings.json", "{}")))
            home[".gemini/settings.json"] = json.dumps({**merged, "security": security})
        else:
            place = "." if cwd == ".." else cwd
            tree[f"{place}/.gemini/settings.json"] = json.dumps({"security": security})
    read = None
    if rng.random() < 0.85:
        folder = rng.choice(folders)
        read = rng.choice((f"{folder}/x.txt", f"{folder}/x.txt", folder, f"{folder}/nope/y.md",
                           "../home/inc/z.txt", "GEMINI.md"))
        if read.endswith("x.txt"):
            tree[read] = "content\n"
        elif read.endswith("z.txt"):
            home["inc/z.txt"] = "z\n"
    return Scenario(
        id=f"fuzz-{seed}-{index:04d}", agents=["gemini-loader"], about="adversarial",
        tree=_buildable(tree), home=_buildable(home), cwd=cwd, read=read, generated=True,
        folder_trust=folder_trust,
    )


def _json_or_empty(text: TreeValue) -> dict[str, Any]:
    return json.loads(text) if isinstance(text, str) else {}


def _make_folder(written: str, cwd: str, tree: dict[str, TreeValue],
                 home: dict[str, TreeValue]) -> None:
    """Create the folder an include directory names (HOME's or the workspace's)."""
    for prefix in ("${HOME}", "$HOME", "~", "<WS>"):
        if written.startswith(prefix):
            rest = written[len(prefix):].strip("/")
            side = tree if prefix == "<WS>" else home
            if rest and not rest.startswith(".."):
                side.setdefault(os.path.normpath(rest), None)
            return
    written = written.replace("${NOPE:-src}", "src")
    if "$" in written:
        return
    base = "." if cwd == ".." else cwd
    rel = os.path.normpath(os.path.join(base, written))
    if cwd == "..":
        rel = os.path.normpath(os.path.join("..", written))
    if rel not in (".", "..") and not rel.startswith("../"):
        tree.setdefault(rel, None)


def _buildable(tree: dict[str, TreeValue]) -> dict[str, TreeValue]:
    """Drop a file that another entry needs as a folder (``a/GEMINI.md`` as a file and as the
    folder of ``a/GEMINI.md/x.txt``)."""
    folders = {os.path.normpath(k).rsplit("/", 1)[0] for k in tree if "/" in os.path.normpath(k)}
    parents = {"/".join(f.split("/")[:i + 1]) for f in folders for i in range(f.count("/") + 1)}
    return {k: v for k, v in tree.items() if v is None or os.path.normpath(k) not in parents}


@functools.cache
def generated() -> tuple[Scenario, ...]:
    return tuple(s for agent in _BUILDERS for s in generate(agent))
