"""Example bots. Each plays in-process (registered through the ``arena`` entry points).

Every bot draws its choices from ``random.Random(seed)``: Arena passes a seed derived
from the match's secret seed (:func:`arena.engine.seeds.house_bot_seed`), and a bot made
without one seeds itself from the operating system, never from a guessable default.
"""
