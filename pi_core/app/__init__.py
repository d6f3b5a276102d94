"""The application shell around the core: the ``pi`` command line (``cli``, ``entry``),
wiring a harness from plugins, settings and models (``wiring``), plugin discovery,
settings, the model registry (``auth``, ``models_json``, ``registry``), plugin packages,
the SDK (``sdk``) and the resource options. The core (protocol, loop, session tree,
harness) needs none of it; importing this package loads nothing.
"""
