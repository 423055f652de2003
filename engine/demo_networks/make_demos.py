"""Regenerate the shipped demo network files from their generator specs.

.venv/bin/python engine/demo_networks/make_demos.py
"""

from pathlib import Path

from engine.io.network_file import save_network
from engine.specs import build_workload

DEMOS = {
    "tiled-identity-8x1024.npz": "linear-tiled-identity:M=8,N=1024",
    "qubo-1000.npz": "qubo:n=1000,density=0.1,rate=0.1",
    "conv-snn-16.npz": "conv-snn:size=16",
    "rand-4096.npz": "rand:n=4096,card=64",
}

if __name__ == "__main__":
    here = Path(__file__).parent
    for filename, spec in DEMOS.items():
        save_network(build_workload(spec), here / filename)
        print(f"{filename}: {spec}")
