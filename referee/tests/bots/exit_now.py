"""Exits at once, cleanly, without reading or replying."""
