"""Google Vertex AI (``google-vertex``): Gemini through Google Cloud, as pi 0.73.1 reaches
it with Google's SDK. The wire is ``google-generative-ai``'s; what differs is where and
with what credentials:

- with ``GOOGLE_CLOUD_API_KEY`` (or a stored key): ``https://aiplatform.googleapis.com/v1/
  publishers/google/models/<id>:streamGenerateContent?alt=sse`` with ``x-goog-api-key``;
- else application-default credentials (``gcloud auth application-default login``, a
  service account in ``GOOGLE_APPLICATION_CREDENTIALS``, the metadata server), through
  ``google-auth`` (the extra ``vertex``), as a Bearer token to
  ``https://<location>-aiplatform.googleapis.com/v1/projects/<project>/locations/<location>/
  publishers/google/models/<id>:streamGenerateContent?alt=sse`` (``GOOGLE_CLOUD_PROJECT`` or
  ``GCLOUD_PROJECT``, ``GOOGLE_CLOUD_LOCATION``; the location ``global`` has no prefix).

A base URL of the model's own (models.json) replaces the host part.
"""

from __future__ import annotations

import os
import threading
import time

from pi_core import hookimpl
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.google import GoogleProvider
from pi_plugins.providers.http import HttpRequest, env_value

API = "google-vertex"
API_VERSION = "v1"
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
EXTRA_HINT = "pip install 'pi-harness[vertex]'"
#: pi's marker for "use application-default credentials" in place of a key.
CREDENTIALS_MARKER = "gcp-vertex-credentials"

_lock = threading.Lock()
_credentials: list = []  # the application-default credentials, found once


def _api_key(options: StreamOptions) -> str | None:
    key = (options.api_key or os.environ.get("GOOGLE_CLOUD_API_KEY") or "").strip()
    if not key or key == CREDENTIALS_MARKER or (key.startswith("<") and key.endswith(">")):
        return None
    return key


def adc_token() -> str:
    """A fresh access token of the application-default credentials (refreshed a minute
    before it expires; google-auth does the finding and the refreshing)."""
    try:
        import google.auth
        import google.auth.transport.requests
    except ImportError:
        raise RuntimeError("Vertex AI without an API key needs google-auth for application-default "
                           f"credentials: {EXTRA_HINT}") from None
    with _lock:
        if not _credentials:
            try:
                credentials, _ = google.auth.default(scopes=[SCOPE])
            except google.auth.exceptions.DefaultCredentialsError as exc:
                raise RuntimeError(f"Vertex AI: no application-default credentials ({exc}); run "
                                   "`gcloud auth application-default login` or set GOOGLE_CLOUD_API_KEY") from None
            _credentials.append(credentials)
        credentials = _credentials[0]
        expiry = getattr(credentials, "expiry", None)
        if not credentials.token or expiry is None or expiry.timestamp() - 60 < time.time():
            credentials.refresh(_token_request(google.auth.transport.requests.Request)())
        return credentials.token


def _token_request(base):
    """google-auth's HTTP request, sent where ``PI_PROVIDER_ORIGINS`` moves its origin (a
    gcloud sign-in always refreshes at ``https://oauth2.googleapis.com/token``)."""
    from pi_plugins.providers.origins import rewrite

    class Request(base):
        def __call__(self, url, *args, **kwargs):
            return super().__call__(rewrite(url), *args, **kwargs)

    return Request


def _custom_base(model: Model) -> str | None:
    base = (model.base_url or "").strip().rstrip("/")
    return None if not base or "{location}" in base else base


class GoogleVertexProvider(GoogleProvider):
    api = API

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        key = _api_key(options)
        request = super().build_request(model, context, options)
        request.headers.pop("x-goog-api-key", None)
        tail = f"publishers/google/models/{model.id}:streamGenerateContent?alt=sse"
        custom = _custom_base(model)
        if key:
            request.headers["x-goog-api-key"] = key
            request.url = f"{custom or 'https://aiplatform.googleapis.com'}/{API_VERSION}/{tail}"
            return request
        project = env_value(options, "GOOGLE_CLOUD_PROJECT") or env_value(options, "GCLOUD_PROJECT")
        if not project:
            raise ValueError("Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT "
                             "(or GOOGLE_CLOUD_API_KEY for an API key).")
        location = env_value(options, "GOOGLE_CLOUD_LOCATION")
        if not location:
            raise ValueError("Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION (e.g. us-central1).")
        host = custom or ("https://aiplatform.googleapis.com" if location == "global"
                          else f"https://{location}-aiplatform.googleapis.com")
        request.headers["authorization"] = f"Bearer {adc_token()}"
        request.url = f"{host}/{API_VERSION}/projects/{project}/locations/{location}/{tail}"
        return request


@hookimpl
def register_providers():
    return [GoogleVertexProvider()]
