"""Which session a run opens: new, ``--continue``, ``--session``, ``--fork``,
``--session-id``, ``--no-session``, in the folder ``--session-dir`` and the settings
choose."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pi_plugins.cli.run_args import RunArgs, UsageError


def sessions_dir(args: RunArgs, settings) -> Path | None:
    """``--session-dir``, then ``PI_CODING_AGENT_SESSION_DIR``, then ``sessionDir``."""
    chosen = args.session_dir or os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if chosen:
        return Path(chosen).expanduser()
    setting = settings.get("sessionDir")
    if setting:
        path = Path(setting).expanduser()
        return path if path.is_absolute() else Path(os.getcwd()) / path
    return None


def open_session(args: RunArgs, cwd: str, directory: Path | None):
    """(the session, why it starts: ``startup``, ``resume`` or ``fork``)."""
    from pi_core.session import Session
    from pi_core.session.locations import session_dir_for

    if args.no_session and args.session_id is None:
        return Session.in_memory(cwd), "startup"
    folder = directory or session_dir_for(cwd)
    if not (args.no_session or args.fork or args.session_id is not None or args.session
            or args.continue_session):
        return Session.create(cwd, folder), "startup"
    # finding, forking or naming a session (what a new one never needs: pi -p's start)
    from pi_plugins.cli import session_ids
    from pi_plugins.session_listing.listing import continue_recent, find_session

    if args.no_session:
        assert args.session_id is not None  # (without one, the in-memory session above)
        return session_ids.new_session_with_id(cwd, None, args.session_id, in_memory=True), "startup"
    if args.fork:
        found = find_session(args.fork, cwd, folder)
        if found is None:
            raise UsageError(f"--fork {args.fork}: no such session")
        return fork_from(found.path, cwd, folder, session_id=args.session_id), "fork"
    if args.session_id is not None:  # exactly that project-local session (pi 1.6)
        path = session_ids.find_project_session(args.session_id, Path(folder))
        if path is not None:
            return Session.open(path, folder, cwd=cwd), "resume"
        print(f"Warning: No project session found with id '{args.session_id}'; creating a new "
              "session with that id.", file=sys.stderr)
        return session_ids.new_session_with_id(cwd, Path(folder), args.session_id), "startup"
    if args.session:
        found = find_session(args.session, cwd, folder)
        if found is None:
            raise UsageError(f"--session {args.session}: no such session (give a file or an id prefix)")
        if found.scope == "global":
            return fork_from(found.path, cwd, folder), "fork"
        return Session.open(found.path, folder, cwd=cwd), "resume"
    return continue_recent(cwd, folder), "resume"  # --continue


def fork_from(source: str | os.PathLike, target_cwd: str | os.PathLike,
              sessions_dir: str | os.PathLike | None = None, session_id: str | None = None):
    """A new session of ``target_cwd`` holding every entry of ``source``; written at
    once, as pi does (``--fork``, or resuming another project's session here).
    ``session_id`` names the new session (``--fork X --session-id ID``)."""
    from pi_core.session import Session, SessionError

    source = Path(os.path.abspath(source))
    with Session.open(source, read_only=True) as original:
        if not original.on_disk:
            raise SessionError(f"cannot fork {source}: the file holds no session")
        entries = original.entries
    if session_id is None:
        forked = Session.create(target_cwd, sessions_dir, parent_session=str(source))
    else:
        from pi_plugins.cli.session_ids import new_session_with_id

        forked = new_session_with_id(os.fspath(target_cwd), Path(sessions_dir) if sessions_dir else None,
                                     session_id, parent_session=str(source))
    forked.take_entries(entries)
    return forked


def missing_session_cwd(session, reason: str, cwd: str) -> str | None:
    """pi 1.6's refusal (every mode but the chat) of a resumed session whose stored
    working directory no longer exists, in its words; ``None`` where it exists."""
    stored = session.header.cwd
    if reason != "resume" or not stored or os.path.isdir(stored):
        return None
    where = f"\nSession file: {session.file}" if session.file else ""
    return f"Stored session working directory does not exist: {stored}{where}\nCurrent working directory: {cwd}"


async def choose_for_missing_cwd(session, cwd: str, directory: Path | None, ui):
    """pi 1.6's chat, resuming a session whose stored folder is gone: Continue here (the
    file keeps its folder, so it asks again next time), Fork into here (a new session,
    the original kept) or Cancel (:class:`QuietExit`), in its words."""
    from pi_core.session.locations import session_dir_for
    from pi_plugins.cli.run_args import QuietExit

    options = [f"Continue in {cwd} (asks again next time)", f"Fork into {cwd} (new session ID, original kept)",
               "Cancel"]
    choice = await ui.select(f"Session cwd does not exist: {session.header.cwd}", options)
    if choice == options[0]:
        return session
    source = session.file
    session.close()
    if choice == options[1]:
        return fork_from(source, cwd, directory or session_dir_for(cwd))
    raise QuietExit("")
