"""`memlens verify`: the user's installed agents run offline against a local recording model
(fake_model.py, sandbox.py, capture.py; shared with the conformance harness) and what they
sent compared with the prediction (run.py). An adapter: it starts processes and opens a
socket on 127.0.0.1, so the pure engine never imports it (pyproject.toml's contracts)."""
