"""Reading custom requests' params: pygls hands them over as named tuples, and they are
checked against a pydantic model (a mismatch is InvalidParams naming the field)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcInvalidParams


def plain(value: Any) -> Any:
    """A payload pygls decoded (named tuples inside) as plain JSON values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def parse_params(model: type[BaseModel], raw: Any) -> Any:
    data = raw if isinstance(raw, dict) else getattr(raw, "__dict__", raw)
    if hasattr(raw, "_asdict"):
        data = raw._asdict()
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "params"
        raise JsonRpcInvalidParams(f"invalid params for {model.__name__}: {where}: "
                                   f"{first['msg']}") from err
