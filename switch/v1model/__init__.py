"""The v1model architecture (BMv2 simple_switch) on the engine."""

from switch.v1model.switch import V1Switch

__all__ = ["V1Switch"]
