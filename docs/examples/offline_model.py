"""A plugin file that gives pi a model needing no network and no key: the scripted
provider, answering every request with the same text. Try pi with it:

    pi -e docs/examples/offline_model.py --model scripted/scripted-model -p "hi"
"""

from pi_core import hookimpl
from pi_core.testing import Reply, ScriptedProvider, scripted_model

provider = ScriptedProvider(router=lambda context: Reply(text="Hello from the scripted model."))


@hookimpl
def register_providers():
    return [provider]


@hookimpl
def register_models():
    return [scripted_model()]
