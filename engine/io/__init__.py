"""Readers and writers of file formats (network files; more formats join here)."""
