"""What an agent's model sees: the MCP tools (their table and schemas, from the `memls.protocol`
Structs), what each call does on the engine handle, the lean results and their text, the
briefing as a prompt and resources. The owner runs the calls (`calls`, answering `$/mcp` of
the light `memls mcp` relay); nothing here imports the engine or the MCP SDK."""
