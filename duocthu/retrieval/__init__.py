"""Retrieval: routes over the index, pooling, reverse lookup, patient safety, packing, decision."""
