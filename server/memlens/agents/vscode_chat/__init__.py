"""VS Code's own chat agent (VS Code 1.139, GitHub Copilot Chat 0.67): `agent.VsCodeChatAgent`."""
