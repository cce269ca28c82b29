"""Model-driven parts of Memory Lens (google-genai): the chat agent and its tools."""
