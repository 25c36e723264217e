"""``p4.tmp``: the P4DeviceConfig message clients wrap BMv2 device configs in."""
