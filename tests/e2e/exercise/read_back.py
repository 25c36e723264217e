"""Prints what a switch of the exercise network holds, for the end-to-end test: how its
device config arrived, its default action, multicast groups and clone sessions.

    python read_back.py HOST:PORT DEVICE_ID TABLE
"""

import sys

from p4.tmp import p4config_pb2
from p4.v1 import p4runtime_pb2

from controller import P4RuntimeClient

address, device_id, table = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with P4RuntimeClient(address, device_id, (0, 1), require_primary=False) as client:
    client.fetch_pipeline()
    request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
        device_id=device_id,
        response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.DEVICE_CONFIG_AND_COOKIE)
    config = client._require_stub().GetForwardingPipelineConfig(request).config
    wrapped = p4config_pb2.P4DeviceConfig()
    wrapped.ParseFromString(config.p4_device_config)
    print(f"device config: P4DeviceConfig reassign={wrapped.reassign} "
          f"device_data={len(wrapped.device_data)} bytes")
    default = client.read_default_action(table)
    print(f"default action: {default.action}")
    for group in client.read_multicast_groups():
        ports = ",".join(f"{r.port}/{r.instance}" for r in group.replicas)
        print(f"multicast group {group.group_id}: {ports}")
    for session in client.read_clone_sessions():
        ports = ",".join(str(r.port) for r in session.replicas)
        print(f"clone session {session.session_id}: {ports} "
              f"truncate {session.packet_length_bytes}")
