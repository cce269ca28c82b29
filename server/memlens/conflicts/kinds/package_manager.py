"""`package-manager`: the package manager of an ecosystem (JavaScript: npm, pnpm, yarn, bun;
Python: pip, uv, poetry, pipenv, pdm, conda).

Reads "use pnpm", "pnpm is our package manager", "package manager: pnpm", "install
dependencies with `pnpm install`", "use pnpm instead of npm" / "use pnpm, not npm", and the
refusals "never use npm" (value `!npm`, which disagrees with `npm` only). A line naming another
manager of the same ecosystem any other way, or hedging, reads nothing; the same manager's
commands may follow ("use yarn: `yarn install`")."""

from __future__ import annotations

import re

from memlens.conflicts.base import NEGATION, Found, hedged

ECOSYSTEMS = {"npm": "JavaScript", "pnpm": "JavaScript", "yarn": "JavaScript",
              "bun": "JavaScript", "pip": "Python", "uv": "Python", "poetry": "Python",
              "pipenv": "Python", "pdm": "Python", "conda": "Python"}
_NAME = r"(?:\*\*|__)?`?(npm|pnpm|yarn|bun|pip|uv|poetry|pipenv|pdm|conda)`?(?:\*\*|__)?"
_ANY = re.compile(r"(?<![\w./@-])" + _NAME + r"(?![\w/@-])", re.IGNORECASE)
_END = r"(?=\s*(?:[.;:!)]|,\s*(?:not|never)\b|\(\s*not\b|$|" \
       r"\s+(?:instead\s+of|rather\s+than)\s|\s+(?:as|for)\s+(?:the\s+|our\s+|all\s+)?" \
       r"(?:package\s+manag|dependenc|packages|installing|node|python|js|javascript)))"
_SAYS = [
    re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(?:always\s+|please\s+)?use\s+"
               + _NAME + _END, re.IGNORECASE),
    re.compile(r"\b(?:we|this\s+(?:repo(?:sitory)?|project))\s+uses?\s+" + _NAME + _END,
               re.IGNORECASE),
    re.compile(r"\b(?:the\s+)?package\s+manager\s*(?:is|:)\s*" + _NAME + r"(?=\s*(?:[.;)]|$))",
               re.IGNORECASE),
    re.compile(_NAME + r"\s+is\s+(?:the|our)\s+package\s+manager", re.IGNORECASE),
    re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?install\s+(?:the\s+)?(?:dependencies|deps|packages)\s+"
               r"(?:with|using|via|by\s+running)\s+`(npm|pnpm|yarn|bun|pip|uv|poetry|pipenv|"
               r"pdm|conda)(?:\s+(?:install|i|add|sync))?`\s*(?:[.;]|$)", re.IGNORECASE),
]
# "use pnpm instead of npm", "use pnpm, not npm", "use pnpm (not npm)"
_CONTRAST = re.compile(r"\s*(?:,\s*|\(\s*|\s)(?:not|never|instead\s+of|rather\s+than)\s+"
                       + _NAME + r"\s*\)?", re.IGNORECASE)
_REFUSE = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?" + NEGATION + r"\s+use\s+" + _NAME
                     + r"(?=\s*(?:[.;!]|$))", re.IGNORECASE)


class PackageManager:
    id = "package-manager"
    title = "package manager"
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Use pnpm.", "package manager (JavaScript)", "pnpm"),
        ("- Always use `pnpm` for dependencies", "package manager (JavaScript)", "pnpm"),
        ("We use yarn as the package manager.", "package manager (JavaScript)", "yarn"),
        ("Package manager: bun", "package manager (JavaScript)", "bun"),
        ("pnpm is our package manager", "package manager (JavaScript)", "pnpm"),
        ("Install dependencies with `uv sync`.", "package manager (Python)", "uv"),
        ("Use pnpm instead of npm.", "package manager (JavaScript)", "pnpm"),
        ("Use pnpm, not npm.", "package manager (JavaScript)", "pnpm"),
        ("Never use npm.", "package manager (JavaScript)", "!npm"),
        ("Use poetry.", "package manager (Python)", "poetry"),
        ("Use **yarn**: `yarn install`, `yarn build:dev`, `yarn test`",
         "package manager (JavaScript)", "yarn"),
    )
    near_misses: tuple[str, ...] = (
        "Unlike npm, we use pnpm.",
        "Use npm or yarn.",
        "You can use yarn if you prefer.",
        "Use npm to publish the package.",
        "For example, use npm.",
        "Use pnpm for the web app and npm for the docs.",
        "Don't use npm without asking.",
        "Use the npm registry mirror.",
        "Use `npm run build` to build.",
        "Install dependencies with `npm ci` in CI and `pnpm install` locally.",
        "Use bun, never yarn, and npm only in CI.",
        "Use @pnpm/foo for workspaces.",
    )

    def find(self, line: str) -> list[Found]:
        if _ANY.search(line) is None:
            return []
        refused = _REFUSE.search(line)
        if refused is not None:
            name = refused.group(1).lower()
            if hedged(line) or len(_names(line)) > 1:
                return []
            return [Found(_subject(name), "!" + name, refused.start(), refused.end())]
        said = next((m for p in _SAYS if (m := p.search(line))), None)
        if said is None:
            return []
        name = said.group(1).lower()
        rest = line[said.end():]
        contrast = _CONTRAST.match(rest)
        end = said.end()
        if contrast is not None:
            other = contrast.group(1).lower()
            if ECOSYSTEMS[other] != ECOSYSTEMS[name] or other == name:
                return []
            rest, end = rest[contrast.end():], end + contrast.end()
        text = line[:said.start()] + line[end:]
        if hedged(line[:said.start()] + rest) or _names(text, ECOSYSTEMS[name]) - {name}:
            return []
        return [Found(_subject(name), name, said.start(), end)]

    def disagree(self, one: str, other: str) -> bool:
        if one.startswith("!") and other.startswith("!"):
            return False
        if one.startswith("!") or other.startswith("!"):
            return one.lstrip("!") == other.lstrip("!")
        return one != other

    def describe(self, value: str) -> str:
        return f"never {value[1:]}" if value.startswith("!") else value


def _subject(name: str) -> str:
    return f"package manager ({ECOSYSTEMS[name]})"


def _names(text: str, ecosystem: str | None = None) -> set[str]:
    """The managers `text` names (of `ecosystem` only, when given)."""
    return {m.group(1).lower() for m in _ANY.finditer(text)
            if ecosystem is None or ECOSYSTEMS[m.group(1).lower()] == ecosystem}
