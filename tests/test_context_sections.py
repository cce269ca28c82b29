"""memlens/show's `sections`: where each file's text lies in a rendered context."""

from __future__ import annotations

from memlens.agents.gemini.render import concatenate_instructions
from memlens.lsp.custom import context_sections, source_links


def test_gemini_blocks_end_at_their_end_marker() -> None:
    text = concatenate_instructions([("/a/GEMINI.md", "one\n\ntwo"), ("/b/GEMINI.md", "x")])
    sections = [s.wire() for s in context_sections(text, ["/a/GEMINI.md", "/b/GEMINI.md"],
                                                   "gemini")]
    assert sections == [{"path": "/a/GEMINI.md", "startLine": 0, "endLine": 4},
                        {"path": "/b/GEMINI.md", "startLine": 6, "endLine": 8}]


def test_a_marker_in_a_file_s_text_is_not_a_section_unless_it_names_a_loaded_file() -> None:
    text = concatenate_instructions([("/a/GEMINI.md", "--- Context from: /elsewhere.md ---")])
    assert [s.path for s in context_sections(text, ["/a/GEMINI.md"], "gemini")] == [
        "/a/GEMINI.md"]


def test_truncated_text_ends_at_its_last_line() -> None:
    text = "--- Context from: /a/GEMINI.md ---\nbody\n\n"
    [section] = context_sections(text, ["/a/GEMINI.md"], "gemini")
    assert (section.start_line, section.end_line) == (0, 1)


def test_claude_sections_run_to_the_next_one() -> None:
    label = "(project instructions, checked into the codebase)"
    text = (f"Contents of /p/CLAUDE.md {label}:\n\nrules\n\n"
            f"Contents of /p/AGENTS.md {label}:\n\nagents")
    sections = [(s.path, s.start_line, s.end_line)
                for s in context_sections(text, ["/p/CLAUDE.md", "/p/AGENTS.md"], "claude")]
    assert sections == [("/p/CLAUDE.md", 0, 2), ("/p/AGENTS.md", 4, 6)]


def test_links_give_the_path_s_characters_in_utf16_units() -> None:
    path = "/a/\U0001f600/GEMINI.md"  # an emoji: two UTF-16 code units
    text = concatenate_instructions([(path, "body")])
    [link] = source_links(text, context_sections(text, [path], "gemini"))
    start = len("--- Context from: ")
    assert (link.path, link.line, link.start, link.end) == (path, 0, start, start + len(path) + 1)


def test_claude_links_start_after_contents_of() -> None:
    text = "Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\nx"
    [link] = source_links(text, context_sections(text, ["/p/CLAUDE.md"], "claude"))
    assert text.split("\n")[0][link.start:link.end] == "/p/CLAUDE.md"
