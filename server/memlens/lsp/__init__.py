"""The Memory Lens language server: thin LSP adapters over the engine's WorkspaceIndex."""
