"""A stdio MCP server with no tools that writes down what its client said in `initialize`
(one JSON object, to the file named by its argument): what an agent declares to every MCP
server it starts, roots among its capabilities or not. Standard library only."""

from __future__ import annotations

import json
import sys


def main() -> None:
    out = sys.argv[1]
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            with open(out, "w") as f:
                json.dump(message.get("params"), f)
            result: dict = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "observer", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": []}
        elif ident is not None and method is not None:
            result = {}
        else:
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
