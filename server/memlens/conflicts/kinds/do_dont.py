"""`do-or-never`: "never do X" against "do X", for the same X — run the tests, edit generated
files, add dependencies, commit, push, push to main, force-push.

A refusal is a negation right before the verb ("never push", "do not edit generated
files"); an instruction is the verb opening the line or after "always", "make sure to",
"you must" ("always run the tests", "- Commit your changes"). Adding dependencies is only
read as allowed when said so ("feel free to add dependencies"), since "add dependencies with
`pnpm add`" says how, not whether. A condition ("unless asked", "without approval", "only
when"), a qualifier of the object ("the full test suite", "commit secrets"), or any other
hedge reads nothing."""

from __future__ import annotations

import functools
import re

from memlens.conflicts.base import NEGATION, Found, hedged

_LEAD = (r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?(?:(?:important|note|rule)\s*:\s*)?"
         r"(?:\*\*|__)?\s*")
_DO = (r"(?:always\s+|(?:you\s+(?:must|should)|make\s+sure\s+(?:to|you)|be\s+sure\s+to|"
       r"remember\s+to|please)\s+)?")
# What may follow the verb and its object: the clause's end — not a colon (a label: "Push to
# main:", "4. **Push**: pushes the image", describe a step, not a rule).
_END = (r"(?=\s*(?:[.;!,]|\*\*(?!\s*:)|__(?!\s*:)|$|\s+(?:before|after)\s+\w+ing\b|"
        r"\s+(?:and|then)\s))")
# subject: (the verb and object pattern, whether "do" must be said as permission)
_SUBJECTS: dict[str, tuple[str, bool]] = {
    "run the tests": (r"run\s+(?:the\s+|all\s+the\s+)?tests?(?:\s+locally)?", False),
    "edit generated files": (r"(?:edit|modify|change|touch|hand-edit)\s+(?:the\s+|any\s+)?"
                             r"(?:auto-?)?generated\s+(?:files?|code)", False),
    "add dependencies": (r"(?:add|introduce)\s+(?:new\s+|any\s+)?(?:dependencies|deps|"
                         r"packages)", True),
    "commit": (r"commit(?:\s+(?:your|the|all)\s+(?:changes|work))?", False),
    "push to main": (r"push\s+(?:directly\s+)?to\s+(?:`?main`?|`?master`?)(?:\s+branch)?",
                     False),
    "push": (r"push(?:\s+(?:your|the)\s+(?:changes|commits|branch|work))?", False),
    "force-push": (r"(?:force[\s-]push|push\s+(?:--force|-f))", False),
}
_VERBS = re.compile(r"\b(?:run|edit|modify|change|touch|hand-edit|add|introduce|commit|push|"
                    r"force)", re.IGNORECASE)
_PERMIT = (r"(?:feel\s+free\s+to|you\s+may|it\s+is\s+fine\s+to|it['’]s\s+fine\s+to|"
           r"go\s+ahead\s+and)\s+")


@functools.cache
def _patterns() -> dict[str, tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]]:
    """Per subject: a refusal leading the line, a refusal after a sentence, an instruction;
    compiled once, on the first line asked (a check reads thousands)."""
    return {
        subject: (
            re.compile(_LEAD + r"(?:\*\*|__)?" + NEGATION + r"(?:\*\*|__)?\s+(?:ever\s+)?"
                       + verb + _END, re.IGNORECASE),
            re.compile(r"(?<=[.;!]\s)\s*(?:\*\*)?" + NEGATION + r"\s+" + verb + _END,
                       re.IGNORECASE),
            re.compile(_LEAD + (_PERMIT if permission else _DO) + verb + _END, re.IGNORECASE))
        for subject, (verb, permission) in _SUBJECTS.items()}


class DoOrNever:
    id = "do-or-never"
    title = "do or never"
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Never push.", "push", "never"),
        ("- Do not edit generated files.", "edit generated files", "never"),
        ("Always run the tests before committing.", "run the tests", "do"),
        ("**Never** add new dependencies.", "add dependencies", "never"),
        ("Feel free to add dependencies.", "add dependencies", "do"),
        ("- Commit your changes.", "commit", "do"),
        ("Don't push to main.", "push to main", "never"),
        ("Never force-push.", "force-push", "never"),
        ("Make sure to run tests.", "run the tests", "do"),
    )
    near_misses: tuple[str, ...] = (
        "Never push unless asked.",
        "Do not add dependencies without approval.",
        "Only commit when the user asks.",
        "Don't run the full test suite.",
        "Never commit secrets.",
        "Add dependencies with `pnpm add`.",
        "Commit messages use the imperative mood.",
        "Regenerate the client instead of editing generated files.",
        "Push notifications are sent by the worker.",
        "Run the tests in watch mode if you like.",
        "The CI will push the image.",
        "Do not push or commit.",
        "Push to main:",
        "4. **Push**: Pushes image to registry, registers with webapp API",
    )

    def find(self, line: str) -> list[Found]:
        if _VERBS.search(line) is None or hedged(line):
            return []
        out: list[Found] = []
        for subject, (never_lead, never_after, said_re) in _patterns().items():
            never = never_lead.search(line)
            if never is None:
                never = never_after.search(line)
            said = said_re.search(line)
            if never is not None:
                out.append(Found(subject, "never", never.start(), never.end()))
            elif said is not None:
                out.append(Found(subject, "do", said.start(), said.end()))
        # "push to main" also reads as "push": keep the longer; two answers: none.
        if any(f.subject == "push to main" for f in out):
            out = [f for f in out if f.subject != "push"]
        if len(out) > 1:
            return []
        return out

    def disagree(self, one: str, other: str) -> bool:
        return one != other

    def describe(self, value: str) -> str:
        return value
