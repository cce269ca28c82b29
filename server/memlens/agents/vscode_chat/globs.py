"""`applyTo` patterns as VS Code's chat matches them (VS Code 1.139's
`ComputeAutomaticInstructions._matches`, over its `base/common/glob` matcher).

The pattern is split at commas outside braces and brackets; each part is trimmed (an empty
one never matches); `**`, `**/*` and `*` match always, even with no file attached; any other
part not starting with `/` or `**/` gets `**/` in front; it is matched against each attached
file's absolute path, ignoring case. The first part that matches decides.

The glob syntax: `*` any characters but `/`, `?` one such character, `**` any number of path
segments, `{a,b}` alternatives, `[...]` a class (`[!...]` or `[^...]` negated). The regular
expression is run by RE2 through `memlens.files.globs` (linear time: a pattern written in a
repository cannot stall the server), at most `MAX_GLOBS` parts of one `applyTo`.
"""

from __future__ import annotations

from memlens.files.globs import bounded, full_match, literal

ALWAYS = ("**", "**/*", "*")


def split_patterns(text: str) -> list[str]:
    """`text` split at the commas outside `{}` and `[]` (VS Code's `splitGlobAware`)."""
    parts: list[str] = []
    current: list[str] = []
    braces = brackets = 0
    for char in text:
        if char == "{":
            braces += 1
        elif char == "}" and braces:
            braces -= 1
        elif char == "[":
            brackets += 1
        elif char == "]" and brackets:
            brackets -= 1
        if char == "," and not braces and not brackets:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    in_braces = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            # `**/` : any number of whole segments; a trailing `**`: anything.
            if pattern.startswith("**/", i):
                out.append("(?:[^/]*/)*")
                i += 3
            else:
                out.append(".*")
                i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            in_braces += 1
            out.append("(?:")
        elif char == "}" and in_braces:
            in_braces -= 1
            out.append(")")
        elif char == "," and in_braces:
            out.append("|")
        elif char == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(literal(char))
            else:
                body = pattern[i + 1:end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("]", "\\]")
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end + 1
                continue
        else:
            out.append(literal(char))
        i += 1
    out.extend(")" * in_braces)
    return "".join(out)


def parts_of(apply_to: str) -> list[str]:
    """The parts of an `applyTo` that can match (trimmed, blanks dropped)."""
    return [p.strip() for p in split_patterns(apply_to) if p.strip()]


def applies(apply_to: str, files: list[str]) -> tuple[str, str | None] | None:
    """(the part that matched, the file it matched or None for an always-pattern), or None:
    whether an instruction file with this `applyTo` is attached when `files` are."""
    for part in bounded(parts_of(apply_to)):
        if part in ALWAYS:
            return part, None
        if not part.startswith("/") and not part.startswith("**/"):
            part = "**/" + part
        regex = _translate(part)
        for path in files:
            if full_match(regex, path, ignore_case=True):
                return part, path
    return None
