"""mcpkit's own benchmarks (``python -m bench.engine``)."""
