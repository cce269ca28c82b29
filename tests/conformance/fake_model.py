"""The recording fake model now lives in the package (``memlens.verify.fake_model``, used by
``memlens verify``); the harness keeps importing it from here under the same names."""

from memlens.verify.fake_model import (
    FINAL_TEXT,
    FakeModel,
    RecordedRequest,
    main,
    minimal_instance,
)

__all__ = ["FINAL_TEXT", "FakeModel", "RecordedRequest", "main", "minimal_instance"]

if __name__ == "__main__":
    main()
