"""pi 0.73 (`@mariozechner/pi-coding-agent`): `load.py` (what it sends at start), `agent.py`."""
