"""Which project a request is about: explicit, else the workspace folder of its document,
else the only workspace folder; never a default that spans projects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pygls import uris

from memls.errors import InvalidInput
from memls.scope import folder_path, project_key


@dataclass(frozen=True)
class Folder:
    uri: str
    path: Path

    @property
    def project(self) -> str:
        """The folder's stable, non-empty key: its absolute path."""
        return str(self.path)


def folder_of(uri: str) -> Folder | None:
    path = folder_path(uri)
    return None if path is None else Folder(uri=uri, path=path)


class Projects:
    def __init__(self) -> None:
        self.folders: list[Folder] = []

    def set(self, folder_uris: list[str]) -> None:
        found = [f for f in (folder_of(u) for u in folder_uris) if f is not None]
        # longest first: a nested folder wins over its parent
        self.folders = sorted(found, key=lambda f: len(f.path.parts), reverse=True)

    def containing(self, uri: str) -> Folder | None:
        path = uris.to_fs_path(uri)
        if not path:
            return None
        target = Path(path).resolve()
        for folder in self.folders:
            if target == folder.path or folder.path in target.parents:
                return folder
        return None

    def resolve(self, params: dict) -> str:
        """The project for a request's params (`project`, else `uri`, else the only folder)."""
        explicit = params.get("project")
        if explicit is not None:
            return project_key(explicit)
        uri = params.get("uri")
        if uri is not None:
            if not isinstance(uri, str):
                raise InvalidInput("must be a document URI", field="uri")
            folder = self.containing(uri)
            if folder is None:
                raise InvalidInput(f"{uri} is in no workspace folder; name a project", field="uri")
            return folder.project
        if len(self.folders) == 1:
            return self.folders[0].project
        raise InvalidInput(
            "the request names no project and no document, and the workspace has "
            f"{len(self.folders)} folders: pass `project` or `uri`",
            field="project",
        )
