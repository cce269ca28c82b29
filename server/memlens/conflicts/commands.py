"""What the command kinds (test, build, lint, format) share: the phrase that says "this is
how you X" followed by a command in inline code, and the command's identity.

Two commands disagree only when they are the same kind of thing told two ways: two package
managers' scripts (`npm test` and `pnpm test`), or two direct tools of one ecosystem (`jest`
and `vitest`). A script and a tool (`npm test` and `jest`), or tools of different ecosystems
(`pytest` and `npm test` in a monorepo), are not compared: one may run the other."""

from __future__ import annotations

import re
import shlex

from memlens.conflicts.base import NEGATION, Found, hedged

_PMS = {"npm", "pnpm", "yarn", "bun"}
_PM_BUILTINS = {"install", "i", "ci", "add", "exec", "dlx", "x", "create", "init", "publish"}
# Words that run what follows them: dropped before the tool is named.
_WRAPPERS = (("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("pipenv", "run"),
             ("hatch", "run"), ("python", "-m"), ("python3", "-m"), ("pnpm", "exec"),
             ("pnpm", "dlx"), ("yarn", "dlx"), ("bun", "x"), ("npm", "exec"), ("npx",),
             ("bunx",), ("pnpx",), ("sudo",))
TOOLS = {
    "pytest": "python", "unittest": "python", "tox": "python-env", "nox": "python-env",
    "jest": "js", "vitest": "js", "mocha": "js", "playwright": "js", "ava": "js",
    "cargo": "rust", "go": "go", "make": "make", "just": "make", "gradle": "jvm",
    "./gradlew": "jvm", "mvn": "jvm", "dotnet": "dotnet", "bazel": "bazel",
    "eslint": "js", "biome": "js", "oxlint": "js", "prettier": "js", "dprint": "js",
    "tsc": "js", "vite": "js", "webpack": "js", "next": "js", "turbo": "js",
    "ruff": "python", "flake8": "python", "pylint": "python", "mypy": "python",
    "black": "python", "isort": "python", "autopep8": "python", "yapf": "python",
    "gofmt": "go", "golangci-lint": "go", "rustfmt": "rust", "swift": "swift",
    "rake": "ruby", "rspec": "ruby", "rubocop": "ruby", "bundle": "ruby",
}
# Tools whose first argument says what they do (`cargo test`, `make lint`, `go test`).
_WITH_TARGET = {"cargo", "go", "make", "just", "gradle", "./gradlew", "mvn", "dotnet",
                "bazel", "ruff", "swift", "bundle", "biome", "turbo"}
# Where a command phrase may start: the line's start (after a list marker, bold) or a
# sentence's ("Check formatting: `x`" is not the format command).
START = r"(?:^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?|(?<=[.;!]\s))"
_CODE = re.compile(r"`([^`\n]{1,200})`")


def identity(command: str) -> tuple[str, str] | None:
    """(what it is compared within, what it runs): `pnpm run test` → ("js-script", "pnpm
    test"); `uv run pytest -x` → ("python", "pytest"); None when unknown or unclear."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if any(w in ("&&", "||", "|", ";") or w.endswith(";") for w in words):
        return None  # several commands: no one answer
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words = words[1:]
    changed = True
    while changed and words:
        changed = False
        for wrapper in _WRAPPERS:
            if tuple(words[:len(wrapper)]) == wrapper and len(words) > len(wrapper):
                words, changed = words[len(wrapper):], True
    if not words:
        return None
    tool = words[0]
    if tool in _PMS:
        rest = words[1:]
        if rest[:1] == ["run"]:
            rest = rest[1:]
        if not rest or rest[0] in _PM_BUILTINS or rest[0].startswith("-"):
            return None
        return ("js-script", f"{tool} {rest[0]}")
    if tool not in TOOLS:
        return None
    if tool in _WITH_TARGET:
        target = next((w for w in words[1:] if not w.startswith("-")), None)
        if target is None:
            return None
        return (TOOLS[tool], f"{tool} {target}")
    return (TOOLS[tool], tool)


class CommandKind:
    """A kind read from "<phrase> `command`": `phrase` is a pattern that must end where the
    inline code starts (after "with", "using", ":"...)."""

    def __init__(self, id: str, title: str, phrase: str) -> None:
        self.id, self.title = id, title
        self._said = re.compile(phrase + r"\s*(?:with|using|via|by\s+running|run|use|:|"
                                         r"is|=|->|—|-)?\s*:?\s*`", re.IGNORECASE)

    def find(self, line: str) -> list[Found]:
        said = self._said.search(line)
        if said is None:
            return []
        code = _CODE.match(line, said.end() - 1)
        if code is None or len(_CODE.findall(line)) != 1:
            return []  # one command on the line, or no single answer
        if re.search(NEGATION, line[:said.start()], re.IGNORECASE):
            return []  # "never build with ...": a refusal, no answer
        rest = line[:said.start()] + line[code.end():]
        if hedged(rest) or hedged(line[said.start():said.end()]):
            return []
        known = identity(code.group(1))
        if known is None:
            return []
        return [Found(f"{self.title} ({known[0]})", known[1], said.start(), code.end())]

    def disagree(self, one: str, other: str) -> bool:
        return one != other

    def describe(self, value: str) -> str:
        return value
