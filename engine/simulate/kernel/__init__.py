"""The cycle loop: input-queued virtual-channel routers, flit by flit, in numba kernels.

Each router follows BookSim2's ``iq_router`` stage by stage. A head flit that reaches an
idle input VC is routed (``routing_delay``), then competes for an output VC of the port(s)
its route names (VC allocation, ``vc_alloc_delay``), then each flit competes for the switch
(``sw_alloc_delay``) once the downstream buffer has a credit for it, crosses the switch
(``st_delay``) and the link (its latency), and is read by the next router one cycle later.
A flit leaving an input buffer sends a credit upstream (link latency + 1, then
``credit_delay``). Allocators are iSLIP (BookSim2's ``islip``, ``alloc_iters`` iterations)
or separable input-first round robin; an input port competes for the switch with one VC per
output, chosen round robin as BookSim2 does. An output VC is free again once the tail has
left. Off-chip outputs send one flit every ``serialization`` cycles.

Every packet carries a dimension order (``PK_ROUTE``: X then Y, or Y then X; the routing's,
or for O1TURN drawn per packet, ``engine.hardware.routing``) and a *range* of its destination
terminals in ``dest``, sorted in that order (X, Y, port for X then Y). Where the routing
gives each order its own virtual channels (``cfg.vmask_x``, ``cfg.vmask_y``, as BookSim2's
``xy_yx_mesh``), a head asks only for its order's VCs of a router link. A router splits the
range into branches, one per output port; a packet with one destination has one branch
(unicast), a multicast packet branches where its destinations' routes part, and the router
forwards each flit on every branch before it frees the flit's buffer slot. A branch that
carries only part of the range travels on as a new packet record (``PK_PARENT`` is the
packet the source sent).

Terminals create packets by a Bernoulli process (drawn as geometric gaps) or receive a
mapping's packets by release time, and inject one flit per cycle, taking a free VC round
robin for each packet (as BookSim2's traffic manager does). At the sink a flit is
*processed*: at once (sink mode 0) or by the core's server, one packet after another, the
packet for destination ``dest[k]`` taking ``dsvc[k]`` cycles; its buffer slots' credits go
back only then, so a busy core pushes back into the mesh.

The loop is event-driven but cycle-exact: a router is visited only in the cycles in which
something is due there (a flit or a credit arrives, or a VC may take its next stage). Due
routers wait on a timing wheel of ``WHEEL`` cycles (later ones in a heap); a cycle in which
nothing is due anywhere is skipped. A VC that waits for a free output VC or a credit is not
visited, and the cycles it waits are added to its router's stall counters when it moves
again. The order in which a cycle's routers are visited does not matter: everything one
router sends another arrives in a later cycle. A router visited in cycle t goes on with its
next cycles at once while they are within ``cfg.ahead`` of t (``machine.run_ahead``: no
flit or credit still to be sent can reach it before then), never past the span's end.

Parallel meshes (``Topology.meshes``) are copies of the router grid side by side in the
same arrays: a router's ``M_X``/``M_Y`` are its position within its copy and a terminal's
``NS_X``/``NS_Y`` its grid position, so routing keeps a packet on the copy its source
injected into, and every copy's local output port delivers to the core. The copies share
only the cores: a core's server (sink mode 1) takes every copy's packets in the order they
arrive, and since one copy's router may have run ahead of another's, a tail waits in ``sq``
until the cycle after it left its router, when every router has simulated that cycle, and
is served then, in (arrival, router, port) order (``_sq_push``, ``_serve_due``).

Runs whose packets have one destination each and whose allocations take one cycle go through
the unicast router instead (``machine.Machine`` chooses; ``cfg.unicast``):
``router._router`` picks its pipeline once, and the results are the same, bit for bit, with
less bookkeeping. A sender writes a flit straight into the buffer it arrives in, with its
cycle (``_put``), and routes a head that reaches an idle VC, so there is no link queue to
read and the router is due only when the flit can act; the busy VCs and the held output VCs
are bit masks; each output VC's returning credits wait in its own ring, counted when asked
for (``_credits``), and wake the router only when a VC waits for them; a pass over the VCs
picks them by masks, not by a branch per VC. It is over twice as fast on uniform traffic
(docs/performance.md). A trace reads a port's occupancy as a flit leaves it and at a
window's end (``_seen``: the flits in its buffers that have arrived), and a tracked packet's
hop starts as its head is put into the next buffer.

State is flat: every router's, terminal's and packet's record is a block of an int64 array,
laid out by ``engine.simulate.records``. ``run`` advances a whole span of cycles per call
and returns a status, so Python only steps in to grow arrays, change phase or stop.

The modules follow a router's pipeline and what feeds it:

- ``base``: unsigned indices and the wheel of due routers (``_schedule``);
- ``sources``: packet generation (synthetic sources, a mapping's release), ``injection``;
- ``routing``: route computation; ``allocators``: iSLIP and separable allocators, the VC and
  switch allocations; ``links``: buffers, link and credit queues, credit return;
- ``router``: a router's cycle, one function per stage, and the switch traversal;
- ``sinks``: terminals taking flits, servers, retired records; ``stats``: stall counters,
  trace windows, the tracked packet, the scans the figures are read from;
- ``loop``: ``run``, the cycle loop.

``run`` takes typed tuples (``records.Config``, ``Net``, ``State``, ``Trace``, ``Sources``,
``Wheel``, ``Scratch``, ``Span``), which the stages pass on. The small helpers and the stages
are inlined by LLVM (``forceinline``), not by numba's own IR inliner (``inline="always"``):
the machine code is the same or better, and numba does not re-type a body at every call
site, which made compiling ``run`` take over three minutes of the install's warm-up.

numba's cache of a kernel checks only its own source file: ``run`` (in ``loop.py``) holds the
code of every stage it inlines, so after changing any module here (or ``records.py``), touch
``loop.py`` (or run ``python -m engine.warm`` on a clean cache).
"""

from engine.simulate.kernel.loop import run, workspace
from engine.simulate.kernel.sources import rng_seed
from engine.simulate.kernel.stats import close_windows, columns, latency_load, measured_pending

__all__ = [
    "close_windows", "columns", "latency_load", "measured_pending", "rng_seed", "run",
    "workspace",
]  # fmt: skip
