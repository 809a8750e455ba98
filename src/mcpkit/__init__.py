"""mcpkit."""
