"""Differential testing of memlens against every real agent (core.py; one gen_<agent>.py
per agent)."""
