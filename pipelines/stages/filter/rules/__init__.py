"""The filter stages' rules: the per-line checks (scripts, lengths, junk, languages), the judge.

They live with the stage that applies them (the Prefilter, ``../prefilter.py``);
the settings read their defaults and names, the report and the refresh their
records. None of them is a stage: they take lines and figures, not collections.
"""
