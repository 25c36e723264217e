"""The P4Runtime server of the built-in switch (see :mod:`switch.runtime.server`)."""

from switch.runtime.server import API_VERSION, P4RuntimeServer

__all__ = ["API_VERSION", "P4RuntimeServer"]
