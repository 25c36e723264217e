"""Experiments: run switch-side and host-side all-reduce, record results, plot them."""
