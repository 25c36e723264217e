"""The ``ina`` command line: one entry point with a subcommand per verb."""
