# One image for every Arena service: referee, Celery workers and beat, the web, example bots.
FROM python:3.11-slim
# bubblewrap: the sandbox bot code runs in (docs/hosting.md); util-linux has prlimit, setpriv
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm bubblewrap util-linux \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml setup.py README.md LICENSE ./
COPY arena ./arena
COPY bots ./bots
COPY workers ./workers
RUN pip install --no-cache-dir . && cd bots/node && npm ci --no-audit --no-fund
ENV PYTHONUNBUFFERED=1
