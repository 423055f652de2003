"""The cycle-level mesh simulator: flits, virtual channels, credits, back-pressure."""
