"""Memory Lens benchmarks (SPEC §13): a synthetic monorepo generator and `memlens bench`."""
