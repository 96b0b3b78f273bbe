"""What pyproject.toml cannot say: the example bots and the Celery app keep their
folders in the repository (``bots/``, ``workers/``) but install as ``arena.bots`` and
``arena.workers``, so that the wheel adds no top-level package with a generic name
(``bots``, ``workers``) that could clash with another distribution's. setuptools wants
the packages listed for such a mapping (its automatic discovery does not follow a
``package_dir`` customisation), so they are listed here, the rest found as
``[tool.setuptools.packages.find]`` finds them (namespaces included: the data folders)."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(include=["arena", "arena.*"]),
        "arena.bots",
        "arena.workers",
    ],
    package_dir={"arena.bots": "bots", "arena.workers": "workers"},
)
