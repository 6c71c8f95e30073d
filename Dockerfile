# The kandev image for compose.yaml: exactly the locked dependencies (uv.lock, no test tools),
# then the code.
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    UV_PYTHON_DOWNLOADS=never UV_PROJECT_ENVIRONMENT=/opt/kandev PATH=/opt/kandev/bin:$PATH
WORKDIR /app
RUN pip install uv==0.13.9
COPY pyproject.toml uv.lock ./
RUN uv sync --locked --no-install-project --python "$(command -v python3)"
COPY . .
# media/: attached files (the compose volume takes its owner from here)
RUN useradd --system --home-dir /app kandev && mkdir -p staticfiles media && chown kandev staticfiles media
USER kandev
EXPOSE 8000
CMD ["uvicorn", "kandev.asgi:application", "--host", "0.0.0.0", "--port", "8000"]
