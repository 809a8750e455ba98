"""The server SDK (mcpkit.Server) and its building blocks."""
