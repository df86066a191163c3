"""The per-line checks' rules: scripts, lengths, junk, the language detectors and the pair judge.

The Prefilter stage runs them; the settings read their defaults and names.
"""
