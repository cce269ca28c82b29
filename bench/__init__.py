"""Memory Lens benchmarks (docs/reference.md "Benchmarks"): a synthetic monorepo generator and
`memlens bench`."""
