"""`MemlensProtocol`: pygls's language-server protocol, answering every request it can identify.

pygls turns a message into its lsprotocol type inside `json.loads`' object hook; when that fails
(a position of the wrong type, a missing `textDocument`) the exception escapes the read loop, is
logged with a traceback, and the request is never answered: the client waits forever. Here the
transport (`transport.py`) hands over decoded JSON and this class:

- answers a message that is not a JSON-RPC 2.0 request with InvalidRequest (-32600) when it has
  an id to answer (the id is null when the id itself is unusable), a body that is not JSON with
  ParseError (-32700, id null);
- answers params that do not fit the method's type, and positions that are malformed or past the
  end of their document (`positions.py`), with InvalidParams (-32602) naming method and field;
- answers MethodNotFound (-32601) for a method without a handler whatever its params;
- answers requests before `initialize` with ServerNotInitialized (-32002) and requests after
  `shutdown` with InvalidRequest, as the LSP specification asks (pygls drops the latter);
- drops an unreadable notification with one log line.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    RPCNotification,
    RPCRequest,
)

from memlens.lsp.positions import document_uri, line_problem, positions_of, shape_problem

log = logging.getLogger("memlens.lsp.rpc")

PARSE_ERROR = types.ErrorCodes.ParseError
INVALID_REQUEST = types.ErrorCodes.InvalidRequest
INVALID_PARAMS = types.ErrorCodes.InvalidParams
SERVER_NOT_INITIALIZED = types.ErrorCodes.ServerNotInitialized

MsgId = int | str | None


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (type(value) is int)


def _camel(match: re.Match[str]) -> str:
    return match.group(1).upper()


def describe(error: BaseException) -> str:
    """cattrs' account of a structuring failure, with the wire's member names."""
    try:
        lines = cattrs.transform_error(error)
    except Exception:  # not a cattrs error
        lines = [str(error) or type(error).__name__]
    text = "; ".join(lines[:3]) + ("; ..." if len(lines) > 3 else "")
    return re.sub(r"_([a-z])", _camel, text)


class MemlensProtocol(LanguageServerProtocol):
    # The text a position refers to, for a document the client has not opened (the server
    # installs its own reader; None: open documents only).
    read_text: Callable[[str], str | None] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_seen = False

    # --- entry points for the transport --------------------------------------------------
    def parse_error(self, reason: str) -> None:
        """A framed body that is not JSON (the transport has logged it): JSON-RPC answers it
        with id null."""
        self._reply(None, PARSE_ERROR, f"Parse error: {reason}", logged=True)

    def receive(self, data: Any) -> None:
        """One decoded JSON value from the client."""
        if not isinstance(data, dict):
            what = "a batch (array)" if isinstance(data, list) else type(data).__name__
            self._invalid(None, f"Invalid request: expected a JSON-RPC object, got {what}")
            return
        has_id = "id" in data
        msg_id: MsgId = data.get("id") if _valid_id(data.get("id")) else None
        method = data.get("method")
        problem = None
        if data.get("jsonrpc") != "2.0":
            problem = 'Invalid request: "jsonrpc" must be "2.0"'
        elif "method" in data and not isinstance(method, str):
            problem = 'Invalid request: "method" must be a string'
        elif has_id and "method" in data and not _valid_id(data["id"]):
            problem = 'Invalid request: "id" must be an integer or a string'
        elif "method" in data and data.get("params") is not None and not isinstance(
                data["params"], (dict, list)):
            problem = 'Invalid request: "params" must be an object or an array'
        if problem:
            if has_id:
                self._invalid(msg_id, problem)
            else:
                log.warning("dropping a message: %s", problem)
            return
        if (has_id and isinstance(method, str) and self._has_handler(method)
                and self.get_message_type(method) is not None):  # an LSP request
            shape = shape_problem(data.get("params"))
            if shape:
                self._reply(msg_id, INVALID_PARAMS, f"Invalid params for {method}: {shape}")
                return
        try:
            message = self.structure_message(data)
        except JsonRpcException as err:
            if has_id and isinstance(method, str):
                self._reply(msg_id, err.code, err.message)
            else:
                log.warning("dropping %s: %s", method or "a message", err.message)
            return
        except Exception as err:  # a response we could not read, say
            log.warning("dropping a message: %s", describe(err))
            return
        self.handle_message(message)

    # --- pygls overrides -----------------------------------------------------------------
    def structure_message(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if "jsonrpc" not in data or not isinstance(method, str) or "error" in data:
            return super().structure_message(data)
        is_request = "id" in data
        message_type = self.get_message_type(method)
        if is_request and not self._has_handler(method):
            # Answered MethodNotFound by pygls, whatever its params.
            message_type = None
            data = {**data, "params": data.get("params")}
        if message_type is None:
            message_type = JsonRPCRequestMessage if is_request else JsonRPCNotification
        try:
            return self._converter.structure(data, message_type)
        except Exception as err:
            raise JsonRpcInvalidParams(f"Invalid params for {method}: {describe(err)}") from err

    def handle_message(self, message: Any) -> None:
        if (isinstance(message, RPCNotification) and not isinstance(message, RPCRequest)
                and not self._initialize_seen and message.method != types.EXIT):
            log.warning("dropping %s: the server has not been initialized", message.method)
            return
        if isinstance(message, RPCRequest) and message.jsonrpc == "2.0":
            method = message.method
            if method == types.INITIALIZE:
                self._initialize_seen = True
            elif not self._initialize_seen:
                self._reply(message.id, SERVER_NOT_INITIALIZED,
                            f"{method}: the server has not been initialized")
                return
            elif self._shutdown:
                self._invalid(message.id, f"{method}: the server is shutting down")
                return
            else:
                problem = self._document_problem(message.params)
                if problem:
                    self._reply(message.id, INVALID_PARAMS,
                                f"Invalid params for {method}: {problem}")
                    return
        super().handle_message(message)

    # --- helpers -------------------------------------------------------------------------
    def _has_handler(self, method: str) -> bool:
        return method in self.fm.builtin_features or method in self.fm.features

    def _document_problem(self, params: Any) -> str | None:
        uri = document_uri(params)
        if uri is None or not positions_of(params):
            return None  # nothing to check: no text read
        text = self._document_text(uri)
        return None if text is None else line_problem(params, text, uri)

    def _document_text(self, uri: str) -> str | None:
        """What the client's positions in `uri` refer to: its open buffer, else the file."""
        try:
            document = self.workspace.text_documents.get(unquote(uri))
            if document is not None:
                return str(document.source)
            return self.read_text(uri) if self.read_text is not None else None
        except Exception as err:  # no text, no line check: the handler decides
            log.debug("no text for %s: %r", uri, err)
            return None

    def _invalid(self, msg_id: MsgId, message: str) -> None:
        self._reply(msg_id, INVALID_REQUEST, message)

    def _reply(self, msg_id: MsgId, code: int, message: str, logged: bool = False) -> None:
        if not logged:
            log.warning("answering request %s with error %d: %s",
                        "(id unknown)" if msg_id is None else repr(msg_id), code, message)
        if msg_id is None:
            # JSON-RPC wants `"id": null` here; lsprotocol's ResponseErrorMessage would omit it.
            self._send_data({"jsonrpc": "2.0", "id": None,
                             "error": {"code": int(code), "message": message}})
        else:
            self._send_response(msg_id, error=types.ResponseError(code=code, message=message))
