"""Training: ``paramine train``, its config, and the model folder it writes."""
