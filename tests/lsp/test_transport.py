"""`MessageReader`, the server's framing, fed byte by byte and in hostile pieces."""

from __future__ import annotations

import json
from itertools import islice

from memlens.lsp.transport import MAX_HEADER_BYTES, Garbled, MessageReader, Received


def frame(value: object) -> bytes:
    body = json.dumps(value).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def events(reader: MessageReader, *chunks: bytes) -> list[Received | Garbled]:
    found: list[Received | Garbled] = []
    for chunk in chunks:
        reader.feed(chunk)
        # Bounded: a reader that loops on the same garbage fails here instead of hanging.
        found += list(islice(reader, 100))
    return found


def values(found: list[Received | Garbled]) -> list[object]:
    return [e.value for e in found if isinstance(e, Received)]


def test_messages_fed_one_byte_at_a_time() -> None:
    data = frame({"id": 1}) + b"\r\n" + frame({"id": 2, "text": "é\r\n\r\nContent-Length: 3"})
    found = events(MessageReader(), *(data[i:i + 1] for i in range(len(data))))
    assert found == [Received({"id": 1}), Received({"id": 2, "text": "é\r\n\r\nContent-Length: 3"})]


def test_header_names_are_case_insensitive_and_other_headers_ignored() -> None:
    body = b'{"id": 3}'
    data = (b"content-type: application/vscode-jsonrpc; charset=utf-8\r\n"
            b"CONTENT-LENGTH:   %d \r\n\r\n" % len(body) + body)
    assert events(MessageReader(), data) == [Received({"id": 3})]


def test_a_short_bad_header_alone_is_dropped_once() -> None:
    reader = MessageReader()
    found = events(reader, b"Content-Length: ten\r\n\r\n", frame({"id": 4}))
    assert [type(e) for e in found] == [Garbled, Received]
    assert values(found) == [{"id": 4}]


def test_two_content_lengths_are_garbage() -> None:
    found = events(MessageReader(), b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
                   frame({"id": 5}))
    assert isinstance(found[0], Garbled) and "two Content-Length" in found[0].reason
    assert values(found)[-1] == {"id": 5}


def test_a_header_straddling_two_reads_after_garbage() -> None:
    reader = MessageReader()
    message = frame({"id": 6})
    found = events(reader, b"\x00garbage" * 5000 + message[:10], message[10:])
    assert values(found) == [{"id": 6}]


def test_an_oversized_body_is_skipped_without_being_held() -> None:
    reader = MessageReader(max_message_bytes=1000)
    found = events(reader, b"Content-Length: 5000000\r\n\r\n")
    assert isinstance(found[0], Garbled) and "Content-Length 5000000" in found[0].reason
    for _ in range(50):
        found += events(reader, b"x" * 100_000)
        assert reader.buffered <= 100
    found += events(reader, frame({"id": 7}))
    assert values(found) == [{"id": 7}]


def test_a_header_block_that_never_ends_is_garbage() -> None:
    reader = MessageReader()
    found = events(reader, b"X-Long: " + b"a" * (2 * MAX_HEADER_BYTES))
    assert len(found) == 1 and isinstance(found[0], Garbled)
    assert reader.buffered <= 100
    assert values(events(reader, frame({"id": 8}))) == [{"id": 8}]


def test_declared_length_too_long_gives_the_rest_back() -> None:
    first, second = json.dumps({"id": 9}).encode(), frame({"id": 10})
    data = b"Content-Length: %d\r\n\r\n" % (len(first) + 12) + first + second
    found = events(MessageReader(), data)
    assert values(found) == [{"id": 9}, {"id": 10}]
    assert isinstance(found[0], Received) and "12 bytes too long" in found[0].note


def test_declared_length_far_too_long_is_cut_at_the_next_header() -> None:
    """Answered as soon as the next message arrives, not after a megabyte more."""
    first = json.dumps({"id": 14, "text": "Content-Length: 3\r\n"}).encode()
    found = events(MessageReader(), b"Content-Length: %d\r\n\r\n" % (len(first) + 10**6),
                   first, frame({"id": 15})[:30], frame({"id": 15})[30:])
    assert values(found) == [{"id": 14, "text": "Content-Length: 3\r\n"}, {"id": 15}]
    assert isinstance(found[0], Received) and "ran into the next message" in found[0].note


def test_a_large_body_arriving_in_pieces_is_searched_once() -> None:
    reader = MessageReader()
    body = json.dumps({"id": 16, "text": "x" * 3_000_000}).encode()
    data = b"Content-Length: %d\r\n\r\n" % len(body) + body
    chunks = [data[i:i + 65536] for i in range(0, len(data), 65536)]
    assert values(events(reader, *chunks)) == [{"id": 16, "text": "x" * 3_000_000}]


def test_declared_length_too_short_is_a_parse_error_then_resync() -> None:
    body = json.dumps({"id": 11, "padding": "x" * 30}).encode()
    data = b"Content-Length: %d\r\n\r\n" % (len(body) - 8) + body + frame({"id": 12})
    found = events(MessageReader(), data)
    assert isinstance(found[0], Garbled) and found[0].parse_error
    assert values(found) == [{"id": 12}]


def test_a_header_inside_a_body_is_read_again() -> None:
    inner = frame({"id": 13})
    data = b"Content-Length: %d\r\n\r\n" % (len(inner) + 4) + b"junk" + inner
    found = events(MessageReader(), data)
    assert values(found) == [{"id": 13}]


def test_bodies_that_are_not_json() -> None:
    for body in (b"", b"{", b"\xff\xfe", b"[" * 100_000, b"1" * 10_000):
        found = events(MessageReader(), b"Content-Length: %d\r\n\r\n" % len(body) + body)
        assert len(found) == 1 and isinstance(found[0], Garbled) and found[0].parse_error, body
