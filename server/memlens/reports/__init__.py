"""Shared by every agent — figures and reports: chars, bytes and each agent's token estimate
(`budgets`), diagnostics as a SARIF log (`sarif`)."""
