"""The params of a custom request (memlens/*), read into their protocol model: params that do
not fit are InvalidParams (-32602) naming the first bad field."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcInvalidParams

ModelT = TypeVar("ModelT", bound=BaseModel)


class InvalidParams(JsonRpcInvalidParams):
    """The params do not fit the request."""


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
