"""Placeholder printer (replaced by the TVMScript printer)."""


def script(node) -> str:
    return f"<{type(node).__name__}>"
