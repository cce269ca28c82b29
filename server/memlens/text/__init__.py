"""Shared by every agent — memory text: `@path` references and code regions (`references`),
YAML frontmatter (`frontmatter`), hidden characters and HTML comments (`hidden`), offsets
to line and column (`textpos`), a rule's comma-separated glob list (`globlist`)."""
