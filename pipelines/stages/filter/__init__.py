"""Stages that drop lines or pairs: Prefilter, CoherenceFilter, PostFilter; rules in ``rules/``."""
