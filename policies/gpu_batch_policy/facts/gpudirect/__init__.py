"""GPUDirect facts shared by the pack, the program's config checks and its components:
:mod:`.profiles` (which network stack a machine type gets and what it needs)."""
