"""Compatibility with other Agent Skills libraries: :mod:`.skills_ref` is a drop-in
replacement for the reference library ``skills-ref`` (``from skilldeck.compat import
skills_ref``), with identical results."""
