"""Data-parallel training through the emulated network (``ina train``): the datasets,
the numpy models, the synchronous SGD loop and the training worker that runs in every
Mininet host, all-reducing its gradient every step with the in-network agent or a
host-based baseline."""
