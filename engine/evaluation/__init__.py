"""What a mapping costs: messages routed over the links (``traffic``), the flows through
one link (``flows``), the analytic model (``cost``), and its readings: stage by stage
(``stages``), against the roofline (``roofline``), end-signal distortion
(``distortion``). The predictors beside it are ``engine.predict``; the cycle-level
simulator is ``engine.simulate``."""
