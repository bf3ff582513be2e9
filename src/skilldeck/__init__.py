"""skilldeck: a Python runtime for Agent Skills.

The public names are re-exported in ``skilldeck.api`` and pinned by a test; this
module stays import-light so the CLI starts fast.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
