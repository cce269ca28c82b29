"""One agent run against the fake model, in a network namespace when possible: now in the
package (``memlens.verify.sandbox``, used by ``memlens verify``); the harness keeps importing
it from here under the same names."""

from memlens.verify.sandbox import (
    REPO,
    Job,
    JobResult,
    Request,
    can_isolate,
    run_job,
)

__all__ = ["REPO", "Job", "JobResult", "Request", "can_isolate", "run_job"]
