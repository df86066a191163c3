"""Inference: the RunInference handler and the backends it encodes with."""
