"""Compares what VS Code's chat sent the recording model (request-1.json, from
scripts/vscode/chat-oracle.sh) with Memory Lens's `vscode-chat` prediction for the same tree.

    python compare.py REQUEST.json WORKSPACE HOME [ATTACHED ...]

Checked, byte for byte: the instruction files attached (`<attachment filePath=…>` blocks of
the system message), in order; the index of instruction files (its head with every listed
file, in order); each nested AGENTS.md entry of the index (VS Code lists those in its file
search's order, so only each entry is checked, and their number). Exit 0 when all agree.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "server"))

from memlens.agents.vscode_chat.discovery import load_chat

ATTACHMENT = re.compile(r'<attachment filePath="[^"\n]*">\n.*?\n</attachment>\n', re.S)
NESTED = re.compile(r"<instruction>\n<file>[^<]*</file>\n<description>Instructions for "
                    r"(?:the workspace|folder '[^']*')</description>\n</instruction>\n")


def system_text(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    first = messages[0]
    return "".join(p.get("value", "") for p in first["content"] if p["type"] == "text")


def main(argv: list[str]) -> int:
    request_path, workspace, home, *attached = argv
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    sent = system_text(request)
    block_start = sent.rfind("</memoryInstructions>")
    block = sent[block_start:] if block_start >= 0 else sent
    load = load_chat(workspace, home, attached=[str(Path(workspace) / a) for a in attached])
    problems: list[str] = []
    actual = ATTACHMENT.findall(block)
    predicted = load.attachments()
    if actual != predicted:
        problems.append("attachments differ:\n  sent:      "
                        + "\n             ".join(a.split("\n", 1)[0] for a in actual)
                        + "\n  predicted: "
                        + "\n             ".join(p.split("\n", 1)[0] for p in predicted))
        for a, p in zip(actual, predicted, strict=False):
            if a != p:
                problems.append(f"first differing attachment:\n  sent:      {a!r}\n"
                                f"  predicted: {p!r}")
                break
    parts = load.index_parts()
    if parts:
        head, *nested, _end = parts
        if head not in block:
            problems.append(f"the index head is not sent as predicted:\n  predicted: {head!r}")
        for entry in nested:
            if entry not in block:
                problems.append(f"nested AGENTS.md entry not sent: {entry!r}")
        sent_nested = NESTED.findall(block)
        if len(sent_nested) != len(nested):
            problems.append(f"{len(sent_nested)} nested AGENTS.md entries sent, "
                            f"{len(nested)} predicted")
    elif "Here is a list of instruction files" in block:
        problems.append("an index of instruction files was sent; none predicted")
    checked = (f"{len(predicted)} attachment(s), index of {len(load.instructions)} file(s) "
               f"and {len(load.nested_agents)} nested AGENTS.md")
    if problems:
        print(f"compare: DIFFERENT ({checked})")
        print("\n".join(problems))
        return 1
    print(f"compare: SAME ({checked})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
