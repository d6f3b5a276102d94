"""The application shell around the core: the one harness (``harness``, with its
collaborators ``session_moves``, ``model_choice``, ``plugin_sends``, ``compacting``,
``user_shell``, ``plugin_commands``), the one assembly (``assembly``) that the ``pi``
command line (:mod:`pi_plugins.cli`), the SDK (``sdk``), ``pi serve``, batch tasks and
subagents share, plugin discovery and the built-ins' order (``discovery``, ``builtins``),
settings, the model registry and auth store (``registry``, ``models_json``, ``auth``) and
the ``/resume`` listing. Features are plugins (:mod:`pi_plugins`); the core proper
(protocol, loop, session tree, ctx) needs none of this; importing this package loads nothing."""
