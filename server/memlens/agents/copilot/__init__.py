"""GitHub Copilot CLI (profile `copilot@1.0`, verified on 1.0.102): its custom instructions."""
