"""Model Context Protocol: a server that exposes the skill catalog to MCP clients
(:mod:`.server`, :mod:`.catalog`, :mod:`.changes`; its stdio transport, which answers
malformed lines, in :mod:`.stdio`, with the answers themselves in :mod:`.malformed`;
its tool arguments and their errors in :mod:`.arguments`) and a client that brings
configured MCP servers' tools into skilldeck (:mod:`.client`)."""
