"""The one reader for structured data others supply (`files/structured.py`, issue 23) and the
bounded probe (`files/probe.py`), directly: what each refuses, and what still reads."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memlens.files.probe import run_bounded
from memlens.files.structured import (
    MAX_DEPTH,
    MAX_YAML_CHARS,
    StructuredDataError,
    load_json_file,
    load_toml_file,
    parse_json,
    parse_yaml,
    parse_yaml_with,
)

DEEP = 600


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a":' * 5000 + "1"
                                  + "}" * 5000, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)])
def test_json_nested_too_deep_is_one_error(text: str) -> None:
    with pytest.raises(StructuredDataError, match="nested too deeply"):
        parse_json(text)


def test_json_at_the_depth_limit_and_brackets_in_strings_still_read() -> None:
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    assert parse_json(json.dumps({"s": "[" * 5000, "t": "\\\"[[["})) == {"s": "[" * 5000,
                                                                         "t": "\\\"[[["}
    assert parse_json('{"a": 1, // note\n "b": [2,],}', comments=True) == {"a": 1, "b": [2]}


@pytest.mark.parametrize("text", ["a: " + "[" * DEEP + "]" * DEEP,
                                  "a: " + "{b: " * DEEP + "1" + "}" * DEEP,
                                  # by indentation: deep enough, and under the size bound
                                  "".join(" " * i + "k:\n" for i in range(MAX_DEPTH + 50))
                                  + " " * (MAX_DEPTH + 50) + "k: 1\n"])
def test_yaml_nested_too_deep_is_one_error(text: str) -> None:
    with pytest.raises(StructuredDataError, match="nested too deeply") as caught:
        parse_yaml(text)
    assert caught.value.bound


def test_yaml_over_the_size_bound_is_one_error_before_parsing() -> None:
    # Frontmatter parsed in pure Python costs about 10 µs a byte: a 4 MB block was minutes.
    keys = "".join(f"k{i}: v{i}\n" for i in range(MAX_YAML_CHARS // 8))
    assert len(keys) > MAX_YAML_CHARS
    for parse in (parse_yaml, lambda text: parse_yaml_with(lambda t: t, text)):
        with pytest.raises(StructuredDataError, match="larger than 65536 characters") as caught:
            parse(keys)
        assert caught.value.bound
    assert parse_yaml(keys[:MAX_YAML_CHARS - 20].rpartition("\n")[0])["k0"] == "v0"


def test_invalid_yaml_keeps_its_position() -> None:
    with pytest.raises(StructuredDataError) as caught:
        parse_yaml("a: b\nc: [d\n")
    assert caught.value.line is not None and not caught.value.bound


def test_files_that_are_not_regular_are_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    with pytest.raises(StructuredDataError, match="not a regular file"):
        load_toml_file(str(fifo))
    with pytest.raises(StructuredDataError, match="folder"):
        load_json_file(str(tmp_path))
    assert load_json_file(str(tmp_path / "missing.json")) is None
    big = tmp_path / "big.json"
    big.write_text("[" + "0," * 3_000_000 + "0]")
    with pytest.raises(StructuredDataError, match="larger than"):
        load_json_file(str(big))


def test_toml_nested_too_deep_is_one_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(StructuredDataError, match="nested too deeply"):
        load_toml_file(str(config))




def test_a_probe_reads_up_to_its_cap_then_kills_the_group(tmp_path: Path) -> None:
    noisy = tmp_path / "noisy"
    pid_file = tmp_path / "pid"
    # the child of a child: killing the shell alone would leave `yes` running. The grandchild
    # writes its own pid before it prints anything (the shell writing `$!` after starting it
    # raced the cap on a loaded machine: killed before the pid was written)
    noisy.write_text(f"#!/bin/sh\nsh -c 'echo $$ > {pid_file}; exec yes 0.44.0' &\nwait\n")
    noisy.chmod(0o755)
    probed = run_bounded([str(noisy)], max_output=65536, timeout=60)
    assert probed.over_cap and probed.returncode is None and not probed.timed_out
    assert len(probed.output) == 65536
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while not _gone(pid):
        assert time.monotonic() < deadline, "the grandchild still runs"
        time.sleep(0.05)


def _gone(pid: int) -> bool:
    """No such process, or a zombie (killed, waiting for whoever reaps orphans)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_probe_past_its_deadline_is_killed_and_says_so(tmp_path: Path) -> None:
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nexec sleep 600\n")
    slow.chmod(0o755)
    probed = run_bounded([str(slow)], max_output=1024, timeout=0.5)
    assert probed.timed_out and probed.returncode is None


def test_a_probe_that_cannot_start_says_why(tmp_path: Path) -> None:
    probed = run_bounded([str(tmp_path / "missing")], max_output=1024, timeout=5)
    assert probed.failed and not probed.ok
    ok = run_bounded(["sh", "-c", "echo out; echo err >&2"], max_output=1024, timeout=30)
    assert ok.ok and ok.output == b"out\n" and ok.errors == b"err\n"
