"""Mosaic: small-world hardware of Neuron Tiles and Routing Tiles (the routing paper, seed 003).

``grid``     the tile grid, hop distances H(NTᵢ, NTⱼ), 1-turn routes and shared-path trees
``memory``   routing memory per tile, the mappability check, what to remove when it fails
``profile``  the hop-distance sparsity profile P(θ), random networks of a profile, Fig. 2d
``rewire``   DeepR under a target profile P̂ (Alg. 2), usable inside any training loop
``demo``     a small recurrent spiking network trained with and without routing awareness

A Mosaic is a ``Hardware`` whose preset has a ``[mosaic]`` table (``mosaic-8x8``): its routers
are Neuron Tiles, so the engine's partitioners and placers put neurons on them.
"""

from engine.mosaic.grid import MosaicGrid
from engine.mosaic.memory import RoutingMemory, nt_of_neurons, removals, routing_memory
from engine.mosaic.profile import Profile, hop_matrix, profile_of, random_network, requirements
from engine.mosaic.rewire import RewireResult, Rewiring, rewire

__all__ = [
    "MosaicGrid",
    "Profile",
    "RewireResult",
    "Rewiring",
    "RoutingMemory",
    "hop_matrix",
    "nt_of_neurons",
    "profile_of",
    "random_network",
    "removals",
    "requirements",
    "rewire",
    "routing_memory",
]
