"""Host-based all-reduce, the baselines of in-network aggregation.

- ``hosts.baselines.mesh``: the transport, ordered non-blocking sends and receives
  between ranks over stream sockets (``SocketMesh``), with byte counters;
  ``hosts.baselines.tcp`` sets one up over TCP between hosts,
  ``hosts.baselines.local`` between threads of one process (tests, benchmarks).
- ``hosts.baselines.collective``: settings, blocks and segments, the ``Collective``
  record; one module per algorithm: ``ring``, ``ps``, ``ps_sharded``, ``hd``;
  ``hosts.baselines.registry`` finds them by name.
- ``hosts.baselines.session``: one rank's all-reduce over TCP, timed from a start
  barrier, as ``ina agent --algo NAME`` runs it.
"""
