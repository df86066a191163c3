"""Beam pipelines of paramine, their options, transforms and the CLI."""
