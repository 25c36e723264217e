"""The native engine: a checked ``Program`` as C, compiled into a shared object.

``c_codegen.CGen`` turns the program's parser and control blocks into C functions (the
same semantics as the Python engine in ``switch.engine``, for the constructs it
supports: anything else raises ``UnsupportedError`` naming the first construct it met,
so a program runs natively whole or not at all). ``c_tables`` packs the run-time
tables into the arrays the generated lookups read, ``build`` compiles and caches the
shared object, and the architecture (``switch.v1model.native``) supplies its externs'
code and the pipeline around the blocks. Like ``switch.engine``, this package never
imports an architecture.
"""
