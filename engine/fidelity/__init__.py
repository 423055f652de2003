"""Fidelity: how far to trust the model and the simulator, and how to make them closer.

``suites`` lists the runs to take to the hardware (the Loihi 2 runtime model's
microbenchmarks and validation sets); ``measurements`` reads the step times brought
back; ``predict`` computes what the model and the simulator say for them; ``stats``
compares (Pearson r, Kendall τ, MAPE); ``calibrate`` fits the constants of a preset from
the measurements, each constant from the runs its term bounds.
"""
