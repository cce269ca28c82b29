"""What Claude Code does to its auto-memory index before sending it (seen in 2.1.330's and
2.1.332's requests): characters nobody sees are dropped, line ends become `\\n`, and the
opening `<` of its own conversation tags (`<system-reminder>`, `</system-reminder>`,
`<command-name>` …) gets a backslash, so memory text cannot close or forge one of them.

Claude Code's own matcher also catches look-alike brackets and spacing tricks; this module
reproduces the plain ASCII form (KNOWN_DIFFERENCES.md)."""

from __future__ import annotations

import re
import unicodedata

from memlens.text.hidden import is_default_ignorable

# Kept although invisible or control: tab, line ends, ZWNJ, ZWJ, VS15, VS16.
_KEPT = frozenset((0x09, 0x0A, 0x0D, 0x200C, 0x200D, 0xFE0E, 0xFE0F))
_DROPPED_CATEGORIES = frozenset(("Cf", "Co", "Cn", "Cs"))

# The tags Claude Code 2.1.330 neutralises in memory text (read from its bundle, each one
# checked against a capture for the common ones).
NEUTRALISED_TAGS = (
    "bash-input", "bash-stdout", "bash-stderr", "bash-exit-code", "local-command-stdout",
    "local-command-stderr", "local-command-caveat", "command-name", "command-message",
    "command-args", "task-notification", "agent-message", "teammate-message",
    "cross-session-message", "remote-review", "slack-ping", "slack-tag-message", "tick",
    "fetched-web-content", "untrusted-widget-state", "coordinator-relay",
    "artifact-type-instructions", "cowritten-artifact-html", "artifact-file-content",
    "artifact-origin-notes", "artifact-stored-declaration", "system-reminder",
    "system_reminder", "function_results", "tool_use_error", "sandbox_violations",
    "persisted-output", "total_tokens", "user-prompt-submit-hook",
)
_TAG = re.compile(r"<(?=/?(?:" + "|".join(re.escape(t) for t in NEUTRALISED_TAGS)
                  + r")(?![\w-])|/?antml:)")


def is_dropped(ch: str) -> bool:
    cp = ord(ch)
    if cp in _KEPT:
        return False
    return (cp < 0x20 or 0x7F <= cp <= 0x9F or unicodedata.category(ch) in _DROPPED_CATEGORIES
            or is_default_ignorable(cp))


def strip_invisible(text: str) -> str:
    text = re.sub(r"\r\n?|[\u2028\u2029]", "\n", text)
    return "".join(ch for ch in text if not is_dropped(ch))


def neutralise_tags(text: str) -> str:
    return _TAG.sub("<\\\\", text)


def sanitize_memory(text: str) -> str:
    """The index text as Claude Code sends it."""
    return neutralise_tags(strip_invisible(text))
