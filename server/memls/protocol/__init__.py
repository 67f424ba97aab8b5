"""Wire types: every message that crosses a process boundary, defined once as msgspec Structs.

memory/* params and results (`requests`, `conflicts`, `agents`: the briefing and promote), the
records they carry (`records`), notifications, the owner socket's own messages (`owner`), and
the scorer's verdict. Python
attributes are snake_case; on the wire (JSON, CLI --json, LSP, the owner socket) fields are
camelCase. Fronts build params with `parse(Type, data)`, which validates and names the bad field.
`schemas/` is generated from these (`memls schemas --out schemas`).
"""

from memls.protocol.agents import *  # noqa: F403
from memls.protocol.base import *  # noqa: F403
from memls.protocol.base import MEMORY_TYPES, SourceRange, Wire  # noqa: F401
from memls.protocol.citations import *  # noqa: F403
from memls.protocol.codec import encode_json, parse, to_wire  # noqa: F401
from memls.protocol.conflicts import *  # noqa: F403
from memls.protocol.findings import *  # noqa: F403
from memls.protocol.imports import *  # noqa: F403
from memls.protocol.methods import METHODS, NOTIFICATIONS, Method  # noqa: F401
from memls.protocol.owner import *  # noqa: F403
from memls.protocol.records import *  # noqa: F403
from memls.protocol.requests import *  # noqa: F403
from memls.protocol.watching import *  # noqa: F403
