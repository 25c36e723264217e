"""``ina switch``: the built-in P4 switch as a process (a drop-in for simple_switch_grpc).

- :mod:`.options` -- the command line (switch options, then target options after ``--``).
- :mod:`.startup` -- fail-fast checks and program loading.
- :mod:`.main` -- start-up order, the main loop, signals and shutdown.
- :mod:`.dataplane` -- ports -> switch -> ports, PacketIn/PacketOut, drop counters.
- :mod:`.trace` -- per-packet traces for ``--log-console`` / ``--log-file``.
- :mod:`.control`, :mod:`.commands` -- the run-time control socket (JSON lines).
- :mod:`.switch_cli` -- ``ina switch-cli``, its client.
"""
