# The kandev image for compose.yaml: the dependencies from pyproject.toml, then the code.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
COPY pyproject.toml ./
RUN pip install .
COPY . .
RUN useradd --system --home-dir /app kandev && mkdir -p staticfiles && chown kandev staticfiles
USER kandev
EXPOSE 8000
CMD ["uvicorn", "kandev.asgi:application", "--host", "0.0.0.0", "--port", "8000"]
