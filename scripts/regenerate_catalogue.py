#!/usr/bin/env python3
"""Regenerate ``pi_plugins/providers/catalogue.json`` from pi 1.6's own model catalogue.

    python scripts/regenerate_catalogue.py PI_PACKAGE [--output PATH]

PI_PACKAGE is an installed ``@earendil-works/pi-coding-agent`` (or its
``@earendil-works/pi-ai``) folder. pi-ai 1.6 keeps its catalogue as data, one JSON file a
provider (``dist/providers/data/*.json``, grouped by API, each model typed ``chat``,
``image`` or ``classifier``), with ``.manifest.json`` saying when it was generated; this
script reads those files and writes every provider's chat models in models.json's schema:
per provider the API and base URL most of its models use and the environment variables
of its key (pi-ai's ``env-api-keys``, read as data), per model its name, context window,
output limit, prices (with their input tiers), reasoning, input kinds, input limits, the
prompt cache's lifetimes (``promptCache``, what cache warming needs), and
where pi gives them its own API, base URL, headers, ``compat`` and ``thinkingLevelMap``.
Image and classifier models are listed by id under ``otherModels`` (we run none; naming
one gets a clear "not supported here"). Model metadata is data; no code of pi's is carried over.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "pi_plugins" / "providers" / "catalogue.json"

#: The variable our registry reads first for a provider's key, where pi-ai's list starts
#: with one that is no plain API key (Anthropic's sign-in tokens) or names none (Bedrock).
KEY_VARIABLES = {
    "anthropic": ["ANTHROPIC_API_KEY"],
    "amazon-bedrock": ["AWS_BEARER_TOKEN_BEDROCK"],
}

#: Providers that find their clouds' own credentials (pi-ai's env-api-keys rules): any
#: group of variables all set makes their models usable without a key. Kept in the
#: provider's ``compat`` as ``credentialsEnv`` (the registry reads it).
CREDENTIALS_ENV = {
    "amazon-bedrock": [["AWS_PROFILE"], ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"],
                       ["AWS_BEARER_TOKEN_BEDROCK"], ["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"],
                       ["AWS_CONTAINER_CREDENTIALS_FULL_URI"], ["AWS_WEB_IDENTITY_TOKEN_FILE"]],
    "google-vertex": [["GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"],
                      ["GOOGLE_APPLICATION_CREDENTIALS", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"]],
    # workload identity federation (pi_plugins.providers.anthropic_federation)
    "anthropic": [["ANTHROPIC_FEDERATION_RULE_ID", "ANTHROPIC_ORGANIZATION_ID", "ANTHROPIC_IDENTITY_TOKEN_FILE"]],
}

#: Providers that read several key variables (pi 1.6's Anthropic: the first set of
#: ``apiKeyEnvs`` is the key) or a bearer token in place of a key (``bearerEnv``, sent as
#: ``Authorization: Bearer``; it wins over ``apiKeyEnvs``). Kept on the provider's entry.
KEY_FIELDS = {
    "anthropic": {"apiKeyEnvs": ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"], "bearerEnv": "ANTHROPIC_AUTH_TOKEN"},
}

#: Of those variables, the ones that name a credentials file, with the file used when
#: the variable is unset: pi counts Google's credentials when the file exists.
CREDENTIALS_FILES = {
    "google-vertex": {"GOOGLE_APPLICATION_CREDENTIALS": "~/.config/gcloud/application_default_credentials.json"},
}

#: Variables a provider needs besides its key before pi 1.6 lists its models
#: (Cloudflare's account, and the gateway's id; pi-ai's cloudflare-auth).
REQUIRED_ENV = {
    "cloudflare-workers-ai": ["CLOUDFLARE_ACCOUNT_ID"],
    "cloudflare-ai-gateway": ["CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"],
}

#: pi-ai's table of provider → key variables (``env-api-keys.js``: ``provider: "VARIABLE",``
#: or ``provider: ["A", "B"],`` lines, read as data).
_KEY_LINE = re.compile(r'^\s*"?([a-z0-9-]+)"?:\s*(\[[^\]]*\]|"[A-Z0-9_]+"),?\s*$', re.M)
_SPECIAL_KEYS = re.compile(r'provider === "([a-z0-9-]+)"\)\s*\{\s*return \[([^\]]*)\]', re.S)

_MODEL_FIELDS = ("name", "reasoning", "input", "cost", "contextWindow", "maxTokens", "inputLimits",
                 "thinkingLevelMap", "compat", "headers", "promptCache")


def pi_ai_folder(package: Path) -> Path:
    for candidate in (package, package / "node_modules" / "@earendil-works" / "pi-ai",
                      package.parent / "pi-ai", package.parents[1] / "@earendil-works" / "pi-ai"):
        if (candidate / "dist" / "providers" / "data" / ".manifest.json").exists():
            return candidate
    raise SystemExit(f"{package}: no @earendil-works/pi-ai with dist/providers/data here")


_PROVIDER_NAME = re.compile(r'createProvider\(\{\s*id: "([^"]+)",\s*name: "([^"]+)"')


def read_pi(package: Path) -> dict:
    data = pi_ai_folder(package) / "dist" / "providers" / "data"
    manifest = json.loads((data / ".manifest.json").read_text(encoding="utf-8"))
    providers = {}
    for name in manifest["files"]:
        groups = json.loads((data / name).read_text(encoding="utf-8"))
        providers[name.removesuffix(".json")] = [m for group in groups.values() for m in group.values()]
    source = (pi_ai_folder(package) / "dist" / "env-api-keys.js").read_text(encoding="utf-8")
    keys = {p: json.loads(v) if v.startswith("[") else [json.loads(v)] for p, v in _KEY_LINE.findall(source)}
    for provider, names in _SPECIAL_KEYS.findall(source):
        keys.setdefault(provider, re.findall(r'"([A-Z0-9_]+)"', names))
    names = {}  # each provider's display name (what /login lists), read as data
    for path in sorted((pi_ai_folder(package) / "dist" / "providers").glob("*.js")):
        found = _PROVIDER_NAME.search(path.read_text(encoding="utf-8"))
        if found:
            names[found[1]] = found[2]
    return {"models": providers, "keys": keys, "names": names, "generatedAt": manifest["generatedAt"]}


def catalogue(pi: dict) -> dict:
    providers, others = {}, {}
    for provider in sorted(pi["models"]):
        every = pi["models"][provider]
        models = [m for m in every if m.get("type", "chat") == "chat"]
        kinds = {m["id"]: m["type"] for m in every if m.get("type", "chat") != "chat"}
        if kinds:
            others[provider] = kinds
        if not models:
            continue
        api = Counter(m["api"] for m in models).most_common(1)[0][0]
        base = Counter(m["baseUrl"] for m in models).most_common(1)[0][0]
        entry: dict = {"name": provider, "api": api}
        compat: dict = {}
        if provider in CREDENTIALS_ENV:
            compat["credentialsEnv"] = CREDENTIALS_ENV[provider]
            if provider in CREDENTIALS_FILES:
                compat["credentialsFiles"] = CREDENTIALS_FILES[provider]
        if provider in REQUIRED_ENV:
            compat["requiredEnv"] = REQUIRED_ENV[provider]
        variables = KEY_VARIABLES.get(provider) or pi["keys"].get(provider) or []
        if len(variables) > 1:
            compat["apiKeyEnvFallbacks"] = variables[1:]
        if compat:
            entry["compat"] = compat
        if base:  # Azure has none: its resource comes from the environment
            entry["baseUrl"] = base
        if variables:
            entry["apiKeyEnv"] = variables[0]
        entry.update(KEY_FIELDS.get(provider, {}))
        rows = []
        for model in models:
            row = {"id": model["id"]}
            if model["api"] != api:
                row["api"] = model["api"]
            if model["baseUrl"] != base and model["baseUrl"]:
                row["baseUrl"] = model["baseUrl"]
            row.update({k: model[k] for k in _MODEL_FIELDS if model.get(k) is not None})
            rows.append(row)
        entry["models"] = rows
        providers[provider] = entry
    return {"generatedAt": pi["generatedAt"], "providers": providers, "otherModels": others,
            "providerNames": dict(sorted(pi["names"].items()))}


def dump(document: dict) -> str:
    """One line per model, so a regeneration's diff shows which models changed."""
    lines = ["{", f'  "generatedAt": {json.dumps(document["generatedAt"])},', '  "providers": {']
    names = list(document["providers"])
    for i, name in enumerate(names):
        provider = dict(document["providers"][name])
        models = provider.pop("models")
        head = json.dumps(provider, ensure_ascii=False, separators=(",", ":"))[:-1]
        lines.append(f'    {json.dumps(name)}: {head}, "models": [')
        for j, model in enumerate(models):
            comma = "," if j < len(models) - 1 else ""
            lines.append("      " + json.dumps(model, ensure_ascii=False, separators=(",", ":")) + comma)
        lines.append("    ]}" + ("," if i < len(names) - 1 else ""))
    lines.append("  },")
    lines.append('  "otherModels": ' + json.dumps(document["otherModels"], ensure_ascii=False, separators=(",", ":")) + ",")
    lines.append('  "providerNames": ' + json.dumps(document["providerNames"], ensure_ascii=False, separators=(",", ":")))
    lines += ["}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("package", type=Path, help="pi's npm package (pi-coding-agent or pi-ai)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    document = catalogue(read_pi(args.package))
    args.output.write_text(dump(document), encoding="utf-8")
    count = sum(len(p["models"]) for p in document["providers"].values())
    print(f"{args.output}: {len(document['providers'])} providers, {count} models", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
