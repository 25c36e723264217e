"""Mininet topologies (``Topo`` classes declared as plain graphs) and the P4 switch node
classes that run the built-in switch or BMv2 in them."""
