"""Where in each real agent's requests the memory it sent sits.

Shared by `memlens verify` (memlens.verify.run) and the conformance harness
(tests/conformance/agents.py): once an agent has run offline against the recording fake model
(memlens.verify.agent_setup: its command line, environment and scratch HOME), ``extract``
turns the recorded requests into a ``Capture``: the memory strings of its first request and
the ones it added after the scripted tool call read ``read_path``.

Where the memory sits in each agent's request:

* Gemini CLI: the memory part of ``systemInstruction`` (from ``# Contextual Instructions``
  to its end), the ``<loaded_context>`` part of the first user content's ``<session_context>``,
  and after the read, what follows ``--- Newly Discovered Project Context ---`` in the
  ``read_file`` function response.
* Claude Code: the ``<system-reminder>`` of ``messages[0]`` that begins ``Codebase and user
  instructions``, and after the read, the new text blocks and system messages that carry
  ``Contents of``.
* Codex: the user message ``# AGENTS.md instructions for ...``; it loads nothing later.
* GitHub Copilot CLI: the system message between ``</tools>\n\n`` and
  ``\n<system_notifications>`` (its `<custom_instruction>` blocks, always-on instruction
  files and the `applyTo` table), and after the `view` call, the user message of
  ``<system_reminder>\nCustom instructions from ...`` blocks.
* OpenCode: the system message from ``</env>\n`` to the skills listing (its ``Instructions
  from: PATH`` blocks), and after its `read` call, the ``<system-reminder>`` the tool result
  ends with.
* pi: the system message, from the end of its own prompt (all of it when `.pi/SYSTEM.md`
  replaced it) to its skills listing or ``\nCurrent date: ``: the appended system prompt and
  the ``# Project Context`` of its context files. It loads nothing later.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from memlens.verify.sandbox import JobResult, Request

JIT_PREFIX = "\n\n--- Newly Discovered Project Context ---\n"
_GEMINI_MEMORY_HEADERS = ("\n# Contextual Instructions (", "\n---\n\n<loaded_context>\n")
_GEMINI_BLOCK = re.compile(
    r"--- Context from: (?P<path>.+?) ---\n(?P<text>.*?)\n--- End of Context from: (?P=path) ---",
    re.DOTALL,
)
_CLAUDE_STARTUP = "<system-reminder>\nCodebase and user instructions are shown below."
# A block starts a line, or follows "hook additional context: " (nested AGENTS.md on read).
_CLAUDE_BLOCK_HEAD = re.compile(
    r"(?:^|\n|context: )Contents of (?P<path>/[^\n]*?)(?: \((?P<label>[^\n]*)\))?:\n\n"
)
# "for CWD" only when project docs are sent; the global file alone comes without it.
_CODEX_HEADS = ("# AGENTS.md instructions for ", "# AGENTS.md instructions\n")
_COPILOT_START, _COPILOT_END = "</tools>\n\n", "\n<system_notifications>"
_COPILOT_READ = "<system_reminder>\nCustom instructions from "
_COPILOT_BLOCK = re.compile(
    r"<system_reminder>\nCustom instructions from (?P<path>[^\n]*?)\. Apply these to any code "
    r"you write here:\n\n(?P<text>.*?)\n</system_reminder>", re.DOTALL)
_OPENCODE_ENV = "</env>\n"
_OPENCODE_SKILLS = "Skills provide specialized instructions and workflows for specific tasks."
_OPENCODE_READ = "\n</content>\n\n<system-reminder>\n"
_OPENCODE_BLOCK = re.compile(r"(?:^|\n)Instructions from: (?P<path>/[^\n]*)\n")


class Payload(BaseModel):
    """One memory string exactly as it appears in the request, and where it sits."""

    where: str
    text: str


class Block(BaseModel):
    """One file's part of a payload, as the agent framed it (parsed; the payloads are the
    authority)."""

    path: str
    label: str | None = None
    text: str
    when: Literal["startup", "on-read"]


class Capture(BaseModel):
    agent: str
    version: str
    workspace: str
    home: str
    cwd: str
    read_path: str | None
    startup: list[Payload]
    on_read: list[Payload]
    blocks: list[Block]
    exit_code: int
    requests: int
    isolated: bool
    seconds: float
    notes: list[str]
    # Gemini CLI: the <available_skills> of the system instruction, in order ({name,
    # description, location}); None when it sent no skills section.
    skills: list[dict[str, str]] | None = None
    # A scripted tool call other than the read ({name, args}: save_memory) and the memory
    # files under HOME it created or changed ({path relative to HOME: text}).
    tool_call: dict[str, Any] | None = None
    written: dict[str, str] = {}
    # Claude Code: the `# Memory` section of its system prompt, as sent (what it is told about
    # its auto memory: the folder, the topic-file format); None without one.
    memory_instructions: str | None = None
    # The skills listing of the first request, as sent (None without one): Claude Code's from
    # `The following skills are available…` to the blank line after its last skill (its
    # built-in skills included), Codex's `<skills_instructions>` block.
    skills_listing: str | None = None

    def golden(self) -> dict[str, Any]:
        """What is stored under captured/: everything but the run's timing (and the fields
        older goldens do not have, when empty)."""
        empty = {k for k in ("skills", "tool_call", "written", "memory_instructions",
                             "skills_listing") if not getattr(self, k)}
        return self.model_dump(exclude={"seconds", *empty})


def extract(
    agent: str,
    version: str,
    result: JobResult,
    workspace: Path,
    home: Path,
    cwd: Path,
    read_path: Path | None,
) -> Capture:
    """The Capture of a finished run (pure: works on stored requests too)."""
    notes: list[str] = []
    skills = None
    instructions = None
    listing = skills_listing(agent, result.requests)
    if agent == "gemini":
        startup, on_read = _gemini(result.requests, read_path, notes)
        skills = _gemini_skills(result.requests, notes)
    elif agent == "claude":
        startup, on_read = _claude(result.requests, read_path, notes)
        instructions = claude_memory_section(result.requests)
    elif agent == "copilot":
        startup, on_read = _copilot(result.requests, read_path, notes)
    elif agent == "opencode":
        startup, on_read = _opencode(result.requests, read_path, notes)
    elif agent == "pi":
        startup, on_read = _pi(result.requests, notes), _pi_read(result.requests, read_path,
                                                                  notes)
    else:
        startup, on_read = _codex(result.requests, notes)
    if result.exit_code != 0:
        notes.append(f"agent exited {result.exit_code}: {result.stderr.strip()[-500:]}")
    blocks = [b for p in startup for b in parse_blocks(agent, p.text, "startup")]
    blocks += [b for p in on_read for b in parse_blocks(agent, p.text, "on-read")]
    return Capture(
        agent=agent, version=version, workspace=str(workspace), home=str(home), cwd=str(cwd),
        read_path=str(read_path) if read_path else None, startup=startup, on_read=on_read,
        blocks=blocks, exit_code=result.exit_code, requests=len(result.requests),
        isolated=result.isolated, seconds=result.seconds, notes=notes, skills=skills,
        memory_instructions=instructions, skills_listing=listing,
    )


CLAUDE_SKILLS_HEAD = "The following skills are available for use with the Skill tool:\n\n"
_CLAUDE_READ_SKILLS = ("New skills discovered in ", CLAUDE_SKILLS_HEAD)
CODEX_SKILLS_OPEN = "<skills_instructions>"


def _part_texts(value: object) -> list[str]:
    """The texts of a message's content (a string, or a list of parts with `text`)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return []


def skills_listing(agent: str, requests: list[Request]) -> str | None:
    """The skills listing of the agent's first request (see Capture.skills_listing)."""
    if not requests or not isinstance(requests[0].body, dict):
        return None
    body = requests[0].body
    if agent == "claude":
        for message in body.get("messages") or []:
            for text in _part_texts(message.get("content") if isinstance(message, dict)
                                    else None):
                start = text.find(CLAUDE_SKILLS_HEAD)
                if start >= 0:
                    end = text.find("\n\n", start + len(CLAUDE_SKILLS_HEAD))
                    return text[start:end if end >= 0 else None]
    elif agent == "codex":
        for item in body.get("input") or []:
            for text in _part_texts(item.get("content") if isinstance(item, dict) else None):
                if text.startswith(CODEX_SKILLS_OPEN):
                    return text
    return None


def claude_memory_section(requests: list[Request]) -> str | None:
    """The `# Memory` section of Claude Code's first system prompt (to the next `# ` heading),
    or None when it sent none (auto memory off)."""
    for request in requests:
        if request.route != "anthropic":
            continue
        system = request.body.get("system")
        text = "\n".join(b.get("text", "") for b in system if isinstance(b, dict)) \
            if isinstance(system, list) else str(system or "")
        start = text.find("# Memory\n")
        if start < 0 or (start > 0 and text[start - 1] != "\n"):
            return None
        end = text.find("\n# ", start + 1)
        return text[start:end if end >= 0 else None].rstrip("\n")
    return None


def parse_blocks(agent: str, text: str, when: Literal["startup", "on-read"]) -> list[Block]:
    if agent == "gemini":
        return [
            Block(path=m["path"], text=m["text"], when=when) for m in _GEMINI_BLOCK.finditer(text)
        ]
    if agent == "claude":
        heads = list(_CLAUDE_BLOCK_HEAD.finditer(text))
        if not heads:
            return []
        blocks = []
        ends = [h.start() for h in heads[1:]] + [len(text)]
        for head, end in zip(heads, ends, strict=True):
            body = text[head.end():end].rstrip("\n").removesuffix("</system-reminder>")
            blocks.append(
                Block(path=head["path"], label=head["label"], text=body.rstrip("\n"), when=when)
            )
        return blocks
    if agent == "copilot":
        return [Block(path=m["path"], text=m["text"], when=when)
                for m in _COPILOT_BLOCK.finditer(text)]
    if agent == "opencode":
        body = text.removeprefix("<system-reminder>\n").removesuffix("\n</system-reminder>")
        heads = list(_OPENCODE_BLOCK.finditer(body))
        if not heads:  # a payload that names no file (no block to read from it)
            return []
        ends = [h.start() for h in heads[1:]] + [len(body)]
        return [Block(path=h["path"], text=body[h.end():end], when=when)
                for h, end in zip(heads, ends, strict=True)]
    if agent == "pi":
        return pi_blocks(text, when)
    return []


def _gemini(
    requests: list[Request], read_path: Path | None, notes: list[str]
) -> tuple[list[Payload], list[Payload]]:
    turns = [r for r in requests if r.route == "gemini-stream"]
    if not turns:
        notes.append("no streamGenerateContent request")
        return [], []
    first = turns[0].body
    system = "".join(
        part.get("text", "") for part in first.get("systemInstruction", {}).get("parts", [])
    )
    startup = [Payload(where="systemInstruction", text=_gemini_system_memory(system))]
    session_texts = [
        part["text"]
        for content in first.get("contents", [])
        for part in content.get("parts", [])
        if isinstance(part.get("text"), str) and part["text"].startswith("<session_context>")
    ]
    if not session_texts:
        notes.append("no <session_context> in the first request")
    session = _gemini_session_memory(session_texts[0]) if session_texts else ""
    startup.append(Payload(where="session_context", text=session))
    on_read: list[Payload] = []
    if read_path is not None:
        outputs = [
            part["functionResponse"].get("response", {}).get("output", "")
            for turn in turns
            for content in turn.body.get("contents", [])
            for part in content.get("parts", [])
            if "functionResponse" in part and part["functionResponse"].get("name") == "read_file"
        ]
        if not outputs:
            notes.append("read_file never answered")
        else:
            appendix = _gemini_appendix(str(outputs[0]), read_path)
            if appendix:
                on_read.append(Payload(where="read_file.output", text=appendix))
    return startup, on_read


_SKILLS_OPEN, _SKILLS_CLOSE = "\n<available_skills>\n", "\n</available_skills>"
_SKILL = re.compile(
    r"  <skill>\n    <name>(?P<name>.*?)</name>\n    <description>(?P<description>.*?)"
    r"</description>\n    <location>(?P<location>.*?)</location>\n  </skill>(?:\n|$)",
    re.DOTALL,
)


def _gemini_skills(requests: list[Request], notes: list[str]) -> list[dict[str, str]] | None:
    """The skills listing of the first turn's system instruction: each <skill>'s name,
    description and location, in order. The entries must tile the listing exactly (so the
    listing is these values in Gemini CLI's fixed frame, byte for byte); None without one."""
    turns = [r for r in requests if r.route == "gemini-stream"]
    if not turns:
        return None
    system = "".join(
        part.get("text", "") for part in turns[0].body.get("systemInstruction", {}).get("parts", [])
    )
    return skills_in_system_instruction(system, notes)


def skills_in_system_instruction(system: str, notes: list[str]) -> list[dict[str, str]] | None:
    """The <available_skills> entries of a system instruction ({name, description,
    location}, in order); None without the section."""
    start = system.find(_SKILLS_OPEN)
    if start < 0:
        return None
    start += len(_SKILLS_OPEN)
    end = system.find(_SKILLS_CLOSE + "\n", start)
    if end < 0 and system.endswith(_SKILLS_CLOSE):
        end = len(system) - len(_SKILLS_CLOSE)
    listing = system[start:end] if end >= 0 else ""
    skills: list[dict[str, str]] = []
    at = 0
    while at < len(listing):
        match = _SKILL.match(listing, at)
        if match is None:
            notes.append(f"skills listing not parsed at {at}: {listing[at:at + 200]!r}")
            break
        skills.append({k: match[k] for k in ("name", "description", "location")})
        at = match.end()
    return skills


def _gemini_system_memory(system: str) -> str:
    for header in _GEMINI_MEMORY_HEADERS:
        index = system.find(header)
        if index >= 0:
            return system[index:]
    return ""


def _gemini_session_memory(text: str) -> str:
    start = text.find("\n<loaded_context>\n")
    end = text.rfind("\n</session_context>")
    if start < 0 or end < start:
        return ""
    return text[start:end]


def _gemini_appendix(output: str, read_path: Path) -> str:
    """What JIT appended: the output past the file's own text when it starts with it (so a
    file that itself contains the marker cannot confuse the cut), else from the marker."""
    try:
        own = read_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        own = None
    if own is not None and output.startswith(own) and output[len(own):].startswith(JIT_PREFIX):
        return output[len(own):]
    index = output.find(JIT_PREFIX)
    return output[index:] if index >= 0 else ""


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return []


def _claude(
    requests: list[Request], read_path: Path | None, notes: list[str]
) -> tuple[list[Payload], list[Payload]]:
    turns = [
        r for r in requests
        if r.route == "anthropic"
        and any(tool.get("name") == "Read" for tool in r.body.get("tools", []))
    ]
    if not turns:
        notes.append("no /v1/messages request offering the Read tool")
        return [], []
    first_messages = turns[0].body.get("messages", [])
    startup = [
        Payload(where=f"messages[{i}]", text=text)
        for i, message in enumerate(first_messages[:1])
        for text in _texts(message.get("content"))
        if text.startswith(_CLAUDE_STARTUP)
    ]
    on_read: list[Payload] = []
    if read_path is not None:
        after = [
            r for r in turns
            if any(
                isinstance(m.get("content"), list)
                and any(b.get("type") == "tool_result" for b in m["content"])
                for m in r.body.get("messages", [])
            )
        ]
        if not after:
            notes.append("Read never answered")
        else:
            messages = after[0].body.get("messages", [])
            for i, message in enumerate(messages[len(first_messages):], len(first_messages)):
                for text in _texts(message.get("content")):
                    # Memory files, and the skills the read found (a system message of
                    # their own without a nested AGENTS.md).
                    if "Contents of " in text or text.startswith(_CLAUDE_READ_SKILLS):
                        on_read.append(
                            Payload(where=f"messages[{i}] ({message.get('role')})", text=text)
                        )
    return startup, on_read


def _codex(requests: list[Request], notes: list[str]) -> tuple[list[Payload], list[Payload]]:
    turns = [r for r in requests if r.route == "openai"]
    if not turns:
        notes.append("no /v1/responses request")
        return [], []
    startup = [
        Payload(where=f"input[{i}]", text=part["text"])
        for i, item in enumerate(turns[0].body.get("input", []))
        if item.get("type") == "message" and item.get("role") == "user"
        for part in item.get("content", [])
        if isinstance(part.get("text"), str) and part["text"].startswith(_CODEX_HEADS)
    ]
    return startup, []


def _copilot(requests: list[Request], read_path: Path | None,
             notes: list[str]) -> tuple[list[Payload], list[Payload]]:
    turns = [r for r in requests if r.route == "openai-chat"
             and isinstance(r.body, dict) and r.body.get("messages")]
    if not turns:
        notes.append("no /v1/chat/completions request")
        return [], []
    first = turns[0].body["messages"]
    system = first[0].get("content") if first and first[0].get("role") == "system" else None
    startup: list[Payload] = []
    if not isinstance(system, str):
        notes.append("no system message in the first request")
    else:
        start = system.find(_COPILOT_START)
        end = system.rfind(_COPILOT_END)
        if start < 0 or end < start + len(_COPILOT_START) - 2:
            notes.append("no </tools> ... <system_notifications> in the system message")
        else:
            memory = system[start + len(_COPILOT_START):end] if end >= start + len(
                _COPILOT_START) else ""
            if memory:
                startup.append(Payload(where="messages[0] (system)", text=memory))
    on_read: list[Payload] = []
    if read_path is not None:
        after = [r for r in turns if any(m.get("role") == "tool" for m in r.body["messages"])]
        if not after:
            notes.append("view never answered")
        else:
            messages = after[0].body["messages"]
            for i, message in enumerate(messages[len(first):], len(first)):
                text = message.get("content")
                if message.get("role") == "user" and isinstance(text, str) \
                        and _COPILOT_READ in text:
                    on_read.append(Payload(where=f"messages[{i}] (user)", text=text))
    return startup, on_read


def _opencode(requests: list[Request], read_path: Path | None,
              notes: list[str]) -> tuple[list[Payload], list[Payload]]:
    """OpenCode's main turns offer tools (its title request offers none): the instructions of
    the first one's system message, and the reminder its `read` result ends with."""
    turns = [r for r in requests if r.route == "openai-chat" and isinstance(r.body, dict)
             and r.body.get("tools") and r.body.get("messages")]
    if not turns:
        notes.append("no /v1/chat/completions request offering tools")
        return [], []
    first = turns[0].body["messages"]
    system = first[0].get("content") if first and first[0].get("role") == "system" else None
    startup: list[Payload] = []
    if not isinstance(system, str) or _OPENCODE_ENV not in system:
        notes.append("no </env> in the system message")
    else:
        start = system.index(_OPENCODE_ENV) + len(_OPENCODE_ENV)
        end = system.rfind(_OPENCODE_SKILLS)
        memory = system[start:end].removesuffix("\n") if end >= start else system[start:]
        if memory:
            startup.append(Payload(where="messages[0] (system)", text=memory))
    on_read: list[Payload] = []
    if read_path is not None:
        answers = [m.get("content") for r in turns for m in r.body["messages"]
                   if m.get("role") == "tool"]
        if not answers:
            notes.append("read never answered")
        else:
            text = _part_texts(answers[0])
            output = "".join(text)
            at = output.find(_OPENCODE_READ)
            if at >= 0:
                on_read.append(Payload(where="read (tool)",
                                       text=output[at + len("\n</content>\n\n"):]))
    return startup, on_read
# pi's own system prompt ends with this line; `.pi/SYSTEM.md` replaces all of it.
PI_PROMPT_START = "You are an expert coding assistant operating inside pi, a coding agent harness."
PI_PROMPT_END = ("- Always read pi .md files completely and follow links to related docs "
                 "(e.g., tui.md for TUI API details)")
PI_CONTEXT_HEAD = "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"
PI_SKILLS_HEAD = "\n\nThe following skills provide specialized instructions for specific tasks."
_PI_TAIL = re.compile(r"\nCurrent date: \d{4}-\d{2}-\d{2}\nCurrent working directory: [^\n]*\Z")
_PI_SKILLS = re.compile(
    r"\n\nThe following skills provide specialized instructions for specific tasks\.\n.*?"
    r"\n<available_skills>\n(?:  <skill>\n.*?\n  </skill>\n)*</available_skills>\Z", re.DOTALL)


def pi_memory(system: str) -> str:
    """What of pi's system prompt comes from files: the appended prompt and the project
    context (and the whole prompt a SYSTEM.md gave), without its date, folder and skills."""
    tail = _PI_TAIL.search(system)
    body = system[:tail.start()] if tail else system
    at = body.rfind(PI_SKILLS_HEAD)
    if at >= 0 and _PI_SKILLS.match(body, at):
        body = body[:at]
    if body.startswith(PI_PROMPT_START):
        end = body.find(PI_PROMPT_END)
        if end >= 0:
            return body[end + len(PI_PROMPT_END):]
    return body


def pi_blocks(text: str, when: Literal["startup", "on-read"]) -> list[Block]:
    """The context files of a pi payload (`## PATH\\n\\nTEXT\\n\\n` after the head),
    split at each following `\\n\\n## /` (a file holding such a line splits wrongly: the
    payloads are the authority)."""
    at = text.find(PI_CONTEXT_HEAD)
    if at < 0:
        return []
    rest = text[at + len(PI_CONTEXT_HEAD):].removesuffix("\n\n")
    blocks = []
    for part in re.split(r"\n\n(?=## /)", "\n\n" + rest)[1:]:
        path, _, body = part[3:].partition("\n\n")
        blocks.append(Block(path=path, text=body, when=when))
    return blocks


def _pi(requests: list[Request], notes: list[str]) -> list[Payload]:
    turns = [r for r in requests if r.route == "openai-chat"
             and isinstance(r.body, dict) and r.body.get("messages")]
    if not turns:
        notes.append("no /v1/chat/completions request")
        return []
    first = turns[0].body["messages"]
    system = first[0].get("content") if first and first[0].get("role") == "system" else None
    if not isinstance(system, str):
        notes.append("no system message in the first request")
        return []
    memory = pi_memory(system)
    if any(r.body["messages"][0].get("content") != system for r in turns[1:]):
        notes.append("a later request changed the system message")
    return [Payload(where="messages[0] (system)", text=memory)] if memory else []


def _pi_read(requests: list[Request], read_path: Path | None,
             notes: list[str]) -> list[Payload]:
    """What pi's `read` answered beyond the file's own text (it adds nothing: [] expected)."""
    if read_path is None:
        return []
    answers = [m for r in requests if r.route == "openai-chat" and isinstance(r.body, dict)
               for m in r.body.get("messages") or [] if m.get("role") == "tool"]
    if not answers:
        notes.append("read never answered")
        return []
    text = "".join(_part_texts(answers[0].get("content")))
    try:
        own = read_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        own = None
    return [] if text == own else [Payload(where="tool (read)", text=text)]
