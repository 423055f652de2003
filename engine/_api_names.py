"""The names ``engine.api`` makes public, in a module of their own: ``engine/__init__.py``
lists them without importing the API (numpy and all: ``import engine`` stays light)."""

API_NAMES = (
    "Convolution",
    "Population",
    "SearchResult",
    "evolve",
    "link_flows",
    "load_network",
    "make_hardware",
    "names",
    "network_from_arrays",
    "read_mapping_file",
    "save_network",
    "simulate_pattern",
    "simulate_step",
    "swap_cores",
    "sweep_pattern",
)
