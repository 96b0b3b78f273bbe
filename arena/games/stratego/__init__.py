"""Stratego: the manual's rules, ISF rules and barrage."""
