"""The web inspector (``mcpkit inspect``, ``mcpkit dev``): a local page that drives a
:class:`~mcpkit.Client` to any server, for the person developing it."""
