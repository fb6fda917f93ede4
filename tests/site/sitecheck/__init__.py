"""Checks of the built site as readers and learners meet it (used by tests/site)."""
