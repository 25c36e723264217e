"""Running one network over several servers: Mininet Cluster Edition
(``mininet.examples.cluster``) for the project's hosts and P4Runtime switches.

- ``spec``: the cluster file (``cluster.toml``: the servers, their ssh destinations,
  the tunnel type and the placement), read and checked before anything starts.
- ``placement``: which server runs which node (explicit, or Mininet's placers).
- ``ssh``: one server's ssh connection (a master connection that the nodes' sessions
  share), the remote commands' tag and the server's work directory.
- ``nodes``: hosts and switches (built-in or BMv2) on a remote server, and the links
  between servers (GRE or VXLAN tunnels).
- ``net``: ``ClusterMininet``, the network: preflight, build, cleanup on every server.
- ``guard``: runs on every remote server during a network's life and removes what the
  network left there (processes, interfaces, files) when it ends, even when the
  process that started it was killed.
"""
