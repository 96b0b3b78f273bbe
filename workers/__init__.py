"""The Celery app of Arena's distributed tournaments (``celery -A arena.workers.app worker``).

Thin tasks over ``arena.tournament``; see ``workers/tasks.py`` and docs/distributed.md.
"""
