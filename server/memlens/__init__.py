"""Memory Lens: see, navigate and verify AI-agent memory files."""

__version__ = "0.1.0"
