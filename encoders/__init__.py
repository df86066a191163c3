"""Encoders: model resolution, the RunInference handler, pooling, training."""
