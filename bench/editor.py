"""The editor figures of the benchmarks (docs/reference.md "Benchmarks"), measured in the real VS
Code of the end-to-end suite.

tests/e2e/startup.mjs (part of `bash scripts/vscode/run-e2e.sh`) writes
artifacts/e2e/timings.json: for a first ("cold": Python compiles the bundle's byte-code) and a
second ("warm") window on the demo, the time from extension activation to the server's
`memlens/ready` and to the first memlens diagnostic of the open GEMINI.md, next to VS Code's
own time to start its workbench. scripts/vscode/run-offline-e2e.sh writes
timings-offline.json the same way (the .vsix with a system python3, no network). `memlens
bench` prints them when present; it does not start a VS Code itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

READY_GOAL_MS = 2000  # server ready within 2 s of activation
DIAGNOSTIC_GOAL_MS = 1000  # first diagnostics within 1 s after the server is ready


def artifacts_dir() -> Path:
    env = os.environ.get("MEMLENS_E2E_ARTIFACTS")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "artifacts" / "e2e"


def load() -> dict[str, Any]:
    """The timings files found ({"timings.json": {...}, ...}); empty when none."""
    found: dict[str, Any] = {}
    folder = artifacts_dir()
    for name in ("timings.json", "timings-offline.json"):
        try:
            found[name] = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return found


def _ms(value: Any) -> str:
    return "—" if value is None else f"{float(value) / 1000:.2f} s"


def _verdict(value: Any, goal: int) -> str:
    return "" if value is None else "PASS" if float(value) <= goal else "OVER"


def render(editor: dict[str, Any]) -> list[str]:
    if not editor:
        return ["", "Editor: no artifacts/e2e/timings.json; run "
                "`bash scripts/vscode/run-e2e.sh tests/e2e/startup.mjs` to measure it."]
    out = ["", "Editor start-up in the real VS Code (code-server) of the e2e suite "
           f"(goals: ready ≤ {READY_GOAL_MS / 1000:g} s after activation, first diagnostic "
           f"≤ {DIAGNOSTIC_GOAL_MS / 1000:g} s after ready)"]
    header = ("run", "workbench", "activation", "→ ready", "→ 1st diag", "ready→diag",
              "→ Problems", "verdict")
    rows: list[tuple[str, ...]] = []
    for name, data in editor.items():
        label = "offline" if "offline" in name else "e2e"
        for round_name in ("cold", "warm"):
            r = data.get(round_name)
            if not r:
                continue
            w, e, u = r.get("workbench", {}), r.get("extension", {}), r.get("ui", {})
            ready = e.get("activationToReady")
            # The diagnostic may come before the ready notification is handled: count from
            # the later of ready and the file's opening, never below 0.
            after = e.get("firstDiagnosticAfterReadyOrOpen")
            after = None if after is None else max(0.0, float(after))
            verdicts = [v for v in (_verdict(ready, READY_GOAL_MS),
                                    _verdict(after, DIAGNOSTIC_GOAL_MS)) if v]
            rows.append((f"{label} {round_name}", _ms(w.get("navigationToWorkbenchStarted")),
                         _ms(e.get("navigationToActivation")), _ms(ready),
                         _ms(e.get("activationToFirstDiagnostic")), _ms(after),
                         _ms(u.get("activationToProblemsShown")),
                         "OVER" if "OVER" in verdicts else "PASS" if verdicts else ""))
        out.append(f"  {name}: {data.get('when', '?')}, python {data.get('python', '?')}, "
                   f"load average {data.get('load', '?')}")
    widths = [max(len(x[i]) for x in [header, *rows]) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out += ["", line(header), line(tuple("-" * w for w in widths)), *(line(r) for r in rows),
            "workbench and activation: from the page's navigation start; the other columns from "
            "the extension's activation (→ Problems: the row seen in the Problems panel)."]
    return out
