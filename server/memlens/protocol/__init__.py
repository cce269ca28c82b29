"""Every pydantic model that crosses a boundary: the language server's custom requests and
notifications, the chat protocol (docs/chat-protocol.md), the CLI's --json outputs and the
chat transcripts on disk. Nothing else defines a payload.

- `wire`: the base class (camelCase on the wire) and `Inbound`, for what the server receives;
- `memory`: what the memory views show, in the CLI and in the editor (diagnostics, show, list,
  jit);
- `editor`: the language server's own requests and notifications (memlens/show,
  memlens/memoryTree, memlens/addMemory, …);
- `skills`: skills and the inbox (CLI and editor);
- `chat`: the chat agent's messages and its transcripts.

Not payloads of this protocol: the settings models (model.MemorySettings,
agent.config.ChatSettings), built from settings files and the editor's settings, and the
arguments of the chat's tools (agent/tools.py), which the model sends.

The extension's types are generated from these models (`scripts/gen_types.py` writes
extension/src/generated/protocol.ts; scripts/test.sh fails when that file is stale). The
package imports nothing on its own: each caller imports the module it needs, so a plain-text
`memlens show` does not build the editor's models.
"""
