"""Stages that encode texts and score pairs: EncodeTexts, ScorePairs."""
