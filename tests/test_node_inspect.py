"""`js_inspect_string` against Node's own `util.inspect` (the form a failed fs call's message
quotes a path in: a NUL in an import path, found by the Gemini CLI 0.43 differential runner)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from memlens.files.nodecompat import js_inspect_string, node_null_byte_message

_PIECES = ["a", "'", '"', "`", "${", "\\", "\x00", "\n", "\t", "\r", "\x08", "\x0b", "\x7f",
           "\x85", "é", "😀", "\u2028", "\x1b", " ", "\ud800", "\udcff", "/ws/notes.md"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_strings_quoted_as_node_quotes_them() -> None:
    rng = random.Random(20)
    texts = ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 7))) for _ in range(800)]
    texts = [t for t in texts if "\ud800\udcff" not in t]  # a pair is one character in Node
    script = ("const u = require('node:util'); const xs = JSON.parse(process.argv[1]);"
              "process.stdout.write(JSON.stringify(xs.map((x) => u.inspect(x))));")
    done = subprocess.run(["node", "-e", script, json.dumps(texts)], capture_output=True,
                          text=True, timeout=60, check=True)
    theirs = json.loads(done.stdout)
    assert [js_inspect_string(t) for t in texts] == theirs


def test_null_byte_message() -> None:
    assert node_null_byte_message("/ws/notes.md\x00x") == (
        "The argument 'path' must be a string, Uint8Array, or URL without null bytes. "
        "Received '/ws/notes.md\\x00x'")
