"""Who may act: the UI is read-only unless a token is configured (`UI_TOKEN`). A browser signs in with the
token (its session cookie then carries `authed`) and every action form carries the session's CSRF token; a
script sends the token as `Authorization: Bearer <token>`, which a cross-site page cannot forge, so it needs
no CSRF token. Refusals: 403 when the UI is read-only, 401 without a valid token, 403 without the CSRF token.
"""

from __future__ import annotations

import functools
import hmac
import secrets
from collections.abc import Callable
from typing import Any, TypeVar, cast

from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, session, url_for

bp = Blueprint("auth", __name__)
F = TypeVar("F", bound=Callable[..., Any])
CSRF_KEY = "csrf_token"


def token_configured() -> bool:
    return bool(current_app.config.get("UI_TOKEN"))


def _token_matches(given: str | None) -> bool:
    expected = current_app.config.get("UI_TOKEN")
    return bool(expected and given) and hmac.compare_digest(str(given).encode(), str(expected).encode())


def csrf_token() -> str:
    """This session's CSRF token (made on first use)."""
    if CSRF_KEY not in session:
        session[CSRF_KEY] = secrets.token_urlsafe(32)
    return str(session[CSRF_KEY])


def _csrf_ok() -> bool:
    given = request.form.get(CSRF_KEY) or request.headers.get("X-CSRF-Token")
    expected = session.get(CSRF_KEY)
    return bool(given and expected) and hmac.compare_digest(str(given).encode(), str(expected).encode())


def _bearer() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def signed_in() -> bool:
    return token_configured() and bool(session.get("authed"))


def action_required(view: F) -> F:
    """Refuse the view unless the caller holds the token (bearer, or a signed-in session with its CSRF token)."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not token_configured():
            abort(403, "the UI is read-only: no token is configured (HUDI_META_UI_TOKEN)")
        bearer = _bearer()
        if bearer is not None:
            if not _token_matches(bearer):
                abort(401, "the token is not valid")
            return view(*args, **kwargs)
        if not session.get("authed"):
            abort(401, "sign in with the UI token first")
        if not _csrf_ok():
            abort(403, "the form's CSRF token is missing or does not match this session")
        return view(*args, **kwargs)

    return cast(F, wrapped)


@bp.app_context_processor
def auth_context() -> dict[str, Any]:
    return {"csrf_token": csrf_token, "token_configured": token_configured(), "signed_in": signed_in()}


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    if not token_configured():
        abort(403, "the UI is read-only: no token is configured (HUDI_META_UI_TOKEN)")
    if request.method == "POST":
        if not _csrf_ok():
            abort(403, "the form's CSRF token is missing or does not match this session")
        if not _token_matches(request.form.get("token")):
            return render_template("login.html", error="That is not the UI token."), 401
        session.clear()
        session["authed"] = True
        csrf_token()
        flash("Signed in: actions are enabled.")
        return redirect(url_for("tables.index"))
    return render_template("login.html", error=None)


@bp.post("/logout")
def logout() -> Any:
    if not _csrf_ok():
        abort(403, "the form's CSRF token is missing or does not match this session")
    session.clear()
    flash("Signed out.")
    return redirect(url_for("tables.index"))
