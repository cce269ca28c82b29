"""Gemini CLI (0.43 and 0.44+, verified on 0.61.0): how it finds `GEMINI.md` files
(`discovery`), follows `@imports` (`imports`), applies ignore files (`ignore`), reads its settings
(`settings`, `jsonc`) and folder trust (`trust`), renders memory (`render`), loads subfolder
memory just in time (`jit`), saves memory (`writing`), loads and checks skills (`skills`,
`skillcheck`, `inbox`), keeps its per-project folder (`projects`) and explains itself
(`diagnostics`). `agent.GeminiAgent` is its face behind `agents.base.MemoryAgent`."""
