"""How a mapping is made: what a partition, a placement and a mapping are
(``assignment``), the per-core resource model every step checks (``resources``), the
partitioners (``partition/``), the partition graph they produce (``partition_graph``,
``layered_graph``), node orderings (``ordering``) and the placers (``placement/``)."""
