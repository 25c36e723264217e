"""``p4.tmp.p4config_pb2.P4DeviceConfig``, as PI's generated module offers it.

The definition is ina-emulator's (``switch.runtime.device_config``), registered in the
default descriptor pool as generated code would be.
"""

from google.protobuf import descriptor_pool

from switch.runtime.device_config import FILE_NAME, p4config_message_class

P4DeviceConfig = p4config_message_class(descriptor_pool.Default())
DESCRIPTOR = descriptor_pool.Default().FindFileByName(FILE_NAME)
