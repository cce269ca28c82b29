"""Decisions in memory and instruction files, read deterministically (docs/reference.md
"Rules that disagree").

A decision is an instruction that sets a choice with one answer — the JavaScript package
manager, the test command, the indentation, "never push" — found on one line of one file.
Each kind of decision is a module of `kinds/` with the phrasings it understands and the near
misses it must not read (in the style of a linter rule); `extract.decisions` runs them all over
a file's prose (code blocks, quotations, tables, headings and comments left out). Which agent
receives which decisions together is the workspace's question (workspace/conflicts.py)."""
