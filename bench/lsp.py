"""Language-server benchmarks (docs/reference.md "Benchmarks"): cold index, hover and definition
latency against a trivial request on the same connection, edit-to-fresh-diagnostics, and the
server's RSS.

The client is a minimal JSON-RPC speaker over the server's stdio, so its own overhead is the
same for every request it times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

REQUESTS = 1000
HOVER_P50_TARGET, HOVER_P99_TARGET = 3.0, 10.0
COLD_INDEX_TARGET = 2.0  # the server's full index ≤ 2 × the bare walk of the same tree
EDIT_TARGET = 0.01  # edit-to-fresh-diagnostics ≤ 1/100 of the cold index
BURST_TARGET = 3.0  # a branch switch's burst → next hover answered ≤ 3 × a full rebuild
MATRIX_TARGET = 0.2  # memlens/matrix, its first call after a build too, ≤ 0.2 × a full rebuild
FIRST_INDEX_TARGET = 2.0  # the first index ≤ 2 × a later rebuild
BURST_MEMORY = ("GEMINI.md", "CLAUDE.md", "AGENTS.md", "CLAUDE.md", "AGENTS.md")
BURST_MEMORY_FILES, BURST_OTHER_FILES = 20, 500


class RpcClient:
    def __init__(self, command: list[str], env: dict[str, str]):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.responses: dict[int, Queue[dict[str, Any]]] = {}
        self.notifications: Queue[dict[str, Any]] = Queue()
        self.next_id = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(stream.read(length))
            if "id" in message and "method" in message:  # a request from the server
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message:
                self.responses.setdefault(message["id"], Queue()).put(message)
            else:
                self.notifications.put(message)

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def request(self, method: str, params: Any, timeout: float = 600) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        queue: Queue[dict[str, Any]] = self.responses.setdefault(ident, Queue())
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        try:
            return queue.get(timeout=timeout)
        finally:
            self.responses.pop(ident, None)

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except (OSError, Empty, subprocess.TimeoutExpired):
            self.proc.kill()


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _timed(action: Any, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def _first_import(root: Path) -> tuple[Path, int, int]:
    """A memory file with an @import outside code, and the import's 0-based line/column."""
    for path in sorted(root.rglob("GEMINI.md")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            column = line.find("@./")
            at_token = column == 0 or (column > 0 and line[column - 1] in " \t")
            if at_token and "`" not in line:
                return path, number, column + 2
    raise RuntimeError("the benchmark tree has no import")


def _burst_files(root: Path) -> dict[Path, str]:
    """A branch switch's worth of new files: 20 memory files of several agents (next to
    the tree's memory files, or in folders with none) and 500 other Markdown documents spread
    over the tree's folders."""
    folders = sorted({p.parent for p in root.rglob("*.md") if ".git" not in p.parts})
    files: dict[Path, str] = {}
    for k in range(BURST_MEMORY_FILES):
        name = BURST_MEMORY[k % len(BURST_MEMORY)]
        folder = folders[(k * 7919) % len(folders)]
        path = folder / name if not (folder / name).exists() else folder / f"burst-{k}" / name
        files[path] = f"# Burst rules {k}\nKeep the burst short.\n"
    for k in range(BURST_OTHER_FILES):
        folder = folders[(k * 104_729) % len(folders)]
        files[folder / f"burst-note-{k}.md"] = f"Note {k}: nobody imports this.\n"
    return files


def _burst(client: RpcClient, files: dict[Path, str], hover: Any) -> float:
    """Write `files`, report them in one didChangeWatchedFiles, time until the next hover is
    answered; then remove them (reported and waited for, untimed)."""
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    start = time.perf_counter()
    client.notify("workspace/didChangeWatchedFiles", {"changes": [
        {"uri": p.as_uri(), "type": 1} for p in files]})
    hover()
    elapsed = time.perf_counter() - start
    for path in files:
        path.unlink()
        if path.parent.name.startswith("burst-"):
            path.parent.rmdir()
    client.notify("workspace/didChangeWatchedFiles", {"changes": [
        {"uri": p.as_uri(), "type": 3} for p in files]})
    hover()
    return elapsed


def bare_pygls_rss(env: dict[str, str]) -> int:
    code = ("from pygls.lsp.server import LanguageServer; "
            "LanguageServer('bare', '1').start_io()")
    client = RpcClient([sys.executable, "-c", code], env)
    try:
        client.request("initialize", {"processId": os.getpid(), "capabilities": {},
                                      "rootUri": None})
        client.notify("initialized", {})
        time.sleep(0.3)
        return client.rss_kib()
    finally:
        client.close()


def idle_server_rss(env: dict[str, str]) -> int:
    """`memlens serve` with no workspace folder: the fixed cost of its code and libraries."""
    client = RpcClient([sys.executable, "-m", "memlens", "serve"], env)
    try:
        client.request("initialize", {"processId": os.getpid(), "capabilities": {},
                                      "rootUri": None, "workspaceFolders": []})
        client.notify("initialized", {})
        time.sleep(0.3)
        return client.rss_kib()
    finally:
        client.close()


def run_lsp(root: Path, home: str, env: dict[str, str], memory_bytes: int,
            walk_s: float) -> dict[str, Any]:
    client = RpcClient([sys.executable, "-m", "memlens", "serve"], env)
    try:
        uri = root.as_uri()
        client.request("initialize", {
            "processId": os.getpid(), "rootUri": uri, "capabilities": {},
            "workspaceFolders": [{"uri": uri, "name": "bench"}],
            # As the VS Code extension does: it sends the workspace's trust.
            "initializationOptions": {"memlens": {"home": home, "trusted": True}}})
        client.notify("initialized", {})
        client.request("memlens/refresh", {})  # waits for the first index
        first_index = _first_index_seconds(client)
        # A full rebuild, best of 3 (the round trip of the request is in it).
        rebuilds = []
        for _ in range(3):
            start = time.perf_counter()
            reply = client.request("memlens/refresh", {})
            rebuilds.append(time.perf_counter() - start)
        cold = min(rebuilds)
        indexed = reply.get("result", {}).get("fileCount")

        path, line, column = _first_import(root)
        doc = path.as_uri()
        text = path.read_text(encoding="utf-8")
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": doc, "languageId": "markdown", "version": 1, "text": text}})
        position = {"line": line, "character": column}
        # The trivial request: document symbols of an empty buffer (a full round trip through
        # the same dispatcher, with no work behind it).
        empty = (root / "empty-ping.md").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": empty, "languageId": "markdown", "version": 1, "text": ""}})
        trivial = _timed(lambda: client.request("textDocument/documentSymbol", {
            "textDocument": {"uri": empty}}), REQUESTS)
        hover = _timed(lambda: client.request("textDocument/hover", {
            "textDocument": {"uri": doc}, "position": position}), REQUESTS)
        definition = _timed(lambda: client.request("textDocument/definition", {
            "textDocument": {"uri": doc}, "position": position}), REQUESTS)

        # Break the import in the buffer, then pull diagnostics: the index was updated by the
        # didChange itself, so the pull returns the fresh result without any debounce.
        edits = []
        for version in range(2, 12):
            broken = text.replace("@./", f"@./missing-{version}-", 1)
            start = time.perf_counter()
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": doc, "version": version},
                "contentChanges": [{"text": broken}]})
            report = client.request("textDocument/diagnostic", {"textDocument": {"uri": doc}})
            edits.append(time.perf_counter() - start)
            codes = [d.get("code") for d in report.get("result", {}).get("items", [])]
            if "import-not-found" not in codes:
                raise RuntimeError(f"the edit did not produce a fresh diagnostic: {codes}")
        # memlens/matrix: the first answer, then the same question again (kept per index
        # generation), each against the full rebuild.
        start = time.perf_counter()
        client.request("memlens/matrix", {})
        matrix_first = time.perf_counter() - start
        matrix_again = min(_timed(lambda: client.request("memlens/matrix", {}), 5))
        # A branch switch: 520 files reported at once, then the next hover.
        burst = _burst(client, _burst_files(root), lambda: client.request(
            "textDocument/hover", {"textDocument": {"uri": doc}, "position": position}))
        rss = client.rss_kib()
    finally:
        client.close()
    bare = bare_pygls_rss(env)
    idle = idle_server_rss(env)
    p50 = _percentile(trivial, 0.5)
    edit = min(edits)
    return {
        "files_indexed": indexed,
        "cold_index_s": round(cold, 4),
        "cold_index_vs_walk": round(cold / walk_s, 3),
        "trivial_p50_ms": round(p50 * 1000, 3),
        "hover_p50_ratio": round(_percentile(hover, 0.5) / p50, 3),
        "hover_p99_ratio": round(_percentile(hover, 0.99) / p50, 3),
        "definition_p50_ratio": round(_percentile(definition, 0.5) / p50, 3),
        "definition_p99_ratio": round(_percentile(definition, 0.99) / p50, 3),
        "hover_p50_ms": round(_percentile(hover, 0.5) * 1000, 3),
        "definition_p50_ms": round(_percentile(definition, 0.5) * 1000, 3),
        "edit_to_diagnostics_ms": round(edit * 1000, 3),
        "edit_vs_cold_index": round(edit / cold, 5),
        "rss_mib": round(rss / 1024, 1),
        "bare_pygls_rss_mib": round(bare / 1024, 1),
        "idle_server_rss_mib": round(idle / 1024, 1),
        "index_rss_mib": round((rss - idle) / 1024, 1),
        "index_vs_memory_text": round((rss - idle) * 1024 / max(memory_bytes, 1), 1),
        "memory_text_mib": round(memory_bytes / 1024 / 1024, 2),
        "rss_target_mib": round((3 * memory_bytes / 1024 + bare) / 1024, 1),
        "first_index_s": round(first_index, 4),
        "first_index_vs_rebuild": round(first_index / cold, 3),
        "matrix_first_s": round(matrix_first, 4),
        "matrix_first_vs_rebuild": round(matrix_first / cold, 3),
        "matrix_again_s": round(matrix_again, 5),
        "matrix_again_vs_rebuild": round(matrix_again / cold, 4),
        "burst_files": BURST_MEMORY_FILES + BURST_OTHER_FILES,
        "burst_to_hover_s": round(burst, 4),
        "burst_vs_rebuild": round(burst / cold, 3),
    }


def _first_index_seconds(client: RpcClient) -> float:
    """The first index as the server timed it (memlens/ready's indexSeconds: from
    `initialized` to the index built)."""
    while True:
        message = client.notifications.get(timeout=600)
        if message.get("method") == "memlens/ready":
            return float(message["params"]["indexSeconds"])


def render(report: dict[str, Any]) -> list[str]:
    def verdict(value: float, target: float) -> str:
        return "PASS" if value <= target else "OVER"

    r = report
    return [
        "",
        f"language server ({r['files_indexed']} memory files indexed; trivial request "
        f"p50 {r['trivial_p50_ms']:.2f} ms)",
        f"  cold index (memlens/refresh)        {r['cold_index_s'] * 1000:9.1f} ms = "
        f"{r['cold_index_vs_walk']:.2f}× the bare walk   ≤ 2×  "
        f"{verdict(r['cold_index_vs_walk'], COLD_INDEX_TARGET)}",
        f"  hover      p50 / p99 vs trivial     {r['hover_p50_ratio']:5.2f}× / "
        f"{r['hover_p99_ratio']:5.2f}×   ≤ 3× / ≤ 10×  "
        f"{verdict(r['hover_p50_ratio'], HOVER_P50_TARGET)} / "
        f"{verdict(r['hover_p99_ratio'], HOVER_P99_TARGET)}",
        f"  definition p50 / p99 vs trivial     {r['definition_p50_ratio']:5.2f}× / "
        f"{r['definition_p99_ratio']:5.2f}×   ≤ 3× / ≤ 10×  "
        f"{verdict(r['definition_p50_ratio'], HOVER_P50_TARGET)} / "
        f"{verdict(r['definition_p99_ratio'], HOVER_P99_TARGET)}",
        f"  edit → fresh diagnostics            {r['edit_to_diagnostics_ms']:9.1f} ms = "
        f"{r['edit_vs_cold_index']:.4f} of the cold index   ≤ 0.01  "
        f"{verdict(r['edit_vs_cold_index'], EDIT_TARGET)}",
        f"  server RSS                          {r['rss_mib']:9.1f} MiB   target ≤ "
        f"{r['rss_target_mib']} MiB (3 × {r['memory_text_mib']} MiB of memory text + bare "
        f"pygls {r['bare_pygls_rss_mib']} MiB)  {verdict(r['rss_mib'], r['rss_target_mib'])}",
        f"    of which: idle memlens server     {r['idle_server_rss_mib']:9.1f} MiB   (no "
        f"workspace: code and libraries, pydantic included)",
        f"    of which: the index and its work  {r['index_rss_mib']:9.1f} MiB   = "
        f"{r['index_vs_memory_text']}× the memory text",
        f"  first index (memlens/ready)         {r['first_index_s'] * 1000:9.1f} ms = "
        f"{r['first_index_vs_rebuild']:.2f}× a rebuild   ≤ 2×  "
        f"{verdict(r['first_index_vs_rebuild'], FIRST_INDEX_TARGET)}",
        f"  memlens/matrix, first / again       {r['matrix_first_s'] * 1000:9.1f} ms / "
        f"{r['matrix_again_s'] * 1000:.1f} ms = {r['matrix_first_vs_rebuild']:.2f}× / "
        f"{r['matrix_again_vs_rebuild']:.3f}× a rebuild   ≤ 0.2×  "
        f"{verdict(r['matrix_first_vs_rebuild'], MATRIX_TARGET)} / "
        f"{verdict(r['matrix_again_vs_rebuild'], MATRIX_TARGET)}",
        f"  {r['burst_files']}-file burst → next hover     "
        f"{r['burst_to_hover_s'] * 1000:9.1f} ms = "
        f"{r['burst_vs_rebuild']:.2f}× a rebuild   ≤ 3×  "
        f"{verdict(r['burst_vs_rebuild'], BURST_TARGET)}",
    ]
