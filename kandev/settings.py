"""kandev settings: one module, driven by environment variables.

DATABASE_URL  default: SQLite file beside the project (IMMEDIATE transactions, so
              admission is as exact as on PostgreSQL's row locks)
DATABASE_POOL_MAX_SIZE  PostgreSQL connection pool per process (0 = off); set it with
              several ASGI workers
DATABASE_TRANSACTION_POOLER  1: PostgreSQL is reached through a pooler that hands each
              transaction any server session (PgBouncer's transaction mode)
REDIS_URL     when set: Redis channel layer (several ASGI workers); else in-memory
SECRET_KEY, DEBUG, ALLOWED_HOSTS, CSRF_TRUSTED_ORIGINS, STATIC_ROOT (collectstatic target)
KANDEV_MAX_CONCURRENT_SESSIONS_PER_WORKSPACE (0 = unlimited), KANDEV_SESSION_LEASE_SECONDS (60),
KANDEV_RUNNER_CLAIM_TIMEOUT_SECONDS (300; 0 = wait for a runner forever),
KANDEV_METRICS_TOKEN; KANDEV_BACKGROUND (embedded|worker: who runs the background work and the task queue);
KANDEV_TASK_LEASE_SECONDS (600), KANDEV_NOTIFY_EMAIL_INTERVAL_SECONDS (300), KANDEV_SITE_URL,
KANDEV_WEBHOOK_MAX_ATTEMPTS (5), KANDEV_WEBHOOK_BACKOFF_SECONDS (30), KANDEV_WEBHOOK_TIMEOUT_SECONDS (10);
PROMETHEUS_MULTIPROC_DIR (several processes: prometheus multiprocess mode)
EMAIL_URL or EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS,
EMAIL_USE_SSL; EMAIL_TIMEOUT (10), DEFAULT_FROM_EMAIL (kandev/mail_settings.py)
KANDEV_OPEN_SIGNUP (0: only invite links sign people up); KANDEV_SIGNUP_MAX (10 an hour per address)
MEDIA_ROOT, KANDEV_STORAGE (local|s3) and KANDEV_S3_* (where attachments are kept:
kandev/storage_settings.py); KANDEV_MAX_ATTACHMENT_BYTES, KANDEV_MAX_ATTACHMENTS_PER_TASK
KANDEV_OIDC_ISSUER, KANDEV_OIDC_CLIENT_ID, KANDEV_OIDC_CLIENT_SECRET, KANDEV_OIDC_NAME
(sign-in with OpenID Connect; off unless the issuer is set: accounts/oidc.py)
"""

import os
import secrets
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from kandev import mail_settings, storage_settings

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)


def development_secret_key(path: Path) -> str:
    """DEBUG without SECRET_KEY: a key made once for this checkout and kept in `path` (which
    git ignores), so no two installs share a session-signing key, the key that encrypts
    stored secrets (integrations/crypto.py) or the demo password derived from it. Written
    aside and linked into place, so processes starting together agree on one key."""
    if not path.exists():
        aside = path.with_name(f"{path.name}.{os.getpid()}")
        aside.write_text(secrets.token_urlsafe(50))
        aside.chmod(0o600)
        try:
            os.link(aside, path)
        except FileExistsError:
            pass  # another process made it first
        finally:
            aside.unlink()
    return path.read_text().strip()


# Public (earlier versions used it when SECRET_KEY was unset): production mode refuses it.
FORMER_DEVELOPMENT_SECRET_KEY = "django-insecure-kandev-development-key"
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not DEBUG and SECRET_KEY in ("", FORMER_DEVELOPMENT_SECRET_KEY):
    raise ImproperlyConfigured(
        "SECRET_KEY is unset or kandev's former public development key, which production mode (DEBUG off) "
        "refuses: set SECRET_KEY to a long random string, e.g. "
        "SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))'), "
        "and keep it (it encrypts stored secrets); or set DEBUG=1 for development."
    )
SECRET_KEY = SECRET_KEY or development_secret_key(BASE_DIR / ".secret_key")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "django_tasks",
    "django_tasks_db",
    "common",
    "accounts",
    "workflows",
    "boards",
    "integrations",
    "agents",
    "notifications",
    "teams",
    "flow",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "accounts.ratelimit.LoginRateLimitMiddleware",
    "common.errors.NotFoundPage",
]

ROOT_URLCONF = "kandev.urls"
ASGI_APPLICATION = "kandev.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.account",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # IMMEDIATE takes the write lock at BEGIN: admissions are serialized whole.
    # The timeout makes concurrent writers wait instead of failing "database is locked".
    DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20}
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "test-db.sqlite3")}
else:
    # Fail fast while the database is unreachable: requests answer 503 (common.errors)
    # instead of hanging on a connect; the next request reconnects by itself.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = int(
        os.environ.get("DATABASE_CONNECT_TIMEOUT", "3")
    )
    # Under ASGI each request runs its sync code in a thread of its own, so thread-local
    # persistent connections would leak one PostgreSQL connection per request; psycopg's
    # pool shares a bounded few per process (requests wait for one, then get a 503).
    # DATABASE_POOL_MAX_SIZE=0: no pool, a connection per request.
    # Such a pooler keeps no session state between transactions: no server-side cursors
    # (Django's setting for it) and no prepared statements (common/sql.py reads the same).
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env_bool("DATABASE_TRANSACTION_POOLER", False)
    pool_size = int(os.environ.get("DATABASE_POOL_MAX_SIZE", "20"))
    if pool_size:
        DATABASES["default"]["CONN_MAX_AGE"] = 0
        DATABASES["default"]["OPTIONS"]["pool"] = {
            "min_size": min(2, pool_size),
            "max_size": pool_size,
            "timeout": float(os.environ.get("DATABASE_POOL_TIMEOUT", "10")),
        }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # A viewer's receive is a blocking BZPOPMIN of 5 s; redis-py 8's default 5 s
                # socket timeout cut it off and dropped every idle viewer (channels_redis#422).
                # No read timeout, as before redis-py 8: any number here also makes a closing
                # socket's cancelled receive wait out the pop (seconds per closed viewer);
                # TCP keepalive still finds a Redis that vanished.
                # redis-py 8 also caps a pool at 100 connections and refuses past that: a burst
                # of viewers connecting (each joins two groups) failed its handshakes with 500s.
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": None,
                        "socket_keepalive": True,
                        "max_connections": 2000,
                    }
                ],
                "capacity": 1000,
                "expiry": 30,
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
# Uploaded files (task attachments): the local file system by default, in `media/` beside
# the embedded database and the development key; an S3-compatible store with
# KANDEV_STORAGE=s3 (kandev.storage_settings reads and checks its variables).
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT") or BASE_DIR / "media")
STORAGES = {
    "default": storage_settings.default_storage(os.environ, media_root=MEDIA_ROOT),
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "common.staticfiles.StaticFilesStorage"
    },
}
# Serve straight from the app folders in development, without collectstatic.
WHITENOISE_USE_FINDERS = DEBUG

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "accounts.permissions.ScopedTokenLimits",
    ],
    "DEFAULT_RENDERER_CLASSES": ["common.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["common.parsers.JSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "common.pagination.Pagination",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "common.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "kandev API",
    "DESCRIPTION": "Kanban boards with a server-enforced WIP-limit pull system.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # OnFull and OnSessionLimit share the values queue/reject: one schema enum. A step's and
    # a history event's `kind` are different choices under one field name.
    "ENUM_NAME_OVERRIDES": {
        "QueueOrRejectEnum": "workflows.models.OnFull",
        "StepKindEnum": "workflows.models.StepKind",
        "EventKindEnum": "boards.models.EventKind",
        "ClassOfServiceEnum": "boards.models.ClassOfService",
        "LimitScopeEnum": "workflows.models.LimitScope",  # the configuration history and its experiments
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "common.schema.document_errors",
        "common.schema.tag_and_summarize",
    ],
}

# kandev's own knobs
KANDEV_RECONCILE_INTERVAL_SECONDS = int(os.environ.get("KANDEV_RECONCILE_INTERVAL_SECONDS", "30"))
# Who runs the background work (kandev_worker's pass): "embedded" = every server process, in
# a thread started by the ASGI lifespan (the one-process default: SQLite, no Redis); "worker"
# = separate `manage.py kandev_worker` processes (the scale-out: PostgreSQL or Redis).
KANDEV_BACKGROUND = os.environ.get("KANDEV_BACKGROUND") or (
    "embedded" if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3" and not REDIS_URL else "worker"
)
if KANDEV_BACKGROUND not in {"embedded", "worker"}:
    raise ImproperlyConfigured(f"KANDEV_BACKGROUND must be embedded or worker, not {KANDEV_BACKGROUND!r}")
# The durable task queue that deliveries run on (notifications/queue.py): Django's task
# framework, tasks stored in the database. A task running longer than the lease is taken to
# have lost its worker (it died) and is run again.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
KANDEV_TASK_LEASE_SECONDS = int(os.environ.get("KANDEV_TASK_LEASE_SECONDS", "600"))
# Notifications (notifications/): at most one e-mail per person this often (news waiting
# meanwhile goes in the next one), and the address links in e-mails start with.
KANDEV_NOTIFY_EMAIL_INTERVAL_SECONDS = int(os.environ.get("KANDEV_NOTIFY_EMAIL_INTERVAL_SECONDS", "300"))
KANDEV_SITE_URL = os.environ.get("KANDEV_SITE_URL", "http://localhost:8000")
# Outbound webhooks (notifications/webhooks.py): attempts per event, the wait after the first
# failed one (doubling after each), and how long one attempt may take.
KANDEV_WEBHOOK_MAX_ATTEMPTS = int(os.environ.get("KANDEV_WEBHOOK_MAX_ATTEMPTS", "5"))
KANDEV_WEBHOOK_BACKOFF_SECONDS = float(os.environ.get("KANDEV_WEBHOOK_BACKOFF_SECONDS", "30"))
KANDEV_WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("KANDEV_WEBHOOK_TIMEOUT_SECONDS", "10"))
# Threads per server process serving HTTP requests (kandev/requests.py): reads and writes
# apart, so writes do not queue behind reads. Each holds a database connection while it
# serves, so together they stay within DATABASE_POOL_MAX_SIZE. Two read threads: reads are
# mostly Python under the GIL, so a third in one process serves no more reads, it only takes
# turns from the writers holding a board's lock (docs/benchmarks.md, "the fourth sitting").
KANDEV_READ_THREADS = int(os.environ.get("KANDEV_READ_THREADS", "2"))
KANDEV_WRITE_THREADS = int(os.environ.get("KANDEV_WRITE_THREADS", "4"))
KANDEV_ADMISSION_RETRIES = int(os.environ.get("KANDEV_ADMISSION_RETRIES", "5"))
KANDEV_METRICS_TOKEN = os.environ.get("KANDEV_METRICS_TOKEN", "")
KANDEV_TOKEN_CREATE_RATE = os.environ.get("KANDEV_TOKEN_CREATE_RATE", "10/hour")
# A GET /mcp/ event stream ends after this long without a message (integrations/mcp_http.py).
KANDEV_MCP_IDLE_TIMEOUT_SECONDS = float(os.environ.get("KANDEV_MCP_IDLE_TIMEOUT_SECONDS", "300"))
# Flow analytics (flow/bounds.py, flow/throttling.py): the most points one chart may hold
# (instants x steps), the most history events one window may hold, and each user's rate of
# figure requests (in the shared cache).
KANDEV_FLOW_MAX_POINTS = int(os.environ.get("KANDEV_FLOW_MAX_POINTS", "100000"))
KANDEV_FLOW_MAX_EVENTS = int(os.environ.get("KANDEV_FLOW_MAX_EVENTS", "500000"))
KANDEV_FLOW_RATE = os.environ.get("KANDEV_FLOW_RATE", "120/minute")
# Threads per server process that compute flow figures (kandev/requests.py's analytics lane),
# apart from the read lane's: however many figures are asked for, board reads keep their threads.
KANDEV_ANALYTICS_THREADS = int(os.environ.get("KANDEV_ANALYTICS_THREADS", "1"))
# Content Security Policy (django-csp): scripts and styles only from kandev's own static
# files, never inline. Style attributes stay allowed (style-src-attr): the board colours
# each step with `style="--step-color: ..."`; a <style> element is still refused.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "style-src-attr": [UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Throttle counters (accounts/ratelimit.py, DRF's throttles) and the board changes kept for
# readers (boards/snapshots.py) must be shared by every server process: Redis when
# configured, else this one process's memory (the embedded default).
if REDIS_URL:
    CACHES = {
        "default": {
            # Django's, with one client and pool per process, not one per request (common/cache.py).
            "BACKEND": "common.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "kandev-cache",  # beside the channel layer's keys in the same database
            # As large as the channel layer's: every request thread may hold a connection at once.
            "OPTIONS": {"max_connections": 2000},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

KANDEV_LOGIN_MAX_FAILURES = int(os.environ.get("KANDEV_LOGIN_MAX_FAILURES", "10"))
KANDEV_LOGIN_WINDOW_SECONDS = int(os.environ.get("KANDEV_LOGIN_WINDOW_SECONDS", "900"))
KANDEV_LOGIN_ACCOUNT_BACKOFF_SECONDS = int(os.environ.get("KANDEV_LOGIN_ACCOUNT_BACKOFF_SECONDS", "30"))
KANDEV_PASSWORD_RESET_MAX = int(os.environ.get("KANDEV_PASSWORD_RESET_MAX", "5"))
KANDEV_PASSWORD_RESET_WINDOW_SECONDS = int(os.environ.get("KANDEV_PASSWORD_RESET_WINDOW_SECONDS", "3600"))
# Anyone who reaches the server may make an account (invite links always may); sign-ups per
# client address are counted as password resets are (accounts/ratelimit.py).
KANDEV_OPEN_SIGNUP = env_bool("KANDEV_OPEN_SIGNUP", False)
KANDEV_SIGNUP_MAX = int(os.environ.get("KANDEV_SIGNUP_MAX", "10"))
# Sign-in with OpenID Connect (accounts/oidc.py): on when an issuer is named. The provider's
# endpoints come from its discovery document ({issuer}/.well-known/openid-configuration).
KANDEV_OIDC_ISSUER = os.environ.get("KANDEV_OIDC_ISSUER", "").strip().rstrip("/")
KANDEV_OIDC_CLIENT_ID = os.environ.get("KANDEV_OIDC_CLIENT_ID", "").strip()
KANDEV_OIDC_CLIENT_SECRET = os.environ.get("KANDEV_OIDC_CLIENT_SECRET", "")
KANDEV_OIDC_NAME = os.environ.get("KANDEV_OIDC_NAME", "single sign-on").strip()[:60]
if KANDEV_OIDC_ISSUER and not (KANDEV_OIDC_CLIENT_ID and KANDEV_OIDC_CLIENT_SECRET):
    raise ImproperlyConfigured("KANDEV_OIDC_ISSUER is set: set KANDEV_OIDC_CLIENT_ID and KANDEV_OIDC_CLIENT_SECRET.")
AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend", "accounts.oidc.OidcBackend"]
# What mozilla-django-oidc reads (accounts/oidc.py gives it the endpoints).
OIDC_RP_CLIENT_ID = KANDEV_OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = KANDEV_OIDC_CLIENT_SECRET
OIDC_RP_SIGN_ALGO = "RS256"
OIDC_RP_SCOPES = "openid email profile"
OIDC_TIMEOUT = 10
OIDC_USE_PKCE = True
LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/"

# What one account may create, so that none can fill the database; 0 = no quota. Checked by
# the creates: boards/quotas.py (tasks), workflows/services.py and teams/services.py.
KANDEV_MAX_WORKSPACES_PER_USER = int(os.environ.get("KANDEV_MAX_WORKSPACES_PER_USER", "50"))
KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE = int(os.environ.get("KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE", "100"))
KANDEV_MAX_OPEN_TASKS_PER_USER = int(os.environ.get("KANDEV_MAX_OPEN_TASKS_PER_USER", "10000"))
# Imports (a kandev export, a CSV file, a Trello board): the largest body read, and the most
# tasks one import brings (boards/imports.py).
KANDEV_MAX_IMPORT_BYTES = int(os.environ.get("KANDEV_MAX_IMPORT_BYTES", str(4 * 1024 * 1024)))
KANDEV_MAX_IMPORT_TASKS = int(os.environ.get("KANDEV_MAX_IMPORT_TASKS", "2000"))
# The most history events (all its tasks' together) one backup import restores.
KANDEV_MAX_IMPORT_EVENTS = int(os.environ.get("KANDEV_MAX_IMPORT_EVENTS", "100000"))
# Task attachments (boards/attachments.py): the largest file, read no further than this while
# the upload is parsed, and the most files one task holds.
KANDEV_MAX_ATTACHMENT_BYTES = int(os.environ.get("KANDEV_MAX_ATTACHMENT_BYTES", str(25 * 1024 * 1024)))
KANDEV_MAX_ATTACHMENTS_PER_TASK = int(os.environ.get("KANDEV_MAX_ATTACHMENTS_PER_TASK", "50"))
# The largest body the server reads at all (kandev/requests.py): the largest any endpoint
# parses, and room for a form's framing. Each endpoint's own bound is checked as it parses.
KANDEV_MAX_REQUEST_BYTES = (
    max(DATA_UPLOAD_MAX_MEMORY_SIZE, KANDEV_MAX_IMPORT_BYTES, KANDEV_MAX_ATTACHMENT_BYTES) + 64 * 1024
)
# Mail (password reset): EMAIL_URL or the EMAIL_HOST family, read and checked by
# kandev/mail_settings.py. Without either this server cannot send mail, and the pages that
# would send one say so (KANDEV_CAN_SEND_EMAIL) instead of pretending a link is on its way.
_mail = mail_settings.mail_settings(os.environ)
KANDEV_CAN_SEND_EMAIL = _mail.can_send
EMAIL_BACKEND = _mail.backend
EMAIL_HOST, EMAIL_PORT = _mail.host, _mail.port
EMAIL_HOST_USER, EMAIL_HOST_PASSWORD = _mail.user, _mail.password
EMAIL_USE_TLS, EMAIL_USE_SSL = _mail.use_tls, _mail.use_ssl
EMAIL_TIMEOUT = mail_settings.timeout(os.environ)
DEFAULT_FROM_EMAIL = mail_settings.from_address(os.environ)
# Destinations outbound requests (review watches) may reach beyond https on public
# addresses: hosts, host:port or CIDRs (common/outbound.py, docs/reference.md).
KANDEV_OUTBOUND_ALLOW = env_list("KANDEV_OUTBOUND_ALLOW", "")

# Production hardening (docs/reference.md, "Production"). HTTPS=1 turns on everything that needs TLS
# in front of kandev; each setting can still be switched by its own variable. Off by
# default because the dev server and the test servers speak plain HTTP; `check --deploy`
# names whatever is still off.
HTTPS = env_bool("HTTPS", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("SECURE_PROXY_SSL_HEADER", False) else None
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", HTTPS)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000" if HTTPS else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS)
# Health probes come over plain HTTP from inside the host.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Agent sessions: 0 = unlimited; a workspace's own max_concurrent_sessions overrides the default.
KANDEV_MAX_CONCURRENT_SESSIONS_PER_WORKSPACE = int(os.environ.get("KANDEV_MAX_CONCURRENT_SESSIONS_PER_WORKSPACE", "0"))
KANDEV_SESSION_LEASE_SECONDS = int(os.environ.get("KANDEV_SESSION_LEASE_SECONDS", "60"))
# A starting session no runner claims within this many seconds fails and frees its slot.
KANDEV_RUNNER_CLAIM_TIMEOUT_SECONDS = int(os.environ.get("KANDEV_RUNNER_CLAIM_TIMEOUT_SECONDS", "300"))

# Every handler redacts `?token=` keys (common/logs.py). uvicorn's own handlers are declared
# again here, with uvicorn's formatters, so its access and WebSocket lines are redacted too;
# their levels stay as `--log-level` set them.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_secrets": {"()": "common.logs.RedactSecrets"}},
    "formatters": {
        "uvicorn": {"()": "uvicorn.logging.DefaultFormatter", "fmt": "%(levelprefix)s %(message)s"},
        "uvicorn_access": {
            "()": "uvicorn.logging.AccessFormatter",
            "fmt": '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s',
        },
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["redact_secrets"]},
        "uvicorn": {
            "class": "logging.StreamHandler",
            "formatter": "uvicorn",
            "filters": ["redact_secrets"],
            "stream": "ext://sys.stderr",
        },
        "uvicorn_access": {
            "class": "logging.StreamHandler",
            "formatter": "uvicorn_access",
            "filters": ["redact_secrets"],
            "stream": "ext://sys.stdout",
        },
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "httpx": {"level": "WARNING"},  # one INFO line per GitHub request is noise
        "uvicorn": {"handlers": ["uvicorn"], "propagate": False},
        "uvicorn.access": {"handlers": ["uvicorn_access"], "propagate": False},
    },
}
