"""What MeshScope uses when a user names nothing (the built-in demo), importable without
loading numpy or scipy, so the command line can build its help from them."""

DEFAULT_NETWORK = "sparse-mlp-1"  # the built-in demo
DEFAULT_HARDWARE = "loihi2"
DEFAULT_PLACER = "packed-row"
