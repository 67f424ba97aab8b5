"""memls: a local-first project memory for coding agents."""

import os as _os

__version__ = "0.1.0"

#: Set here, in the package every memls process imports first (the `memls` command, `python -m
#: memls`, the hook client), before any dependency is imported, over whatever the environment
#: said, and inherited by every process memls starts (docs/privacy.md). onnxruntime's Linux build
#: carries Microsoft's 1DS telemetry: 9 s after `import onnxruntime` it resolves
#: mobile.events.data.microsoft.com (again at about 15, 23 and 44 s) unless this variable is set
#: when onnxruntime is imported; `onnxruntime.disable_telemetry_events()` does not stop it.
SILENT_ENVIRONMENT = {"ORT_DISABLE_TELEMETRY": "1"}
_os.environ.update(SILENT_ENVIRONMENT)
