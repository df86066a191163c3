"""Stages that cut on scores: CalibrateThreshold, MarginScore, ThresholdFilter."""
