FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1
WORKDIR /app
# CPU-only torch first so sentence-transformers does not pull CUDA wheels
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md alembic.ini ./
COPY src ./src
RUN pip install .
EXPOSE 8000
CMD ["knotwork", "serve", "--host", "0.0.0.0", "--port", "8000"]
