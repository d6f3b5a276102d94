"""A stand-in browser for sign-in tests (``BROWSER="python follow_redirect.py %s"``): it
opens the URL and follows the authorization server's redirect back to the loopback
callback, as a user who approves at once would."""

import sys

import httpx

if __name__ == "__main__":
    httpx.get(sys.argv[1], follow_redirects=True, timeout=20)
