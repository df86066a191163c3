"""The built-in demo bitext."""
