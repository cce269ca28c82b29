"""How a custom request (memlens/*) fails: with a JSON-RPC error whose code says what kind of
failure it is and whose message says why, in a sentence the editor can show as it is. Never a
result shaped like an error, never an exception that pygls would answer as InternalError with
a traceback.

- InvalidParams (-32602): the params do not fit the request (a missing or mistyped field, a
  uri that is not a file, a path outside every workspace folder).
- RequestFailed (-32803, LSP's code for it): the request is well formed but cannot be done
  now (no workspace folder is open, a skill extraction is already running).

A request whose outcome the user reads (a memory that was not saved, a skill the inbox cannot
accept, a chat turn that ended in an error) is not a failure of the request: its result model
carries that outcome (protocol/).
"""

from __future__ import annotations

from typing import Any, TypeVar

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

ModelT = TypeVar("ModelT", bound=BaseModel)


class InvalidParams(JsonRpcInvalidParams):
    """The params do not fit the request."""


class RequestFailed(JsonRpcException):
    """A well-formed request that cannot be done now."""

    CODE = int(types.LSPErrorCodes.RequestFailed)


def plain(value: Any) -> Any:
    """JSON-like data from what pygls hands over (dicts, or named tuples from older pygls)."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def parse_params(model: type[ModelT], raw: Any) -> ModelT:
    """The request's params as `model`, else InvalidParams naming the first bad field."""
    try:
        return model.model_validate(plain(raw))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "params"
        raise InvalidParams(f"invalid params for {model.__name__}: {where}: "
                            f"{first['msg']}") from err
