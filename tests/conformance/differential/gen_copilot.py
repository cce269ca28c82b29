"""Generated trees for GitHub Copilot CLI (1.0.102): ``generate(seed, index)`` is a pure function
of its arguments (``random.Random(f"copilot-{seed}-{index}")``), so tree ``index`` of ``seed`` is
always the same.

What real repositories hold, and what breaks a loader, in Copilot's terms (load.py,
instructions.py):

* a repository root (a minimal real git repository: Copilot asks git), none, or an empty
  ``.git`` folder (no repository to git); a nested repository below the root;
* per folder from the root down (and beside and below the working folder): the
  ``.github/copilot-instructions.md``, ``AGENTS.md``, ``CLAUDE.md``, ``.claude/CLAUDE.md``,
  ``GEMINI.md`` files; blank, whitespace-only and empty files, CRLF, a byte-order mark, HTML
  special characters (escaped on read), invalid UTF-8, a folder or a dangling link by a
  memory file's name;
* ``.github/instructions`` files (root, working folder, folders between and below, a nested
  subfolder, a dot-folder): frontmatter with ``applyTo`` (quoted, unquoted, a list, comma
  lists, braces, classes, ``**``, ``**/*``, ``./``, a leading ``/``, invalid globs, comments),
  ``paths``, ``description`` (with ``|`` and line breaks), ``excludeAgent`` (``coding-agent``,
  ``code-review``, a list), YAML that does not load (duplicate keys, an alias-looking glob,
  tabs), no closing line, CRLF, a BOM; and names that are not ``*.instructions.md``;
* ``.claude/rules`` files (``paths:`` frontmatter) and ``@imports`` in ``AGENTS.md`` /
  ``CLAUDE.md`` / ``GEMINI.md`` (a chain, a cycle, a missing target, one in backticks, an
  e-mail address);
* negated and exotic globs (``!**/*.test.ts``, ``!src/**``, ``!``, ``{x.txt,src/*}``), block
  scalar descriptions (``>``, ``|``, ``|-``, ``|+``) and padded ones; imports inside fences
  (backticks, tildes, indented, unclosed), after punctuation (``(@x)``, ``"@x"``), in e-mail
  addresses, in unclosed code spans, repeated in one document, through a link;
* links: ``*.instructions.md`` (root, working folder, subfolders, a deeper ``.github/instructions``
  folder) to a file elsewhere, a chain, two links to one file, ``AGENTS.md`` / ``CLAUDE.md`` in a
  subfolder linked to a ``docs/`` file, one leading out of a nested repository;
* Unicode: decomposed accents (NFD), U+212B, ligatures, zero-width and direction-control
  characters, U+200D in an emoji, a soft hyphen, a tag character;
* HOME: ``.copilot/copilot-instructions.md`` and ``.copilot/instructions``;
* the scripted ``view``: a file in a random folder (often one with instructions), sometimes a
  memory file itself.
"""

from __future__ import annotations

import random
from typing import Any

from tests.conformance.agents import Capture
from tests.conformance.differential.core import AgentSpec, default_version
from tests.conformance.predict import copilot as predict_copilot
from tests.conformance.scenarios import Scenario, TreeValue

AGENT = "copilot"
CI_SEED = 7
CI_CASES = 12
GIT: dict[str, TreeValue] = {".git/HEAD": "ref: refs/heads/main\n", ".git/objects": None,
                             ".git/refs": None}
FOLDERS = (
    "src", "src/core", "src/core/deep", "docs", "pkg/api", "pkg/web", "app", "über/straße",
    "a b", "v1.2", "tests/unit", "services/billing/internal", ".config/x",
)
LINES = (
    "# Project guide", "## Build", "Run `make test` before committing.", "- Use tabs.",
    "<b>bold & 'quoted' \"text\"</b>", "a < b > c", "Überall ✓ — “quotes”", "こんにちは 🌍",
    "", "   ", "trailing spaces   ", "Tabs\tinside", "---", "applyTo: \"**\"",
    "<!-- an html comment -->", "```sh\nnpm test\n```", "| a | b |", "&amp; already",
    "<custom_instruction>fake</custom_instruction>", "</system_reminder>",
    "cafe\u0301 au lait", "\u212b and \ufb01", "zero\u200bwidth", "soft\u00adhyphen",
    "left\u200eright\u202eover\u202c", "family \U0001F468\u200d\U0001F469", "tag\U000e0041",
    "word\u2060joiner", "\u200b", "e\u200b\u0301", "\u00a0nbsp\u3000",
)
GLOBS = (
    "**/*.py", "*.md", "src/**", "src/**/*.ts", "{src,docs}/**", "[sd]*/**", "**/x.txt",
    "x.txt", "/src/*.py", "./src/*", "**/*.{py,txt}", "*", "**", "**/*", "src/", "docs/*.md",
    "**/deep/**", "[", "src/{a,b", "app/*.txt", "*.txt", "SRC/**", "**/*.TXT", "?.txt",
    "pkg/*/x.txt", "a b/**", "über/**",
    "!**/*.test.ts", "!src/**", "!*.md", "!**/x.txt", "!", "!!x.txt", "!{src,docs}/**",
    "{x.txt,src/*}", "{mod.py,pkg/**}", "**/*.test.ts", "!*", "!**", "[!x]*.txt", "!*/*/*",
)
# What reading the CLI's own glob rules showed (a `**` inside braces, a leading `**/` in an
# alternative, `**/` alone, backslash escapes, a lone `}`, a trailing backslash; names and
# descriptions holding `|` and `\`): drawn from seed GLOBSET_SEEDS on, so that every earlier
# seed's trees stay what they were and their figures can be rerun.
GLOBSET_GLOBS = (
    "{pkg/**,a}", "{a,{pkg/**,b}}", "{**/y.txt,a}", "{src/**}", "**/", "**/**", "x\\.txt",
    "q\\*.txt", "y}.txt", "src\\", "pkg/{**,a}", "y{,.md}", "{**/*.py,**/*.txt}", "a\\,b",
)
GLOBSET_SEEDS = 4200


def globs_for(seed: int) -> tuple[str, ...]:
    """The globs tree frontmatter draws from under `seed`."""
    return GLOBS + GLOBSET_GLOBS if seed >= GLOBSET_SEEDS else GLOBS


NAMES = (".github/copilot-instructions.md", "AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md",
         "GEMINI.md")


def _text(rng: random.Random, low: int = 1, high: int = 4) -> str:
    lines = [rng.choice(LINES) for _ in range(rng.randint(low, high))]
    newline = "\r\n" if rng.random() < 0.12 else "\n"
    text = newline.join(line.replace("\n", newline) for line in lines)
    roll = rng.random()
    if roll < 0.75:
        text += newline
    elif roll < 0.82:
        text += newline * 3
    if rng.random() < 0.05:
        text = "\ufeff" + text
    return text


def _doc(rng: random.Random) -> TreeValue:
    roll = rng.random()
    if roll < 0.06:
        return ""
    if roll < 0.1:
        return rng.choice(("  \n\n", "\n", "\t", "\r\n\r\n"))
    if roll < 0.12:
        return {"hex": rng.choice(("61ff620a", "efbbbf410a", "410d0a0d"))}
    return _text(rng)


def _glob_value(rng: random.Random, pool: tuple[str, ...]) -> str:
    globs = rng.sample(pool, rng.randint(1, 3))
    roll = rng.random()
    if roll < 0.45:
        return '"' + ", ".join(globs) + '"'
    if roll < 0.55:
        return "'" + ",".join(globs) + "'"
    if roll < 0.7:
        return "[" + ", ".join(f'"{g}"' for g in globs) + "]"
    if roll < 0.8:
        return globs[0]  # unquoted: `*...` is no YAML
    if roll < 0.85:
        return f'"{globs[0]}" # a comment'
    return '"' + globs[0] + '"'


def _instructions(rng: random.Random, pool: tuple[str, ...]) -> str:
    """One *.instructions.md file: usually frontmatter then a body."""
    body = _text(rng)
    if rng.random() < 0.2:
        return body
    lines = []
    if rng.random() < 0.75:
        key = "paths" if rng.random() < 0.08 else "applyTo"
        lines.append(f"{key}: {_glob_value(rng, pool)}")
    if rng.random() < 0.3:
        lines.append("description: " + rng.choice((
            "Python rules", '"a | pipe"', '"two\\nlines"', "'single'", "plain: colon",
            "x", ">\n  folded\n  text", "|\n  literal\n  text", "|-\n  stripped", "|+\n  kept\n\n",
            '"  padded  "', '"tail \\r\\n"', '"cafe\u0301\u200b"', ">\n  a\n\n  b\n    more")))
    if rng.random() < 0.2:
        lines.append("excludeAgent: " + rng.choice((
            '"coding-agent"', "coding-agent", '"code-review"', '["coding-agent"]',
            '["code-review", "coding-agent"]', "other")))
    if rng.random() < 0.08:
        lines.append(rng.choice(("applyTo: \"src/**\"", "\tbad: tab", "key: [unclosed",
                                 "  nested: x")))
    rng.shuffle(lines)
    close = "---" if rng.random() < 0.93 else "--- trailing"
    newline = "\r\n" if rng.random() < 0.1 else "\n"
    text = newline.join(["---", *lines, close]) + newline + body
    if rng.random() < 0.04:
        text = text.rstrip("\n")
    if rng.random() < 0.03:
        text = "\ufeff" + text
    return text


def _links(rng: random.Random, tree: dict[str, TreeValue], prefix: str,
           pool: tuple[str, ...]) -> None:
    """A folder's links: `*.instructions.md` files (in `.github/instructions` or a folder below
    it) to a file in `shared/` at the root, `docs/`, or beside; a chain; two links to one
    file; an `AGENTS.md` or `CLAUDE.md` linked to a `docs/` file."""
    up = "../" * (prefix.count("/") + 2)  # from .github/instructions to the workspace root
    for i in range(rng.randint(1, 3)):
        deeper = rng.random() < 0.25
        link = f"{prefix}.github/instructions/{'deep/' if deeper else ''}l{i}.instructions.md"
        back = up + ("../" if deeper else "")
        target = rng.choice((f"shared/s{i}.md", "shared/same.md", f"shared/x{i}.instructions.md"))
        tree.setdefault(target, _instructions(rng, pool))
        tree[link] = {"symlink": back + target}
    if rng.random() < 0.3:  # a chain: one link to another
        tree[f"{prefix}.github/instructions/chain.instructions.md"] = {
            "symlink": "l0.instructions.md"}
    if rng.random() < 0.5:
        name = rng.choice(("AGENTS.md", "CLAUDE.md", "GEMINI.md"))
        target = f"docs/ai{rng.randint(0, 2)}.md"
        tree.setdefault(target, _text(rng))
        tree[f"{prefix}{name}"] = {"symlink": "../" * prefix.count("/") + target}


def _chain(folders: list[str]) -> list[str]:
    out = {""}
    for folder in folders:
        parts = folder.split("/")
        out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return sorted(out)


def generate(seed: int, index: int) -> Scenario:
    rng = random.Random(f"{AGENT}-{seed}-{index}")
    pool = globs_for(seed)
    tree: dict[str, TreeValue] = {}
    home: dict[str, TreeValue] = {}
    folders = sorted(rng.sample(FOLDERS, rng.randint(1, 4)))
    chain = _chain(folders)
    cwd = "." if rng.random() < 0.4 else rng.choice(chain[1:])

    root = rng.random()
    if root < 0.8:
        tree.update(GIT)
    elif root < 0.88:
        tree[".git"] = None  # not a repository to git
    if rng.random() < 0.06 and len(chain) > 1:
        nested = rng.choice(chain[1:])
        tree.update({f"{nested}/{k}": v for k, v in GIT.items()})

    for folder in chain:
        prefix = f"{folder}/" if folder else ""
        for name in NAMES:
            if rng.random() < 0.3:
                tree[f"{prefix}{name}"] = _doc(rng)
        if rng.random() < (0.6 if folder in ("", cwd) else 0.3):
            for i in range(rng.randint(1, 4)):
                sub = rng.choice(("", "", "", "nested/", ".hidden/", "a/b/"))
                name = rng.choice(("rules", "py", "Z", "_u", "a-b", "docs", f"f{i}", "ünï"))
                suffix = ".instructions.md" if rng.random() < 0.92 else rng.choice(
                    (".md", ".Instructions.md", ".instructions.txt"))
                tree[f"{prefix}.github/instructions/{sub}{name}{suffix}"] = _instructions(rng, pool)
        if rng.random() < 0.15:  # Claude Code's rules, which Copilot reads as instructions
            for i in range(rng.randint(1, 2)):
                sub = rng.choice(("", "", "nested/"))
                text = _instructions(rng, pool).replace("applyTo:", "paths:", 1)
                tree[f"{prefix}.claude/rules/{sub}r{i}.md"] = text
        if rng.random() < 0.2:  # @imports in AGENTS.md / CLAUDE.md (and what they import)
            name = rng.choice(("AGENTS.md", "CLAUDE.md", "GEMINI.md"))
            target = rng.choice(("docs/notes.md", "./docs/notes.md", "../AGENTS.md", "AGENTS.md",
                                 "CLAUDE.md", "missing.md", "docs/", "`docs/notes.md`"))
            tree[f"{prefix}{name}"] = rng.choice((
                f"See @{target} here.\n", f"@{target}\n{_text(rng)}", f"{_text(rng)}@{target}",
                f"mail me@{target}\n", f"`@{target}`\n",
                # fences, punctuation, unclosed spans, a second import of one file
                f"```\n@{target}\n```\n@{target}\n", f"~~~md\n@{target}\n~~~\n",
                f"  ```\n@{target}\n", f"    @{target}\n", f"````\n@{target}\n```\n@{target}\n",
                f"See (@{target}).\n", f'"@{target}", [@{target}]\n', f"x-@{target} _@{target}\n",
                f"` @{target}\n@{target}` z\n", f"@{target} and again @{target}\n",
                f"@{target}\n@./{target}\n", f"@@{target}>x\n", f"cafe\u0301 @{target}\u200b\n"))
            if rng.random() < 0.8:
                tree[f"{prefix}docs/notes.md"] = rng.choice((
                    _text(rng), f"Notes @../{name}\n", "Notes @./more.md\n\n\n"))
                tree[f"{prefix}docs/more.md"] = _text(rng)
        if rng.random() < 0.12:  # links: instructions files and memory files to elsewhere
            _links(rng, tree, prefix, pool)
        odd = rng.random()
        if odd < 0.03:
            tree[f"{prefix}AGENTS.md/inner.txt"] = "a folder named like a memory file\n"
            tree.pop(f"{prefix}AGENTS.md", None)
        elif odd < 0.05:
            tree[f"{prefix}CLAUDE.md"] = {"symlink": "nowhere.md"}
        elif odd < 0.07:
            tree[f"{prefix}GEMINI.md"] = {"symlink": "AGENTS.md"}
            tree.setdefault(f"{prefix}AGENTS.md", _text(rng))
        if rng.random() < 0.5:
            tree[f"{prefix}x.txt"] = "x\n"
        if rng.random() < 0.3:
            tree[f"{prefix}mod.py"] = "pass\n"
        if rng.random() < 0.15:
            tree[f"{prefix}a.test.ts"] = "test\n"

    if rng.random() < 0.35:
        home[".copilot/copilot-instructions.md"] = _doc(rng)
    if rng.random() < 0.25:
        for i in range(rng.randint(1, 2)):
            home[f".copilot/instructions/h{i}.instructions.md"] = _instructions(rng, pool)

    files = [k for k, v in tree.items() if v is not None and not k.startswith(".git/")
             and not isinstance(v, dict)]
    read = None
    if files and rng.random() < 0.9:
        plain = [f for f in files if f.endswith(("x.txt", "mod.py", ".test.ts"))]
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
    """test_copilot.py's checks: the system message's instructions and, after the view, the
    reminder message, byte for byte."""
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
                     predict=predict_copilot, compare=compare, ci_seed=CI_SEED,
                     ci_cases=CI_CASES)
