"""The environment variables that move an agent's global folder, as the engine reads them: this
process's environment, except inside `environment_overrides`.

`memlens verify` gives an agent's run scrubbed copies of the user's global folders and points
the run's variables at them; the prediction of that run is made with the same values
(memlens.verify.run), in the predicting thread only (a context variable), so the other agents'
runs and the editor's service keep reading the process's own environment."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

_OVERRIDES: ContextVar[Mapping[str, str]] = ContextVar(
    "memlens_environment_overrides", default=MappingProxyType({}))


def env_value(name: str) -> str | None:
    """The variable's value (None: not set; an empty value is set)."""
    overrides = _OVERRIDES.get()
    if name in overrides:
        return overrides[name]
    return os.environ.get(name)


@contextmanager
def environment_overrides(values: Mapping[str, str]) -> Iterator[None]:
    """`env_value` answers with `values` first, in this thread, until the block ends."""
    token = _OVERRIDES.set(MappingProxyType({**_OVERRIDES.get(), **values}))
    try:
        yield
    finally:
        _OVERRIDES.reset(token)
