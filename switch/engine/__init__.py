"""The target-independent packet-processing engine.

``compiler.compile_program`` turns a checked ``Program`` into Python source (one
function per parser/control instance, actions inlined, tables applied through
``tables.Table`` objects) and runs it through ``compile()``; an architecture
(``switch.v1model``) supplies code for its externs through ``codegen.ArchHooks`` and
drives the generated block functions. ``runtime`` holds the control-plane value types
and errors shared with the runtime servers.
"""
