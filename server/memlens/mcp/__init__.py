"""`memlens mcp`: Memory Lens as a Model Context Protocol server (docs/mcp.md), a thin adapter
like the command line and the language server: scope.py says where it may look, answers.py
renders the engine's answers, models.py is their schema, server.py the SDK's side. Only
`memlens mcp` imports it (the MCP SDK is loaded by no other command)."""
