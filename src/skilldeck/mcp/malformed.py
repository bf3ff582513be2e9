"""What ``skilldeck mcp serve`` answers on stdio to a line that is no JSON-RPC message.

JSON-RPC 2.0 says a line that is not JSON gets ``-32700 Parse error`` and a JSON value
that is not a request gets ``-32600 Invalid Request`` (with the request's id when one
can be read, else a null id). On top of that:

* JSON the SDK's parser refuses although :mod:`json` reads it (a lone surrogate
  escape such as ``\\ud800``, nesting deeper than it reads) is a parse error too;
* a request whose id MCP does not allow (``1.5``, ``true``, ``null``), which the SDK
  takes for a notification, is ``-32600`` with a null id;
* a malformed *response* (a ``result`` or ``error`` and no ``method``) is logged and
  never answered: JSON-RPC answers no response;
* an answer only ever carries an id it can write as UTF-8 (:func:`writable`).

The transport that pairs lines with these answers is :mod:`.stdio`.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from skilldeck.mcp.arguments import json_kind

log = logging.getLogger(__name__)

REQUEST_SHAPE = 'a request is {"jsonrpc": "2.0", "id": 1, "method": "...", "params": {...}}'


def reply_to_malformed(line: str, rejected: BaseException | None = None) -> JSONRPCError | None:
    """The JSON-RPC error answering ``line``, a line that is not a JSON-RPC message
    (``rejected``: why the SDK's parser refused it, when known). None when the line
    is not answered: a blank line, or a malformed response (logged)."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except RecursionError:
        return _parse_error("the line nests arrays or objects too deeply")
    except ValueError as e:
        where = f" ({e.msg} at column {e.colno})" if isinstance(e, json.JSONDecodeError) else ""
        return _parse_error(f"the line is not JSON{where}")
    unreadable = _unreadable_json(value, rejected)
    if unreadable:
        return _parse_error(unreadable)
    if _is_response(value):
        log.warning("ignored a malformed response from the client (id %r)", _readable_id(value))
        return None
    return invalid_request(_request_problem(value), _readable_id(value))


def has_id(line: str) -> bool:
    """Whether ``line`` is a JSON object with an ``"id"`` (the SDK reads one whose id
    MCP does not allow as a notification, which is never answered)."""
    if '"id"' not in line:  # the quick test first
        return False
    value = _parsed(line)
    return isinstance(value, dict) and "id" in value


def reply_to_misread_request(line: str) -> JSONRPCError:
    """The ``-32600`` answering ``line``, which has an id MCP does not allow (``1.5``,
    ``true``, ``null``): a request that would otherwise never be answered."""
    return invalid_request(_request_problem(_parsed(line)), None)


def invalid_request(problem: str, rid: str | int | None = None) -> JSONRPCError:
    """``-32600 Invalid Request: <problem>; a request is {…}.``"""
    return error(rid, INVALID_REQUEST, f"Invalid Request: {problem}; {REQUEST_SHAPE}.")


def error(rid: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message))


def writable(reply: JSONRPCError) -> JSONRPCError:
    """``reply``, or, when it cannot be written as the SDK writes it, the same error
    with a null id (the SDK's writer ends serving when it fails)."""
    try:
        reply.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # pydantic_core.PydanticSerializationError
        log.warning("the answer's id %r cannot be written; answering with a null id", reply.id)
        return error(None, reply.error.code, reply.error.message)
    return reply


def _parse_error(what: str) -> JSONRPCError:
    return error(None, PARSE_ERROR, f"Parse error: {what}; send one JSON-RPC message per line.")


def _parsed(line: str) -> Any:
    try:
        return json.loads(line)
    except (RecursionError, ValueError):
        return None


def _unreadable_json(value: Any, rejected: BaseException | None) -> str | None:
    """Why the SDK's JSON parser, stricter than :mod:`json`, refused ``value``'s line
    (a lone surrogate, nesting deeper than it reads); None when it did not."""
    if _holds_lone_surrogate(value):
        return "the line holds a lone surrogate escape (\\ud800 to \\udfff), not valid Unicode"
    if not isinstance(rejected, ValidationError):
        return None
    for problem in rejected.errors(include_url=False):
        if problem["type"] == "json_invalid":
            detail = str(problem["msg"]).removeprefix("Invalid JSON: ")
            return f"the line is not JSON this server can read ({detail})"
    return None


def _holds_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (RecursionError, ValueError):
        return False
    return False


def _is_response(value: Any) -> bool:
    """``value`` (parsed JSON) has a response's shape: a result or error, no method."""
    if not isinstance(value, dict) or "method" in value:
        return False
    return "result" in value or "error" in value


def _request_problem(value: Any) -> str:
    """What makes ``value`` (parsed JSON) no JSON-RPC 2.0 message, in a few words."""
    if isinstance(value, list):
        return "batches (JSON arrays) are not supported by MCP, send each message on its own line"
    if not isinstance(value, dict):
        return f"the message is {json_kind(value)}, not a JSON object"
    if value.get("jsonrpc") != "2.0":
        return 'the message needs "jsonrpc": "2.0"'
    if "id" in value and _readable_id(value) is None:
        return '"id" must be a string or an integer'
    if "method" in value and not isinstance(value["method"], str):
        return '"method" must be a string'
    if "params" in value and not isinstance(value["params"], dict):
        return '"params" must be a JSON object'
    if "method" not in value:
        return 'the message has no "method" (and is no valid response either)'
    return "the message does not match any JSON-RPC message shape"


def _readable_id(value: Any) -> str | int | None:
    """The message's id when an answer can carry it: an integer, or a string that can
    be written as UTF-8 (not one holding a lone surrogate)."""
    rid = value.get("id") if isinstance(value, dict) else None
    if isinstance(rid, str):
        try:
            rid.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return rid
    return rid if isinstance(rid, int) and not isinstance(rid, bool) else None
