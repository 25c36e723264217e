"""Exceptions raised by the port layer.

Every message is meant to be shown to a user as is (``ina switch`` prints it without a
traceback), so it names the offending interface, port or spec text.
"""

from __future__ import annotations


class PortError(Exception):
    """A port cannot be opened or used, or the port configuration is invalid."""


class SpecError(PortError, ValueError):
    """A command-line spec (``-i PORT@IFACE``, ``--impair ...``) or a config value is bad."""
