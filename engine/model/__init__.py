"""What is mapped: a spiking network as a neuron-level hypergraph (``network``), its
structured convolutions (``projection``) and its flat CSR view (``hypergraph``).
Workloads that build one are in ``engine.workloads``, network files in ``engine.io``."""
