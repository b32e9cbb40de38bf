"""What several hosts build on: the shape of their facts, the base driver and the Claude-style
dialect, the manifest machinery, and the OpenCode plugin API Kilo shares."""
