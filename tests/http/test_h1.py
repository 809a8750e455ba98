"""Our HTTP/1.1 client codec (``mcpkit._http._h1``): request bytes, response framing.

The codec has no I/O; these tests feed it bytes as a server would send them, whole and
split at every offset, and check the events, the connection's reuse and the refusals
(RFC 9112's framing rules; a malicious or broken server must not smuggle a response or
grow memory without bound). The client on real sockets is exercised by the rest of
tests/http and tests/hostile.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mcpkit
from mcpkit._http._h1 import (
    CLOSED,
    END,
    MAX_HEAD,
    NEED_DATA,
    ResponseHead,
    ResponseReader,
    encode_request,
)


def _events(reader: ResponseReader, *chunks: bytes, eof: bool = False) -> list[object]:
    """Every event after feeding each chunk (and EOF), body bytes joined, NEED_DATA dropped."""
    out: list[object] = []
    pending = [*chunks, b""] if eof else list(chunks)
    for chunk in pending:
        reader.feed(chunk)
        while True:
            ev = reader.next_event()
            if ev is NEED_DATA:
                break
            if type(ev) is bytes and out and type(out[-1]) is bytes:
                out[-1] += ev
            else:
                out.append(ev)
            if ev is END or ev is CLOSED:
                return out
    return out


def _read(wire: bytes, method: str = "POST", eof: bool = False) -> tuple[list[object], bool]:
    reader = ResponseReader()
    reader.start(method)
    return _events(reader, wire, eof=eof), reader.reusable


CHUNKED = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    b"7\r\nevent: \r\n"
    b'1c;ext=1\r\ndata: {"id":1,"result":{}}\n\n\r\n'
    b"0\r\nx-trailer: yes\r\n\r\n"
)


def test_request_bytes() -> None:
    wire = encode_request(
        "POST", "/mcp?x=1", {"host": "h:1", "content-length": "2", "x-a": " padded\t"}, b"{}"
    )
    assert wire == (
        b"POST /mcp?x=1 HTTP/1.1\r\nhost: h:1\r\ncontent-length: 2\r\nx-a: padded\r\n\r\n{}"
    )


@pytest.mark.parametrize(
    ("method", "target", "headers"),
    [
        ("POST", "/mcp", {"x-a": "ok\r\nx-injected: 1"}),  # a header of its own
        ("POST", "/mcp", {"x-a": "nul\x00"}),
        ("POST", "/mcp", {"bad name": "v"}),
        ("POST", "/mcp", {"x-a": "snowman \u2603"}),  # not Latin-1
        ("POST", "/m cp", {}),
        ("POST", "/mcp\r\nx: 1", {}),
        ("PO ST", "/mcp", {}),
    ],
)
def test_a_request_that_could_smuggle_a_line_is_refused(
    method: str, target: str, headers: dict[str, str]
) -> None:
    with pytest.raises(mcpkit.HTTPError):
        encode_request(method, target, headers, b"")


def test_content_length_body_and_reuse() -> None:
    events, reusable = _read(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello")
    head = events[0]
    assert isinstance(head, ResponseHead)
    assert (head.status, head.reason, head.headers) == (
        200,
        "OK",
        [("content-length", "5"), ("x-a", "1")],
    )
    assert events[1:] == [b"hello", END]
    assert reusable


def test_chunked_body_with_extensions_and_trailers() -> None:
    events, reusable = _read(CHUNKED)
    assert events[1:] == [b'event: data: {"id":1,"result":{}}\n\n', END]
    assert reusable


@given(st.lists(st.integers(min_value=1, max_value=len(CHUNKED) - 1), max_size=8))
def test_any_split_gives_the_same_events(cuts: list[int]) -> None:
    bounds = [0, *sorted(set(cuts)), len(CHUNKED)]
    pieces = [CHUNKED[a:b] for a, b in itertools.pairwise(bounds)]
    reader = ResponseReader()
    reader.start("POST")
    assert _events(reader, *pieces) == _read(CHUNKED)[0]
    assert reader.reusable


def test_one_byte_at_a_time() -> None:
    wire = b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc"
    reader = ResponseReader()
    reader.start("GET")
    events = _events(reader, *(wire[i : i + 1] for i in range(len(wire))))
    assert events[1:] == [b"abc", END]


def test_the_connection_is_reused_for_the_next_request() -> None:
    reader = ResponseReader()
    reader.start("POST")
    assert _events(reader, b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")[1:] == [END]
    reader.next_cycle()
    reader.start("GET")
    assert _events(reader, b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx")[1:] == [b"x", END]


def test_a_second_request_before_the_response_is_refused() -> None:
    reader = ResponseReader()
    reader.start("POST")
    with pytest.raises(mcpkit.HTTPError, match="already under way"):
        reader.start("POST")
    with pytest.raises(mcpkit.HTTPError, match="cannot take another"):
        reader.next_cycle()


@pytest.mark.parametrize(
    ("wire", "reusable"),
    [
        (b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n", False),
        (b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\ncontent-length: 0\r\n\r\n", False),
        (b"HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n", False),  # 1.0: closes by default
        (b"HTTP/1.1 200 OK\r\nconnection: closed-caption\r\ncontent-length: 0\r\n\r\n", True),
        (b"HTTP/1.1 204 No Content\r\n\r\n", True),
        (b"HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n", True),  # no body
        (b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nxEXTRA", False),  # bytes beyond it
    ],
)
def test_when_the_connection_can_be_reused(wire: bytes, reusable: bool) -> None:
    events, got = _read(wire)
    assert events[-1] is END
    assert got is reusable


def test_head_response_has_no_body_whatever_its_length() -> None:
    events, reusable = _read(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n", method="HEAD")
    assert events[1:] == [END]
    assert reusable


def test_informational_heads_are_skipped() -> None:
    events, _ = _read(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"
        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    )
    assert isinstance(events[0], ResponseHead) and events[0].status == 200
    assert events[1:] == [b"ok", END]


def test_body_to_the_end_of_the_connection() -> None:
    events, reusable = _read(b"HTTP/1.1 200 OK\r\n\r\nuntil the end", eof=True)
    assert events[1:] == [b"until the end", END]
    assert not reusable  # the end of the connection was the end of the body


def test_unknown_transfer_coding_reads_to_the_end() -> None:
    events, reusable = _read(b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nzzz", eof=True)
    assert events[1:] == [b"zzz", END]
    assert not reusable


def test_chunked_wins_over_a_content_length_and_the_connection_closes() -> None:
    events, reusable = _read(
        b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n"
        b"2\r\nhi\r\n0\r\n\r\n"
    )
    assert events[1:] == [b"hi", END]
    assert not reusable  # both framings: never trust the connection after it


def test_repeated_equal_content_lengths_are_one() -> None:
    events, _ = _read(b"HTTP/1.1 200 OK\r\ncontent-length: 2, 2\r\ncontent-length: 2\r\n\r\nok")
    assert events[1:] == [b"ok", END]


def test_obsolete_line_folding_joins_the_value() -> None:
    events, _ = _read(b"HTTP/1.1 200 OK\r\nx-a: one\r\n  two\r\ncontent-length: 0\r\n\r\n")
    head = events[0]
    assert isinstance(head, ResponseHead)
    assert head.headers[0] == ("x-a", "one two")


def test_a_closed_connection_before_any_answer_is_closed() -> None:
    reader = ResponseReader()
    reader.start("POST")
    assert _events(reader, eof=True) == [CLOSED]


@pytest.mark.parametrize(
    ("wire", "eof", "match"),
    [
        (b"HTTP/2 200 OK\r\n\r\n", False, "status line"),
        (b"HTTP/1.1 20 OK\r\n\r\n", False, "status line"),
        (b"ICY 200 OK\r\n\r\n", False, "status line"),
        (b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", False, "header line"),
        (b"HTTP/1.1 200 OK\r\nbad name: v\r\n\r\n", False, "header line"),
        (b"HTTP/1.1 200 OK\r\nx-a: bell\x07\r\n\r\n", False, "header line"),
        (b"HTTP/1.1 200 OK\r\n folded-first: v\r\n\r\n", False, "header line"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\n", False, "content-length"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n", False, "content-length"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 0x10\r\n\r\n", False, "content-length"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 99999999999999999999\r\n\r\n", False, "length"),
        (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", False, "101"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", False, "chunk size"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n-1\r\n", False, "chunk size"),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhiX\r\n",
            False,
            "longer than its size",
        ),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort", True, "inside a response body"),
        (b"HTTP/1.1 200 OK\r\ncont", True, "inside a response head"),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab",
            True,
            "inside a chunked body",
        ),
    ],
)
def test_broken_responses_are_refused(wire: bytes, eof: bool, match: str) -> None:
    with pytest.raises(mcpkit.HTTPProtocolError, match=match):
        _read(wire, eof=eof)


def test_an_endless_head_is_refused_at_the_limit() -> None:
    reader = ResponseReader()
    reader.start("GET")
    reader.feed(b"HTTP/1.1 200 OK\r\n")
    line = b"x-pad: " + b"a" * 1000 + b"\r\n"
    with pytest.raises(mcpkit.HTTPProtocolError, match="head over"):
        for _ in range(MAX_HEAD // len(line) + 2):
            reader.feed(line)
            assert reader.next_event() is NEED_DATA


def test_an_endless_chunk_size_line_is_refused() -> None:
    reader = ResponseReader()
    reader.start("GET")
    reader.feed(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
    assert isinstance(reader.next_event(), ResponseHead)
    with pytest.raises(mcpkit.HTTPProtocolError, match="too long"):
        for _ in range(10):
            reader.feed(b"1" + b";" * 500)
            assert reader.next_event() is NEED_DATA


def test_endless_trailers_are_refused() -> None:
    reader = ResponseReader()
    reader.start("GET")
    reader.feed(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n")
    assert isinstance(reader.next_event(), ResponseHead)
    with pytest.raises(mcpkit.HTTPProtocolError, match="trailers over"):
        for _ in range(MAX_HEAD // 100 + 2):
            reader.feed(b"x-t: " + b"b" * 93 + b"\r\n")
            assert reader.next_event() is NEED_DATA


def test_no_event_without_a_request() -> None:
    with pytest.raises(mcpkit.HTTPError, match="no request"):
        ResponseReader().next_event()
