"""Stratego rule sets, each a plugin registered through the ``arena`` entry points."""
