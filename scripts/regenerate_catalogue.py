#!/usr/bin/env python3
"""Regenerate ``pi_plugins/providers/catalogue.json`` from pi's own model catalogue.

    python scripts/regenerate_catalogue.py PI_PACKAGE [--output PATH]

PI_PACKAGE is an installed ``@mariozechner/pi-coding-agent`` (or its
``@mariozechner/pi-ai``) folder. Node reads pi-ai's ``dist/models.generated.js`` (a
JavaScript module: node is what reads it exactly) and this script writes every provider
and model in models.json's schema: per provider the API and base URL most of its models
use and the environment variable of its key (pi-ai's ``env-api-keys``), per model its
name, context window, output limit, prices, reasoning, input kinds, and where pi gives
them its own API, base URL, headers, ``compat`` and ``thinkingLevelMap``. Model metadata
is data; nothing of pi's code is carried over.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "pi_plugins" / "providers" / "catalogue.json"

#: The variable our registry reads for each provider's key: pi-ai's (for providers pi
#: gives several, the one holding a plain API key). Bedrock and Vertex also take their
#: clouds' own credentials (their provider plugins); Codex has only its sign-in (so no variable).
KEY_VARIABLES = {
    "anthropic": "ANTHROPIC_API_KEY", "github-copilot": "COPILOT_GITHUB_TOKEN",
    "amazon-bedrock": "AWS_BEARER_TOKEN_BEDROCK",
}

#: Providers that find their clouds' own credentials (pi-ai's env-api-keys rules): any
#: group of variables all set makes their models usable without a key. Kept in each
#: model's ``compat`` as ``credentialsEnv`` (the registry reads it).
CREDENTIALS_ENV = {
    "amazon-bedrock": [["AWS_PROFILE"], ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"],
                       ["AWS_BEARER_TOKEN_BEDROCK"], ["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"],
                       ["AWS_CONTAINER_CREDENTIALS_FULL_URI"], ["AWS_WEB_IDENTITY_TOKEN_FILE"]],
    "google-vertex": [["GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"],
                      ["GOOGLE_APPLICATION_CREDENTIALS", "GCLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"]],
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

_DUMP = """
const [pkg] = process.argv.slice(1);
const { MODELS } = await import(pkg + "/dist/models.generated.js");
console.log(JSON.stringify(MODELS));
"""
#: pi-ai's table of provider → key variable (``env-api-keys.js``: ``provider: "VARIABLE",``
#: lines; the function holding it is not exported, so its lines are read as data).
_KEY_LINE = re.compile(r'^\s*"?([a-z0-9-]+)"?:\s*"([A-Z0-9_]+)",?\s*$', re.M)

_MODEL_FIELDS = ("name", "reasoning", "input", "cost", "contextWindow", "maxTokens",
                 "thinkingLevelMap", "compat", "headers")


def pi_ai_folder(package: Path) -> Path:
    for candidate in (package, package / "node_modules" / "@mariozechner" / "pi-ai",
                      package.parent / "pi-ai", package.parents[1] / "@mariozechner" / "pi-ai"):
        if (candidate / "dist" / "models.generated.js").exists():
            return candidate
    raise SystemExit(f"{package}: no @mariozechner/pi-ai with dist/models.generated.js here")


def read_pi(package: Path) -> dict:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is needed to read pi's models.generated.js (a JavaScript module)")
    done = subprocess.run([node, "--input-type=module", "-e", _DUMP, str(pi_ai_folder(package))],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"node could not read pi's catalogue:\n{done.stderr}")
    keys_source = (pi_ai_folder(package) / "dist" / "env-api-keys.js").read_text(encoding="utf-8")
    keys = {provider: [variable] for provider, variable in _KEY_LINE.findall(keys_source)}
    return {"models": json.loads(done.stdout), "keys": keys}


def _key_variable(provider: str, names: list[str]) -> str | None:
    if provider in KEY_VARIABLES:
        return KEY_VARIABLES[provider]
    return names[0] if names else None


def catalogue(pi: dict) -> dict:
    providers = {}
    for provider, models in pi["models"].items():
        models = list(models.values())
        api = Counter(m["api"] for m in models).most_common(1)[0][0]
        base = Counter(m["baseUrl"] for m in models).most_common(1)[0][0]
        entry = {"name": provider, "api": api}
        if provider in CREDENTIALS_ENV:
            entry["compat"] = {"credentialsEnv": CREDENTIALS_ENV[provider]}
            if provider in CREDENTIALS_FILES:
                entry["compat"]["credentialsFiles"] = CREDENTIALS_FILES[provider]
        if base:  # Azure has none: its resource comes from the environment
            entry["baseUrl"] = base
        variable = _key_variable(provider, pi["keys"].get(provider) or [])
        if variable:
            entry["apiKeyEnv"] = variable
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
    return {"providers": providers}


def dump(document: dict) -> str:
    """One line per model, so a regeneration's diff shows which models changed."""
    lines = ["{", '  "providers": {']
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
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
