"""Sessions: pi-compatible JSONL files holding a tree of entries.

::

    session = Session.create(cwd)                 # or open / in_memory
    session.append_model_change("openai", "gpt-4o")
    session.append_message(user_message)          # the file appears with the first
    session.append_message(assistant_message)     # message
    context = session.build_context()             # messages, model, thinking level
"""

from pi_core.session.context import ModelRef, SessionContext, build_session_context
from pi_core.session.locations import encode_cwd, session_dir_for, session_file_name, sessions_root
from pi_core.session.reader import Problem, SessionError
from pi_core.session.session import Session
from pi_core.session.store import SessionLockedError, SessionWriteError
from pi_core.session.tree import TreeNode

__all__ = ["ModelRef", "Problem", "Session", "SessionContext", "SessionError", "SessionLockedError",
           "SessionWriteError", "TreeNode", "build_session_context", "encode_cwd", "session_dir_for",
           "session_file_name", "sessions_root"]
