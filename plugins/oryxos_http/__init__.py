"""Built-in HTTP tools (placeholder while the tools are written)."""
