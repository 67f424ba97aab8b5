"""Scripted model APIs on loopback: the test plays the model of a real coding agent.

`MessagesAPI` speaks the Anthropic Messages API as Claude Code calls it (`POST
/v1/messages?beta=true`, `"stream": true`, answered as server-sent events); `ResponsesAPI`
speaks the OpenAI Responses API as the Codex CLI calls it (`POST <base_url>/responses`,
streamed); `GeminiAPI` speaks the Gemini API as the Gemini CLI calls it (`POST
/v1beta/models/<model>:streamGenerateContent?alt=sse`). Each records every request body it
gets, in order, and answers from a script: a list of steps, each the tool call to make next
(name, input) or the final text. The agent runs the tool and sends its result in the next
request; the script advances one step per main-loop request that carries the previous step's
result.

What the pinned binaries send (read from the recorded bodies):

- Claude Code 2.1.197: `POST /v1/messages?beta=true`, `stream: true`, no other request in `-p`
  (no title, no count_tokens). Body keys: model, messages, system (text blocks), tools (its own
  and `mcp__<server>__<tool>` with `input_schema`), metadata, max_tokens, thinking,
  context_management, output_config. In `messages`: the user turn (a system-reminder with
  CLAUDE.md, then the prompt), then a `"role": "system"` message holding the MCP servers'
  instructions and each hook's context as "<Event> hook additional context: <text>". A tool's
  result comes back as a `tool_result` whose content is the tool's `structuredContent` as a
  JSON string.
- Codex 0.169.0: `POST <base_url>/responses`, `stream: true`. Body keys: model, input,
  tools, tool_choice, parallel_tool_calls, reasoning, store, stream, include,
  prompt_cache_key, client_metadata. An MCP server's tools are one
  `{"type": "namespace", "name": "mcp__<server>", "description": <its instructions>,
  "tools": [{"type": "function", "name", "description", "strict": false, "parameters"}]}`;
  the model calls one with a `function_call` item carrying `namespace` and `name`. In
  `input`: developer messages, a user message with AGENTS.md ("# AGENTS.md instructions for
  <cwd>") and the environment, the prompt; the result comes back as a
  `function_call_output` whose `output` is "Wall time: ... seconds\nOutput:\n<the tool's
  structured result as JSON>" (a list of `input_text` items for an error).
- Gemini CLI 0.61.0 (`GOOGLE_GEMINI_BASE_URL`, API-key auth, a named model): `POST
  /v1beta/models/<model>:streamGenerateContent?alt=sse` with headers `x-goog-api-key` and
  `x-goog-api-client: google-genai-sdk/...`; nothing else in `-p`. Body keys: contents,
  systemInstruction, tools, generationConfig (temperature, topP, topK, thinkingConfig). `tools`
  is one `{"functionDeclarations": [...]}`: its own tools and `mcp_<server>_<tool>` with
  `name`, `description`, `parametersJsonSchema` (the server's inputSchema plus a
  `wait_for_previous` boolean of its own). In `contents`: a user turn holding the session
  context (date, workspace folders, a directory listing, the MCP servers' instructions) and
  the prompt; the model's `functionCall` (`id`, `name`, `args`) comes back in a model turn,
  its result in the next user turn as `{"functionResponse": {"id", "name", "response":
  {"output": <the tool's text content>}}}`. Each answer is a GenerateContentResponse, one
  `data:` event (no event names).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    """The model calls a tool (`name` as the agent names it to the model) with `input`."""

    name: str
    input: dict[str, Any]


@dataclass
class Recorded:
    path: str
    body: dict[str, Any]
    main: bool = False  # a main-loop request (the one the script answers)


Step = Call | str | Callable[[dict[str, Any]], Call | str]
"""A tool call, the final text, or (Claude Code's model) a function of the request body that
makes one: a call whose input comes from what the agent sent, such as a path its system prompt
names."""


@dataclass
class _Server:
    is_main: Callable[[dict[str, Any]], bool]
    script: list[Any]
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.httpd is not None
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def main_requests(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r.body for r in self.requests if r.main]

    def __enter__(self):
        handler = type("Handler", (_Handler,), {"api": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        assert self.httpd is not None
        self.httpd.shutdown()
        self.httpd.server_close()

    # what a subclass answers
    def answer(self, handler: _Handler, path: str, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def step(self, done: int) -> Any:
        """The script's step after `done` tool results; past its end, the last text."""
        return self.script[min(done, len(self.script) - 1)]


class _Handler(BaseHTTPRequestHandler):
    api: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.api.answer(self, self.path, {})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else {}
        self.api.answer(self, self.path, body)

    def send_json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_events(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        data = "".join(
            f"event: {name}\ndata: {json.dumps(value)}\n\n" for name, value in events
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_data_events(self, values: list[Any]) -> None:
        """Server-sent events with no event names: one `data: <json>` each."""
        data = "".join(f"data: {json.dumps(value)}\n\n" for value in values).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# ---- Anthropic Messages API (Claude Code)


def tools_of(body: dict[str, Any]) -> list[str]:
    return [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def tool_results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every tool_result block of the request's messages, by tool_use_id."""
    return {
        b["tool_use_id"]: b
        for m in body.get("messages") or []
        if m.get("role") == "user"
        for b in blocks(m)
        if b.get("type") == "tool_result"
    }


def tool_uses(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every tool_use block of the request's assistant turns, by id."""
    return {
        b["id"]: b
        for m in body.get("messages") or []
        if m.get("role") == "assistant"
        for b in blocks(m)
        if b.get("type") == "tool_use"
    }


def result_text(block: dict[str, Any]) -> str:
    """A tool_result's content as the model reads it (a string, or text blocks joined)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def text_of(body: dict[str, Any]) -> str:
    """Every text the request hands the model: system prompt and the messages' text blocks
    (tool results included)."""
    system = body.get("system")
    parts = [system] if isinstance(system, str) else [b.get("text", "") for b in system or []]
    for m in body.get("messages") or []:
        for b in blocks(m):
            parts.append(b.get("text", "") if b.get("type") == "text" else result_text(b))
    return "\n".join(parts)


def hook_context(body: dict[str, Any], event: str) -> str | None:
    """The `additionalContext` a hook of `event` gave, as Claude Code hands it to the model:
    a message of the request that reads "<event> hook additional context: <text>"."""
    marker = f"{event} hook additional context: "
    for m in body.get("messages") or []:
        for b in blocks(m):
            text = b.get("text", "") if b.get("type") == "text" else ""
            if marker in text:
                return text.split(marker, 1)[1]
    return None


class MessagesAPI(_Server):
    """Claude Code's model. A main-loop request is one that offers tools (the agent's own and
    its MCP servers'); the others (a session title, summaries, token counts) get a short
    text answer."""

    def __init__(self, script: list[Step]) -> None:
        super().__init__(is_main=lambda body: bool(body.get("tools")), script=script)

    def answer(self, handler: _Handler, path: str, body: dict[str, Any]) -> None:
        route = path.split("?")[0]
        if route.endswith("/count_tokens"):
            with self.lock:
                self.requests.append(Recorded(path, body))
            handler.send_json(200, {"input_tokens": len(json.dumps(body)) // 4})
            return
        if route != "/v1/messages":
            handler.send_json(404, {"type": "error", "error": {"type": "not_found_error"}})
            return
        main = self.is_main(body)
        with self.lock:
            self.requests.append(Recorded(path, body, main))
        if main:
            # a step per tool result of ours this conversation carries
            done = sum(1 for k in tool_results(body) if k.startswith("toolu_script_"))
            step = self.step(done)
            if callable(step):  # a step made from what the agent sent (a path it named)
                step = step(body)
        else:
            step = "Deploy question"
        model = body.get("model", "claude")
        events = self._events(model, step, done if main else 0)
        if body.get("stream"):
            handler.send_events(events)
        else:
            handler.send_json(200, self._message(model, step, done if main else 0))

    @staticmethod
    def _message(model: str, step: Call | str, n: int) -> dict[str, Any]:
        if isinstance(step, Call):
            content: dict[str, Any] = {
                "type": "tool_use",
                "id": f"toolu_script_{n}",
                "name": step.name,
                "input": step.input,
            }
        else:
            content = {"type": "text", "text": step}
        return {
            "id": f"msg_script_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [content],
            "stop_reason": "tool_use" if isinstance(step, Call) else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    @staticmethod
    def _events(model: str, step: Call | str, n: int) -> list[tuple[str, dict[str, Any]]]:
        message = {
            "id": f"msg_script_{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if isinstance(step, Call):
            start = {"type": "tool_use", "id": f"toolu_script_{n}", "name": step.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.input)}
            stop = "tool_use"
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step}
            stop = "end_turn"
        return [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": start},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]


# ---- OpenAI Responses API (Codex CLI)


def namespaces(body: dict[str, Any]) -> dict[str, list[str]]:
    """The request's namespace tools and the function tools each holds."""
    return {
        t["name"]: [f.get("name", "") for f in t.get("tools") or []]
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("type") == "namespace"
    }


def function_outputs(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The request's function_call_output items, by call_id."""
    return {
        item["call_id"]: item
        for item in body.get("input") or []
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    }


class ResponsesAPI(_Server):
    """Codex's model. A main-loop request is one that offers tools; a `Call` names a function
    tool inside the namespace `namespace` (an MCP server's tools, `mcp__<server>`)."""

    def __init__(self, script: list[Call | str], namespace: str = "mcp__memls") -> None:
        super().__init__(is_main=lambda body: bool(body.get("tools")), script=script)
        self.namespace = namespace

    def answer(self, handler: _Handler, path: str, body: dict[str, Any]) -> None:
        route = path.split("?")[0]
        if route.endswith("/models"):
            handler.send_json(200, {"object": "list", "data": []})
            return
        if not route.endswith("/responses"):
            handler.send_json(404, {"error": {"message": f"no route {route}"}})
            return
        main = self.is_main(body)
        with self.lock:
            self.requests.append(Recorded(path, body, main))
        done = sum(1 for k in function_outputs(body) if k.startswith("call_script_")) if main else 0
        step = self.step(done) if main else "Deploy question"
        handler.send_events(self._events(body.get("model", "model"), step, done))

    def _events(self, model: str, step: Call | str, n: int) -> list[tuple[str, dict[str, Any]]]:
        rid = f"resp_script_{n}"
        if isinstance(step, Call):
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_script_{n}",
                "call_id": f"call_script_{n}",
                "namespace": self.namespace,
                "name": step.name,
                "arguments": json.dumps(step.input),
                "status": "completed",
            }
            deltas: list[tuple[str, dict[str, Any]]] = []
        else:
            item = {
                "type": "message",
                "id": f"msg_script_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step, "annotations": []}],
            }
            deltas = [
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": step,
                    },
                )
            ]
        added = dict(item, status="in_progress")
        if not isinstance(step, Call):
            added["content"] = []
        response = {"id": rid, "object": "response", "model": model, "status": "in_progress"}
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        return [
            ("response.created", {"type": "response.created", "response": response}),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": added},
            ),
            *deltas,
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": dict(response, status="completed", output=[item], usage=usage),
                },
            ),
        ]


# ---- Gemini API (Gemini CLI)


def declarations(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The request's function declarations (every `tools` entry's), by name."""
    return {
        d["name"]: d
        for t in body.get("tools") or []
        if isinstance(t, dict)
        for d in t.get("functionDeclarations") or []
    }


def function_responses(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The functionResponse parts of the request's user turns, by id."""
    return {
        part["functionResponse"].get("id", ""): part["functionResponse"]
        for c in body.get("contents") or []
        if c.get("role") == "user"
        for part in c.get("parts") or []
        if isinstance(part, dict) and "functionResponse" in part
    }


class GeminiAPI(_Server):
    """Gemini CLI's model: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, each
    answer a GenerateContentResponse as one server-sent `data:` event (`:generateContent`,
    unstreamed, gets the same object as JSON). A main-loop request is one that offers
    function declarations; a `Call` is answered with a `functionCall` part whose `id` the
    binary hands back on the `functionResponse` that carries the result."""

    def __init__(self, script: list[Call | str]) -> None:
        super().__init__(is_main=lambda body: bool(declarations(body)), script=script)

    def answer(self, handler: _Handler, path: str, body: dict[str, Any]) -> None:
        route = path.split("?")[0]
        prefix = "/v1beta/models/"
        model, _, method = route.removeprefix(prefix).partition(":")
        if not route.startswith(prefix) or method not in (
            "streamGenerateContent",
            "generateContent",
        ):
            handler.send_json(404, {"error": {"code": 404, "message": f"no route {route}"}})
            return
        main = self.is_main(body)
        with self.lock:
            self.requests.append(Recorded(path, body, main))
        done = sum(1 for k in function_responses(body) if k.startswith("call_script_"))
        step = self.step(done) if main else "Deploy question"
        response = self._response(model, step, done)
        if method == "streamGenerateContent":
            handler.send_data_events([response])
        else:
            handler.send_json(200, response)

    @staticmethod
    def _response(model: str, step: Call | str, n: int) -> dict[str, Any]:
        if isinstance(step, Call):
            part: dict[str, Any] = {
                "functionCall": {"id": f"call_script_{n}", "name": step.name, "args": step.input}
            }
        else:
            part = {"text": step}
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": model,
            "responseId": f"resp_script_{n}",
        }
