"""`memlens`: the engine on the command line (docs/reference.md "The command line"), one module per
command.

`main` (main.py) builds the parser from each command's module and dispatches; `common.py`
holds the options and settings every command shares. A command imports the engine parts it
needs only when it runs: `memlens --version` loads no engine, `show` no checker, and only
`serve`, `chat` and `add --memory-manager` load the language server or google-genai (the
commands that run an agent live in agent_commands.py, their terminal side in terminal.py).
"""

from memlens.cli.main import main

__all__ = ["main"]
