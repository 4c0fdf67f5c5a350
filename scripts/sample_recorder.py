"""The session recorder behind the sample generator: messages, call ids, a seeded clock, Anthropic-
style usage sized from the local estimate, and simulated tools (Read, Edit, Write, Grep, Glob,
TodoWrite) over an in-memory project so every output agrees with the files the agent edits."""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Any

from iris.session import (
    Message,
    ModelLimits,
    Session,
    SessionHeader,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
)
from iris.tokens import default_estimator

#: Claude Code's system prompt and tool schemas are sent with every request (cached).
SYSTEM_OVERHEAD = 14_250


class Recorder:
    """Builds a session message by message, with consistent call ids, clock and usage."""

    def __init__(self, seed: int, start: datetime, model: str, *, files: dict[str, str] | None = None,
                 root: str = "/home/dev/project") -> None:
        self.rng = random.Random(seed)
        self.clock = start
        self.model = model
        self.files = dict(files or {})
        self.root = root
        self.messages: list[Message] = []
        self.tool_output_tokens = 0
        self._est = default_estimator()
        self._conversation_tokens = 0
        self._last_prompt = 0
        self._calls = 0
        self._pending: list[tuple[str, str, dict[str, Any]]] = []

    # ---- clock, ids, usage
    def _tick(self, lo: float, hi: float) -> datetime:
        self.clock += timedelta(seconds=round(self.rng.uniform(lo, hi), 3))
        return self.clock

    def _call_id(self) -> str:
        self._calls += 1
        alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
        return "toolu_01" + "".join(self.rng.choice(alphabet) for _ in range(22))

    def _usage(self, reply: Message) -> Usage:
        prompt = SYSTEM_OVERHEAD + round(self._conversation_tokens * 1.07)
        uncached = self.rng.randint(3, 12)
        read = min(self._last_prompt, prompt - uncached)
        write = prompt - uncached - read
        output = round(self._est.message_tokens(reply) * 1.1) + self.rng.randint(20, 240)
        self._last_prompt = prompt
        raw = {"input_tokens": uncached, "cache_creation_input_tokens": write,
               "cache_read_input_tokens": read, "output_tokens": output, "service_tier": "standard"}
        return Usage(input_tokens=uncached, output_tokens=output, cache_read_tokens=read,
                     cache_write_tokens=write, model=self.model, raw=raw)

    def _add(self, message: Message) -> None:
        self.messages.append(message)
        self._conversation_tokens += self._est.message_tokens(message)

    # ---- messages
    def system(self, text: str) -> None:
        self._add(Message(role="system", content=(TextBlock(text=text),), timestamp=self._tick(0, 0),
                          synthetic=True))

    def user(self, text: str, *, synthetic: bool = False) -> None:
        self._add(Message(role="user", content=(TextBlock(text=text),), timestamp=self._tick(5, 40),
                          synthetic=synthetic))

    def assistant(self, text: str = "", *calls: tuple[str, dict[str, Any]], thinking: str = "",
                  usage: bool = True) -> list[str]:
        """One response; returns the call ids. Results come from :meth:`run_tools`."""
        blocks: list[Any] = []
        if thinking:
            blocks.append(ThinkingBlock(text=thinking, signature=f"sig-{len(self.messages)}"))
        if text:
            blocks.append(TextBlock(text=text))
        ids = []
        for name, args in calls:
            cid = self._call_id()
            ids.append(cid)
            blocks.append(ToolCallBlock(id=cid, name=name, arguments=args))
            self._pending.append((cid, name, args))
        reply = Message(role="assistant", content=tuple(blocks), model=self.model,
                        id=f"msg_{len(self.messages):04d}{self.rng.randrange(16**8):08x}",
                        timestamp=self._tick(2, 25))
        if usage:
            reply = reply.model_copy(update={"usage": self._usage(reply)})
        self._add(reply)
        return ids

    def run_tools(self, *overrides: tuple[str, bool] | None) -> None:
        """Answer every pending call (one tool message each); ``overrides[i]`` replaces the
        computed output of call i with ``(text, is_error)``."""
        pending, self._pending = self._pending, []
        for i, (cid, name, args) in enumerate(pending):
            override = overrides[i] if i < len(overrides) else None
            text, is_error = override if override is not None else self._execute(name, args)
            self.tool_output_tokens += self._est.count(text)
            self._add(Message(role="tool", timestamp=self._tick(0.2, 6), content=(
                ToolResultBlock(call_id=cid, text=text, is_error=is_error),)))

    # ---- simulated tools over the in-memory project
    def _rel(self, path: str) -> str:
        return path.removeprefix(self.root + "/")

    def _execute(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        if name == "Read":
            rel = self._rel(args["file_path"])
            if rel not in self.files:
                return f"<tool_use_error>File does not exist: {args['file_path']}</tool_use_error>", True
            lines = self.files[rel].splitlines()
            start = args.get("offset", 1)
            chosen = lines[start - 1:start - 1 + args.get("limit", 2000)]
            return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(chosen, start)), False
        if name == "Edit":
            rel = self._rel(args["file_path"])
            if args["old_string"] not in self.files.get(rel, ""):
                return ("<tool_use_error>String to replace not found in file.\nString: "
                        f"{args['old_string']}</tool_use_error>"), True
            self.files[rel] = self.files[rel].replace(args["old_string"], args["new_string"], 1)
            return f"The file {args['file_path']} has been updated successfully.", False
        if name == "Write":
            self.files[self._rel(args["file_path"])] = args["content"]
            return f"File created successfully at: {args['file_path']}", False
        if name == "Grep":
            return self._grep(args), False
        if name == "Glob":
            pattern = args["pattern"].replace(".", r"\.").replace("**/", "(.*/)?").replace("*", "[^/]*")
            hits = sorted(f for f in self.files if re.fullmatch(pattern, f))
            return "\n".join(f"{self.root}/{h}" for h in hits) or "No files found", False
        if name == "TodoWrite":
            return ("Todos have been modified successfully. Ensure that you continue to use the todo list "
                    "to track your progress. Please proceed with the current tasks if applicable"), False
        raise ValueError(f"no simulated output for {name}; pass an override")

    def _grep(self, args: dict[str, Any]) -> str:
        rx = re.compile(args["pattern"])
        glob = args.get("glob", "")
        out = []
        for rel in sorted(self.files):
            if glob and not rel.endswith(glob.lstrip("*")):
                continue
            for n, line in enumerate(self.files[rel].splitlines(), 1):
                if rx.search(line):
                    out.append(f"{self.root}/{rel}:{n}:{line}")
        return "\n".join(out) if out else "No matches found"

    def session(self, session_id: str, title: str, limits: ModelLimits, **extra: Any) -> Session:
        first_model = next((m.model for m in self.messages if m.model), self.model)
        header = SessionHeader(session_id=session_id, title=title, model=first_model, limits=limits,
                               workspace_root=self.root, created_at=self.messages[0].timestamp)
        return Session(header=header, messages=tuple(self.messages), **extra)
