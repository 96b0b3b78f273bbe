"""Example bots. Each plays in-process (registered through the ``arena`` entry points)."""
