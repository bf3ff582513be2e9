"""Model Context Protocol: a server that exposes the skill catalog to MCP clients
(:mod:`.server`, :mod:`.catalog`) and a client that brings configured MCP servers'
tools into skilldeck (:mod:`.client`)."""
